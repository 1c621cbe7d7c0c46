"""One rank per Dask worker: a distributed training on a Dask cluster.

The ranks rendezvous at a free port of the first chosen worker's host. Each rank's task starts
the rank as a child process of its worker (as a local launch does), so a rank that crashes takes
no Dask worker down, and its failure comes back as that task's error, naming the rank.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urlparse

from heraldbench.platform.distributed._driver import RankJob
from heraldbench.platform.exceptions import DistributedError, SpecError

__all__ = ["choose_workers", "launch_on_dask"]

Progress = Callable[[int, int], None]


def choose_workers(client, world: int) -> list[str]:
    """``world`` worker addresses, the first hosting rank 0; refuses a cluster too small."""
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    if len(workers) < world:
        raise SpecError(
            f"train: the distributed backend needs {world} ranks (one per Dask worker) but the "
            f"cluster at {client.scheduler.address} has {len(workers)} worker(s); start more "
            "workers or lower cluster.workers"
        )
    return workers[:world]


def launch_on_dask(client, job_spec: dict, schedulers: list[int], world: int, timeout_s: float,
                   progress: Progress | None = None) -> list:  # fmt: skip
    """Run the ranks on ``client``'s cluster and return rank 0's outcomes."""

    from heraldbench.platform.distributed.launch import free_port

    workers = choose_workers(client, world)
    host = urlparse(workers[0]).hostname or "127.0.0.1"
    port = client.run(free_port, host, workers=[workers[0]])[workers[0]]
    job = asdict(RankJob(job_spec, schedulers, world, f"{host}:{port}"))
    futures = [
        client.submit(_dask_rank, job, rank, timeout_s, key=f"heraldbench-rank-{rank}-{port}",
                      workers=[address], allow_other_workers=False, pure=False, retries=0)
        for rank, address in enumerate(workers)
    ]  # fmt: skip
    try:
        return _first_failure_or_result(futures, workers)
    finally:
        client.cancel(futures)


def _first_failure_or_result(futures: list, workers: list[str]):
    """Rank 0's result once every rank is done; the first rank to fail raises at once."""
    from distributed import wait

    pending = list(futures)
    while pending:
        done = wait(pending, return_when="FIRST_COMPLETED").done
        for future in done:
            if future.status == "error":
                rank = futures.index(future)
                raise DistributedError(f"on {workers[rank]}: {future.exception()}")
        pending = [f for f in pending if f not in done]
    return futures[0].result()


def _dask_rank(job: dict, rank: int, timeout_s: float) -> list | None:
    """A Dask task: start rank ``rank`` as a child process and wait for it."""
    from heraldbench.platform.distributed.launch import _start, _watch, stop

    with tempfile.TemporaryDirectory(prefix=f"heraldbench-rank{rank}-") as folder:
        root = Path(folder)
        (root / "job.pkl").write_bytes(pickle.dumps(job))
        proc = _start(root, rank)
        try:
            _watch([proc], root, timeout_s, None, first_rank=rank)
        finally:
            stop([proc])
        return pickle.loads((root / "result.pkl").read_bytes()) if rank == 0 else None
