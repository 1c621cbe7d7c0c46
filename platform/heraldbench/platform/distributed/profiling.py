"""``heraldbench profile-cluster``: measure the cluster inside a real process group and write a
hardware profile the time model accepts (:mod:`heraldbench.platform.timeprofile`).

Ranks start as the trainer's do: processes on this machine (``python -m
heraldbench.platform.distributed.profiling FOLDER RANK``, rendezvous on a free loopback port, the
trainer's threads per rank, a watchdog), or one per worker of a Dask cluster. What each rank
measures is :mod:`._probe`.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.distributed.links import Links
from heraldbench.platform.distributed.worker import leave_finished, write_whole
from heraldbench.platform.exceptions import DistributedError, SpecError
from heraldbench.platform.timeprofile import FORMAT, VERSION, fit_link

__all__ = ["options_for", "profile_cluster", "profile_document"]

#: Without a spec: the DLRM reference's embedding dim and a typical per-worker batch.
DEFAULTS = {"model": "reference", "embedding_dim": 16, "batch_size": 256, "num_dense": 13,
            "num_sparse": 26, "bytes_per_value": 4}  # fmt: skip


def options_for(spec=None) -> dict[str, Any]:
    """What to measure: the spec's model, dim, per-worker batch, dtype and dataset shape."""
    if spec is None:
        return dict(DEFAULTS)
    from heraldbench.platform.spec import TrainSpec

    settings = spec.train or TrainSpec()
    trace = spec.dataset.open()
    return {"model": settings.model, "embedding_dim": spec.embedding_dim,
            "batch_size": spec.cluster.batch_size, "num_dense": trace.num_dense,
            "num_sparse": trace.layout.num_tables,
            "bytes_per_value": 8 if settings.dtype == "float64" else 4}  # fmt: skip


def run_probe_rank(options: dict[str, Any], rank: int, world: int, master: str,
                   threads: int | None) -> dict[str, Any]:  # fmt: skip
    """Join the process group as ``rank`` and measure; every rank returns the same result."""
    import torch.distributed as dist

    from heraldbench.platform.distributed._probe import probe
    from heraldbench.platform.train.runtime import configure_threads

    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))  # fmt: skip
    try:
        configure_threads(threads=threads, reserve=1)
        result = probe(options)
        hosts: list[Any] = [None] * world
        dist.all_gather_object(hosts, platform.node())
        return result | {"hosts": hosts, "threads_per_rank": threads}
    finally:
        dist.destroy_process_group()


def profile_cluster(options: dict[str, Any], ranks: int, scheduler_address: str | None = None,
                    timeout_s: float = 300.0, links: Links | None = None) -> dict[str, Any]:  # fmt: skip
    """Measure ``ranks`` ranks (here, or on the Dask cluster) and return the profile document;
    with ``links``, the local ranks sit on shaped links (:mod:`.links`) and those are measured."""
    if ranks < 2:
        raise SpecError(f"--ranks: profiling needs at least 2 ranks, got {ranks}")
    if scheduler_address is not None:
        if links is not None:
            raise SpecError("--link shapes ranks started on this machine; a Dask cluster's "
                            "ranks run on its own network (drop --link or --scheduler-address)")  # fmt: skip
        result = _on_dask(options, ranks, scheduler_address)
    else:
        result = _local(options, ranks, timeout_s, links)
    document = profile_document(result, options, ranks)
    if links is not None:
        document["provenance"]["links"] = links.describe()
        document["name"] = f"{document['name']}-shaped"
    return document


def _local(options: dict[str, Any], world: int, timeout_s: float,
           links: Links | None = None) -> dict[str, Any]:  # fmt: skip
    from heraldbench.platform.distributed.launch import (
        master_address,
        rank_network,
        rank_placement,
        stop,
    )

    threads = max(1, (os.cpu_count() or 1) // world)  # as launch_local gives the trainer's ranks
    with rank_network(links, world) as network, \
            tempfile.TemporaryDirectory(prefix="heraldbench-profile-") as folder:  # fmt: skip
        hosts = None if links is None else [r // links.ranks_per_host for r in range(world)]
        job = {"options": options | {"hosts": hosts}, "world": world,
               "master": master_address(network), "threads": threads}  # fmt: skip
        root = Path(folder)
        (root / "job.json").write_text(json.dumps(job))
        logs = [open(root / f"rank-{rank}.log", "wb") for rank in range(world)]  # noqa: SIM115
        procs: list[subprocess.Popen] = []
        try:
            procs.extend(subprocess.Popen(
                [sys.executable, "-m", "heraldbench.platform.distributed.profiling", folder,
                 str(rank)], stdout=logs[rank], stderr=subprocess.STDOUT,
                **rank_placement(network, rank)) for rank in range(world))  # fmt: skip
            _wait(procs, root, timeout_s)
        finally:
            stop(procs)
            for log in logs:
                log.close()
        return json.loads((root / "result.json").read_text())


def _wait(procs: list[subprocess.Popen], root: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while any(p.poll() is None for p in procs):
        failed = [r for r, p in enumerate(procs) if p.poll() not in (None, 0)]
        if failed or time.monotonic() > deadline:
            rank = failed[0] if failed else next(r for r, p in enumerate(procs) if p.poll() is None)
            log = (root / f"rank-{rank}.log").read_text(errors="replace").strip().splitlines()
            how = "failed" if failed else f"did not finish within {timeout_s:g} s"
            raise DistributedError(f"profile-cluster: rank {rank} {how}: {' | '.join(log[-3:])}")
        time.sleep(0.1)
    failed = [r for r, p in enumerate(procs) if p.returncode != 0]
    if failed:
        raise DistributedError(f"profile-cluster: rank {failed[0]} exited with "
                               f"{procs[failed[0]].returncode}")  # fmt: skip


def _on_dask(options: dict[str, Any], world: int, address: str) -> dict[str, Any]:
    """One rank per Dask worker, run inside the worker process (rendezvous at the first)."""
    from urllib.parse import urlparse

    from distributed import Client

    from heraldbench.platform.distributed.dask_launch import choose_workers
    from heraldbench.platform.distributed.launch import free_port

    with Client(address, timeout="10s") as client:
        workers = choose_workers(client, world)
        host = urlparse(workers[0]).hostname or "127.0.0.1"
        port = client.run(free_port, host, workers=[workers[0]])[workers[0]]
        futures = [client.submit(run_probe_rank, options, rank, world, f"{host}:{port}", None,
                                 workers=[w], allow_other_workers=False, pure=False)
                   for rank, w in enumerate(workers)]  # fmt: skip
        return client.gather(futures)[0]


def profile_document(result: dict[str, Any], options: dict[str, Any], ranks: int) -> dict[str, Any]:
    """The YAML document of a measurement: fits, compute, trainer terms, provenance, sweep.

    What the time model charges comes from the trainer's loop (:mod:`._probe_loop`), not from
    back-to-back calls, which run in lockstep and under-price training (see there): the rounds
    (``exchange``) are fitted on the loop's pull and push rounds, the all-reduce's latency is the
    loop's all-reduce less its payload at the swept bandwidth, and compute is the loop's.
    """
    import torch

    sweep = result["sweep"]
    fits = {name: fit_link(*zip(*sweep[key], strict=True)).model_dump()
            for name, key in (("point_to_point", "send_recv"), ("all_to_all", "all_to_all"),
                              ("all_reduce", "all_reduce"), ("exchange", "round"))}  # fmt: skip
    fits["all_reduce"] = _in_iteration(fits["all_reduce"], sweep["iteration_allreduce"])
    if sweep.get("send_recv_intra"):  # two ranks share rank 0's host: the tier inside a host
        fits["intra_host"] = fit_link(*zip(*sweep["send_recv_intra"], strict=True)).model_dump()
    compute = [float(seconds) / batch for batch, seconds in sweep["iteration_compute"]]
    replicated = _replicated_fit(sweep["replicated"])
    hosts = sorted(set(result["hosts"]))
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": f"measured-{hosts[0] if len(hosts) == 1 else 'cluster'}-{ranks}r",
        "provenance": {
            "hosts": hosts, "ranks": ranks, "backend": "gloo", "torch": str(torch.__version__),
            "python": platform.python_version(), "threads_per_rank": result["threads_per_rank"],
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "command": " ".join(["heraldbench", *sys.argv[1:]]) if sys.argv else "",
        },  # fmt: skip
        **fits,
        "compute": {"us_per_sample": round(float(np.median(compute)) * 1e6, 4),
                    "embedding_dim": options["embedding_dim"],
                    "batch_size": options["batch_size"], "model": options["model"],
                    "dim_exponent": 0.63, **replicated},  # fmt: skip
        "trainer": {"dense_allreduce_bytes": int(result["dense_allreduce_bytes"]),
                    "bytes_per_value": options["bytes_per_value"], "ps_colocated": True},  # fmt: skip
        "overlap": False,
        "sweep": {k: [[float(a), float(b)] for a, b in v] for k, v in sweep.items()},
    }


def _replicated_fit(points: list[list[float]]) -> dict[str, float]:
    """``seconds = latency + rows · per_row`` over the replicated sweep (both clipped at 0)."""
    rows, seconds = np.asarray(points, np.float64).T
    per_row, latency = np.polyfit(rows, seconds, 1)
    return {"replicated_us": round(max(float(latency), 0.0) * 1e6, 4),
            "replicated_us_per_row": round(max(float(per_row), 0.0) * 1e6, 6)}  # fmt: skip


def _in_iteration(swept: dict[str, float], points: list[list[float]]) -> dict[str, float]:
    """The all-reduce fit with the latency it has inside training iterations: the loop's median
    time less its payload at the swept bandwidth.

    The median, not the mean: after the loop's largest round the ranks reach the all-reduce out
    of step and it absorbs their skew (on a 100 Mbit/s uplink 68 ms, against 30-35 ms after the
    smaller rounds and 16-28 ms in the trainings measured), and on a loaded machine one point
    can catch a burst of other work; the compute per sample is the median of its points too."""
    bytes_per_s = swept["bandwidth_gbit_s"] * 1e9 / 8
    inside = np.median([seconds - payload / bytes_per_s for payload, seconds in points])
    return swept | {"latency_us": max(float(inside) * 1e6, 0.0)}


def main(folder: str, rank_text: str) -> int:
    root, rank = Path(folder), int(rank_text)
    job = json.loads((root / "job.json").read_text())
    result = run_probe_rank(job["options"], rank, job["world"], job["master"], job["threads"])
    if rank == 0:
        write_whole(root / "result.json", json.dumps(result).encode())
    return 0


if __name__ == "__main__":
    leave_finished(main(*sys.argv[1:3]))  # the measurement is complete and written
