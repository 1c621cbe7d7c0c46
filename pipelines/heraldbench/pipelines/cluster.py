"""The Dask cluster a command runs on: an existing scheduler, or a LocalCluster of its own.

``DASK_SCHEDULER_ADDRESS`` (or an explicit address) selects a running cluster, started with
``dask scheduler`` and ``dask worker tcp://HOST:8786`` (GPU workers with ``--resources GPU=1``);
otherwise a :class:`distributed.LocalCluster` of worker *processes* starts with the command and
stops with it (processes, because the simulator's numba kernels and pyarrow hold the GIL for long
stretches, and a crashing task must not take the driver down). When a spec trains and the
machine has a GPU, each LocalCluster worker offers one ``GPU`` resource and training tasks ask
for it, so a worker trains one model at a time (on a one-GPU machine both workers share it).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from heraldbench.platform.exceptions import UnavailableError

__all__ = [
    "SCHEDULER_ENV", "ClusterOptions", "dask_client", "gpu_workers", "is_local", "visible_gpus",
]  # fmt: skip

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


@dataclass(frozen=True)
class ClusterOptions:
    """How to reach or start the cluster.

    Attributes:
        address: scheduler address; None reads ``DASK_SCHEDULER_ADDRESS``, then starts a
            LocalCluster.
        workers: LocalCluster worker processes (2 suits a 2-core machine).
        threads_per_worker: LocalCluster threads per worker.
        memory_limit: LocalCluster memory limit per worker ("2GiB", "auto" = RAM / workers).
        dashboard: serve a LocalCluster's dashboard on :8787 (else, or when busy, a free port).
        gpus_per_worker: ``GPU`` resource of each LocalCluster worker (0 = none).
    """

    address: str | None = None
    workers: int = 2
    threads_per_worker: int = 1
    memory_limit: str | int | None = "auto"
    dashboard: bool = True
    gpus_per_worker: int = 0


def is_local(options: ClusterOptions) -> bool:
    """The command starts a LocalCluster on this machine (no scheduler address is given)."""
    return not (options.address or os.environ.get(SCHEDULER_ENV))


@contextmanager
def dask_client(options: ClusterOptions = ClusterOptions()) -> Iterator[object]:
    """A connected :class:`distributed.Client`; a LocalCluster it started is closed on exit."""
    from distributed import Client, LocalCluster

    address = options.address or os.environ.get(SCHEDULER_ENV) or None
    if address:
        try:
            client = Client(address, timeout="20s")
        except OSError as exc:
            raise UnavailableError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        with client:
            yield client
        return
    resources = {"GPU": options.gpus_per_worker} if options.gpus_per_worker else None
    with (
        LocalCluster(
            n_workers=options.workers,
            threads_per_worker=options.threads_per_worker,
            processes=True,
            memory_limit=options.memory_limit,
            dashboard_address=_dashboard_address(options.dashboard),
            resources=resources,
            silence_logs=logging.ERROR,  # ports and nannies are noise on a command line
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _dashboard_address(wanted: bool) -> str:
    """ ":8787" when wanted and free, else a free port (a busy port only earns a warning)."""
    if wanted:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if probe.connect_ex(("127.0.0.1", 8787)) != 0:
                return ":8787"
    return ":0"


def visible_gpus() -> int:
    """GPUs that ``nvidia-smi`` lists on this machine (0 without it); torch is not imported."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return 0
    try:
        listing = subprocess.run(
            [tool, "-L"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def gpu_workers(client: object) -> int:
    """How many workers of the cluster offer a ``GPU`` resource."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()  # type: ignore[attr-defined]
    return sum(1 for w in workers if w.get("resources", {}).get("GPU", 0) >= 1)
