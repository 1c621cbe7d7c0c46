"""``python -m heraldbench.platform.distributed.worker FOLDER RANK``: one rank of a local launch.

Reads ``FOLDER/job.pkl``; writes a heartbeat (``beat-RANK``) as it trains, progress (rank 0),
``result.pkl`` (rank 0) or ``error-RANK.txt`` with the traceback, and exits 1 on failure.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import traceback
from pathlib import Path
from typing import NoReturn

__all__ = ["leave_finished", "main", "write_whole"]

#: Seconds between heartbeats; the watchdog allows the spec's timeout_s without one.
BEAT_S = 2.0


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` so that a reader sees the old file or the new one, never a part."""
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    os.replace(part, path)


def leave_finished(status: int) -> NoReturn:
    """End a rank's process whose outcome is written, without the interpreter's teardown: there
    torch's threads (gloo, autograd) occasionally abort a finished rank ("terminate called
    without an active exception": 1 in 15 probe runs here, and in full test runs a launched
    training rank and rank 1 of ``heraldbench train`` under torchrun)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _heartbeat(path: Path, stop: threading.Event) -> None:
    """Beat while the main thread lives (a rank stuck in a collective still beats: the
    process-group timeout catches that; a stopped or dead process does not)."""
    while not stop.wait(BEAT_S):
        path.touch()


def main(folder: str, rank_text: str) -> int:
    root, rank = Path(folder), int(rank_text)
    from heraldbench.platform.distributed._driver import RankJob, run_rank

    job = RankJob(**pickle.loads((root / "job.pkl").read_bytes()))
    (root / f"beat-{rank}").touch()
    stop = threading.Event()
    threading.Thread(target=_heartbeat, args=(root / f"beat-{rank}", stop), daemon=True).start()

    def progress(done: int, total: int) -> None:
        write_whole(root / "progress", f"{done} {total}".encode())

    try:
        outcomes = run_rank(job, rank, progress if rank == 0 else None)
    except BaseException:  # noqa: BLE001 - reported to the launcher, then exit 1
        (root / f"error-{rank}.txt").write_text(traceback.format_exc())
        return 1
    finally:
        stop.set()
    if rank == 0:
        write_whole(root / "result.pkl", pickle.dumps(outcomes))
    return 0


if __name__ == "__main__":
    leave_finished(main(*sys.argv[1:3]))  # the result (or the error) is written
