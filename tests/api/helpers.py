"""Small specs and polling helpers shared by the API tests."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

TERMINAL = ("succeeded", "failed", "cancelled")

TINY_SPEC: dict[str, Any] = {
    "name": "tiny",
    "dataset": {"kind": "synthetic-criteo", "samples": 2000, "scale": 0.001, "seed": 1},
    "cluster": {"workers": 2, "batch_size": 16},
    "cache": {"ratio": 0.1},
    "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
}


def tiny_spec(**overrides: Any) -> dict[str, Any]:
    """A spec whose runs take well under a second."""
    spec = copy.deepcopy(TINY_SPEC)
    spec.update(overrides)
    return spec


def poll(check: Callable[[], Any], *, timeout: float = 60.0, interval: float = 0.05) -> Any:
    """Call ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s (last: {value!r})")
        time.sleep(interval)


def wait_finished(client: Any, experiment_id: int, timeout: float = 60.0) -> dict[str, Any]:
    """The experiment once it is succeeded, failed or cancelled."""

    def finished() -> dict[str, Any] | None:
        body = client.get(f"/api/experiments/{experiment_id}").json()
        return body if body["status"] in TERMINAL else None

    return poll(finished, timeout=timeout)


def submit(client: Any, spec: dict[str, Any], **kwargs: Any) -> int:
    response = client.post("/api/experiments", json=spec, **kwargs)
    assert response.status_code == 202, response.text
    return response.json()["id"]
