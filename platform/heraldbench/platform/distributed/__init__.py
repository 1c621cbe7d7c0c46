"""Distributed training on ``torch.distributed``: one process per worker, a sharded PS, and the
decision stream carried out as real transfers (the stream's third executor, docs/architecture.md).

``train: {backend: distributed}`` in a spec. :func:`train_distributed` starts the ranks locally
(:mod:`.launch`), under torchrun, or one per Dask worker (:mod:`.dask_launch`); each rank runs
:mod:`._driver`; :mod:`.measured` is what they measured.
"""

from __future__ import annotations

from collections.abc import Callable

from heraldbench.platform.distributed._driver import RankJob, run_rank
from heraldbench.platform.distributed.dask_launch import choose_workers, launch_on_dask
from heraldbench.platform.distributed.launch import (
    launch_local,
    run_from_environment,
    torchrun_rank,
)
from heraldbench.platform.distributed.links import Links
from heraldbench.platform.distributed.measured import measured_summary
from heraldbench.platform.exceptions import SpecError

__all__ = [
    "RankJob",
    "check_resources",
    "choose_workers",
    "launch_local",
    "launch_on_dask",
    "measured_summary",
    "run_from_environment",
    "run_rank",
    "torchrun_rank",
    "train_distributed",
    "world_size",
]


def world_size(spec) -> int:
    """Ranks of a distributed training: the workers, plus dedicated PS ranks."""
    return spec.cluster.workers + spec.train.distributed.ps_ranks


def check_resources(spec) -> None:
    """Refuse, before any work, CUDA ranks on fewer GPUs than training ranks on this machine."""
    import torch

    settings = spec.train
    wants_cuda = settings.device == "cuda" or (
        settings.device == "auto" and torch.cuda.is_available()
    )
    if wants_cuda and torch.cuda.device_count() < spec.cluster.workers:
        raise SpecError(
            f"train: {spec.cluster.workers} CUDA ranks need as many GPUs; this machine has "
            f"{torch.cuda.device_count()} (set train.device: cpu, or fewer cluster.workers)"
        )


def train_distributed(spec, schedulers: list[int], progress: Callable[[int, int], None] | None
                      = None, scheduler_address: str | None = None) -> list:  # fmt: skip
    """Train the spec's schedulers (indices into its list with naive added) across processes.

    Where the ranks run: this process's rank when torchrun started it (ranks other than 0 return
    an empty list); one per worker of the Dask cluster at ``scheduler_address``, or of the
    cluster this code runs on as a Dask task; else processes started on this machine.
    """
    timeout = spec.train.distributed.timeout_s
    document = spec.model_dump(mode="json")
    links = Links.from_spec(spec.train.distributed.links)
    if links is not None and (torchrun_rank() is not None or scheduler_address is not None
                              or _on_dask_worker()):  # fmt: skip
        raise SpecError("train.distributed.links shapes ranks this process starts on its own "
                        "machine; under torchrun or Dask the ranks use their own network")  # fmt: skip
    if torchrun_rank() is not None:
        return run_from_environment(document, schedulers, progress) or []
    world = world_size(spec)
    if scheduler_address is not None:
        from distributed import Client

        with Client(scheduler_address, timeout="10s") as client:
            return launch_on_dask(client, document, schedulers, world, timeout, progress)
    if _on_dask_worker():
        from distributed import worker_client

        with worker_client() as client:  # secedes: this task's slot goes to a rank
            return launch_on_dask(client, document, schedulers, world, timeout, progress)
    check_resources(spec)
    return launch_local(document, schedulers, world, timeout, progress, links=links)


def _on_dask_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True
