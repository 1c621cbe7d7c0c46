"""Starting the ranks of a distributed training, and watching them.

Locally, ``heraldbench train`` starts one process per rank (``python -m
heraldbench.platform.distributed.worker``) and rendezvouses them on a free loopback port; under
``torchrun`` (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` set) the process runs its
one rank itself. A watchdog turns a rank that dies or goes silent into a
:class:`~heraldbench.platform.exceptions.DistributedError` naming it, within the spec's
``timeout_s`` (a process-group timeout bounds every collective the same way), and stops the
other ranks: no orphans (ranks also die with the process that started them). With shaped links
(:mod:`.links`) each rank runs in a network namespace of its own and rendezvouses at rank 0's
shaped address; the namespaces are removed when the launch ends, however it ends.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict
from pathlib import Path

from heraldbench.platform.distributed._driver import RankJob, run_rank
from heraldbench.platform.distributed.links import Links, ShapedNetwork, shaped_network
from heraldbench.platform.exceptions import DistributedError

__all__ = ["free_port", "launch_local", "master_address", "rank_network", "rank_placement",
           "run_from_environment", "torchrun_rank"]

Progress = Callable[[int, int], None]
#: Seconds a stopped rank is given to exit after SIGTERM before SIGKILL.
GRACE_S = 5.0
#: A live rank without a heartbeat for this long, when another rank fails, is named as the cause.
STALLED_S = 6.0
#: Seconds a rank may take to start (imports) before its first heartbeat.
START_S = 120.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def torchrun_rank() -> tuple[int, int, str] | None:
    """(rank, world, master) from torchrun's environment variables, or None."""
    names = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    if not all(n in os.environ for n in names):
        return None
    master = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), master


def run_from_environment(spec: dict, schedulers: list[int], progress: Progress | None = None):
    """Run this process's rank as torchrun set it up; rank 0 returns the outcomes."""
    rank, world, master = torchrun_rank()  # type: ignore[misc]
    return run_rank(RankJob(spec, schedulers, world, master), rank, progress)


def launch_local(job_spec: dict, schedulers: list[int], world: int, timeout_s: float,
                 progress: Progress | None = None, threads: int | None = None,
                 links: Links | None = None, entry: str = ""):  # fmt: skip
    """Start ``world`` rank processes on this machine and return rank 0's outcomes; with
    ``links``, each rank in its own network namespace on shaped links (:mod:`.links`); with
    ``entry``, each rank runs that function instead of the schedulers' training
    (``RankJob.entry``)."""
    if threads is None:
        threads = max(1, (os.cpu_count() or 1) // world)
    with rank_network(links, world) as network, \
            tempfile.TemporaryDirectory(prefix="heraldbench-ranks-") as folder:  # fmt: skip
        job = RankJob(job_spec, schedulers, world, master_address(network), threads=threads,
                      entry=entry)
        root = Path(folder)
        (root / "job.pkl").write_bytes(pickle.dumps(asdict(job)))
        procs: list[subprocess.Popen] = []
        try:
            procs.extend(_start(root, rank, network) for rank in range(world))
            _watch(procs, root, timeout_s, progress)
        finally:
            stop(procs)
        return pickle.loads((root / "result.pkl").read_bytes())


def rank_network(links: Links | None, world: int) -> AbstractContextManager[ShapedNetwork | None]:
    """The shaped namespaces of ``links`` (removed on exit), or None: loopback."""
    return nullcontext() if links is None else shaped_network(links, world)


def master_address(network: ShapedNetwork | None) -> str:
    """Where the ranks rendezvous: rank 0's shaped address, or a free loopback port."""
    return f"127.0.0.1:{free_port()}" if network is None else network.master()


def rank_placement(network: ShapedNetwork | None, rank: int) -> dict:
    """``Popen`` arguments that put a rank in its namespace (if any) and kill it with its
    parent."""
    if network is None:
        return {"preexec_fn": _die_with_parent, "env": {**os.environ, "PYTHONUNBUFFERED": "1"}}
    return {"preexec_fn": network.enter(rank, then=_die_with_parent),
            "env": {**os.environ, "PYTHONUNBUFFERED": "1", **network.environment()}}


def _start(root: Path, rank: int, network: ShapedNetwork | None = None) -> subprocess.Popen:
    with open(root / f"rank-{rank}.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "heraldbench.platform.distributed.worker", str(root), str(rank)],
            stdout=log, stderr=subprocess.STDOUT, **rank_placement(network, rank),
        )  # fmt: skip


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the rank gets SIGKILL when the process that started it dies."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _watch(procs: list[subprocess.Popen], root: Path, timeout_s: float,
           progress: Progress | None, first_rank: int = 0) -> None:  # fmt: skip
    """Wait for every rank (``procs[i]`` runs rank ``first_rank + i``); raise on the first that
    fails or stays silent too long."""
    ranks = list(range(first_rank, first_rank + len(procs)))
    while True:
        codes = {rank: p.poll() for rank, p in zip(ranks, procs, strict=True)}
        failed = [r for r, code in codes.items() if code not in (None, 0)]
        if failed:
            quiet = [r for r in _silent_ranks(root, ranks, STALLED_S) if codes[r] is None]
            cause = (f"rank {quiet[0]} stopped responding (no heartbeat for {STALLED_S:g} s), "
                     "and the others failed waiting for it; ") if quiet else ""  # fmt: skip
            raise DistributedError(cause + describe_failure(root, failed, codes))
        if all(code == 0 for code in codes.values()):
            return
        silent = _silent_ranks(root, ranks, timeout_s)
        if silent:
            log = _tail(root / f"rank-{silent[0]}.log")
            raise DistributedError(
                f"rank {silent[0]} stopped responding (no heartbeat for {timeout_s:g} s: hung or "
                "stopped); the run was stopped" + (f". Its log: {log}" if log else "")
            )
        _report(root, progress)
        time.sleep(0.2)


def describe_failure(root: Path, failed: list[int], codes: dict[int, int | None]) -> str:
    """Which rank failed first, and how: a signal (preferred: the others fail because of it), or
    its error."""
    first = min(failed, key=lambda r: (codes[r] >= 0, r))  # type: ignore[operator]
    code = int(codes[first])  # type: ignore[arg-type]
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    error = root / f"error-{first}.txt"
    if error.exists():
        detail = error.read_text().strip().splitlines()[-1]
    else:
        detail = _tail(root / f"rank-{first}.log") or "(its log is empty)"
    return f"rank {first} {how}: {detail}"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def _silent_ranks(root: Path, ranks: list[int], timeout_s: float) -> list[int]:
    """Ranks whose heartbeat file is older than ``timeout_s`` (plus start-up grace)."""
    now, silent = time.time(), []
    for rank in ranks:
        beat = root / f"beat-{rank}"
        since = beat.stat().st_mtime if beat.exists() else (root / "job.pkl").stat().st_mtime
        if now - since > timeout_s + (0 if beat.exists() else START_S):
            silent.append(rank)
    return silent


def _report(root: Path, progress: Progress | None) -> None:
    if progress is None:
        return
    try:
        done, total = (int(x) for x in (root / "progress").read_text().split())
    except (OSError, ValueError):
        return
    progress(done, total)


def stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM every live rank, then SIGKILL what is left after :data:`GRACE_S`."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        p.terminate()
    deadline = time.monotonic() + GRACE_S
    for p in live:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
