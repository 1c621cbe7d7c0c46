"""Handing work to Dask from the API process (an asynchronous client on uvicorn's loop).

Every task is submitted with ``fire_and_forget``: the scheduler keeps it until it ran, whether or
not the API process still exists, and the task writes its own outcome to the database. No
future is kept as state; a row whose submission failed (Dask down) stays queued and the
reconciler (recovery.py) submits it once Dask is back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from heraldbench.api import worker
from heraldbench.api.core.config import Settings
from heraldbench.api.crud import RunRef, new_key
from heraldbench.platform.exceptions import UnavailableError

__all__ = ["Dispatcher"]

logger = logging.getLogger("heraldbench.api")


class Dispatcher:
    """Submits the service's tasks to one Dask client (None when Dask is unavailable)."""

    def __init__(self, client: Any, settings: Settings) -> None:
        self.client = client
        self.settings = settings
        self.database_url = settings.resolved_database_url
        #: Whether the dashboard's link may be shown: a dashboard the service starts itself is
        #: shown once it answers (watch_dashboard); one of a cluster it joins, as configured.
        self.dashboard_answers = True

    @property
    def available(self) -> bool:
        return self.client is not None and self.client.status == "running"

    def _require(self) -> Any:
        if not self.available:
            raise UnavailableError("the Dask scheduler is not connected")
        return self.client

    async def submit_runs(
        self, experiment_id: int, refs: Sequence[RunRef], target: Any = None
    ) -> bool:
        """Submit the tasks of ``refs`` (runs of one experiment); False if Dask is unavailable.

        ``target`` is the experiment's MLflow target when it already has one (a resubmission);
        otherwise, with tracking on, a task opens it first and the runs wait for it.
        """
        if not refs:
            return True
        try:
            client = self._require()
            from distributed import fire_and_forget

            uri = self.settings.resolved_tracking_uri
            if target is None and uri is not None:
                target = client.submit(
                    worker.open_tracking,
                    self.database_url,
                    experiment_id,
                    uri,
                    key=new_key("tracking"),
                    pure=False,
                )
            trains = any(ref.action == "train" for ref in refs)
            gpu = {"GPU": 1} if trains and await self._gpu_workers() else None
            futures = [
                client.submit(
                    worker.execute_run,
                    self.database_url,
                    ref.run_id,
                    ref.dask_key,
                    target,
                    key=ref.dask_key,
                    pure=False,
                    resources=gpu if ref.action == "train" else None,
                )
                for ref in refs
            ]
            fire_and_forget(futures + ([target] if _is_future(target) else []))
            return True
        except Exception as exc:  # noqa: BLE001 - rows stay queued; the reconciler resubmits
            logger.warning("could not submit experiment %s to Dask: %s", experiment_id, exc)
            return False

    def submit_job(self, function: Any, row_id: int, dask_key: str, *extra: Any) -> bool:
        """Submit a one-row job (dataset preprocessing, a study); False if Dask is unavailable."""
        try:
            from distributed import fire_and_forget

            client = self._require()
            fire_and_forget(
                client.submit(
                    function, self.database_url, row_id, dask_key, *extra, key=dask_key, pure=False
                )
            )
            return True
        except Exception as exc:  # noqa: BLE001
            logger.warning("could not submit %s(%s) to Dask: %s", function.__name__, row_id, exc)
            return False

    async def task_states(self, keys: Iterable[str]) -> dict[str, str | None] | None:
        """The scheduler's state of each key (None: unknown to it); None if Dask is unavailable."""
        keys = list(keys)
        if not keys:
            return {}
        if not self.available:
            return None
        try:
            return await self.client.scheduler.get_task_status(keys=keys)
        except Exception as exc:  # noqa: BLE001
            logger.warning("could not ask the Dask scheduler about tasks: %s", exc)
            return None

    async def cancel(self, keys: Sequence[str]) -> None:
        """Best effort: stop the tasks of ``keys`` (tasks check their row before running anyway)."""
        if not keys or not self.available:
            return
        try:
            from distributed import Future

            futures = [Future(key, self.client) for key in keys]
            await self.client.cancel(futures, force=True, reason="cancelled by request")
        except Exception as exc:  # noqa: BLE001
            logger.info("could not cancel Dask tasks: %s", exc)

    async def set_event(self, name: str) -> None:
        """Best effort: set the Dask event ``name`` (tasks watching it stop)."""
        if not self.available:
            return
        try:
            from distributed import Event

            await Event(name, client=self.client).set()
        except Exception as exc:  # noqa: BLE001
            logger.info("could not set the Dask event %s: %s", name, exc)

    async def prepare_tracking(self) -> None:
        """Migrate a local MLflow store once, on a worker (keeps mlflow out of the API process)."""
        uri = self.settings.resolved_tracking_uri
        if uri is None or not uri.startswith("sqlite") or not self.available:
            return
        try:
            await self.client.submit(
                worker.prepare_tracking, uri, key=new_key("mlflow-init"), pure=False
            )
        except Exception as exc:  # noqa: BLE001 - the runs record their own tracking errors
            logger.warning("could not prepare the MLflow store %s: %s", uri, exc)

    def worker_memory(self) -> int | None:
        """The smallest memory limit of the cluster's workers as the client last heard (None:
        no worker, none limited, or Dask unavailable): what one run may use."""
        if not self.available:
            return None
        try:
            workers = self.client.scheduler_info().get("workers", {}).values()
        except Exception:  # noqa: BLE001 - no information: the machine's memory applies
            return None
        limits = [w.get("memory_limit") or 0 for w in workers]
        return min((m for m in limits if m > 0), default=None)

    async def watch_dashboard(self, timeout: float = 60.0, interval: float = 0.2) -> None:
        """Hide the dashboard's link until its page answers (a LocalCluster the service owns)."""
        import asyncio
        import time
        import urllib.request

        link = self.dashboard_link()
        if link is None:
            return
        self.dashboard_answers = False

        def answers() -> bool:
            try:
                with urllib.request.urlopen(link, timeout=1) as response:  # noqa: S310 - loopback
                    return response.status == 200
            except OSError:
                return False

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if await asyncio.to_thread(answers):
                self.dashboard_answers = True
                return
            await asyncio.sleep(interval)
        logger.warning("the Dask dashboard at %s did not answer", link)

    def dashboard_link(self) -> str | None:
        if not self.available or not self.dashboard_answers:
            return None
        try:
            return self.client.dashboard_link
        except Exception:  # noqa: BLE001 - no dashboard served
            return None

    async def _gpu_workers(self) -> int:
        try:
            identity = await self.client.scheduler.identity(n_workers=-1)
            workers = identity.get("workers", {}).values()
        except Exception:  # noqa: BLE001
            return 0
        return sum(1 for w in workers if w.get("resources", {}).get("GPU", 0) >= 1)


def _is_future(value: Any) -> bool:
    from distributed import Future

    return isinstance(value, Future)
