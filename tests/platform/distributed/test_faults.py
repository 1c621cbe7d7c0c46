"""A rank that dies or hangs fails the run within a bounded time, naming it; no rank survives it.

The ranks are real processes; the test kills or stops one of them mid-run as a crash, an
out-of-memory kill or a hung host would.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import psutil
import pytest

from heraldbench.platform.exceptions import DistributedError, SpecError
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.training import train_experiment
from tests.platform.distributed._specs import rank_processes, train_spec

TIMEOUT_S = 20.0


def _train_in_background(spec: dict) -> dict:
    outcome: dict = {}

    def target() -> None:
        started = time.monotonic()
        try:
            train_experiment(parse_spec(spec))
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    outcome["thread"] = threading.Thread(target=target, daemon=True)
    outcome["thread"].start()
    return outcome


def _wait_until_training(rank: int) -> psutil.Process:
    """The rank's process once it has run for a while (imports done: it is in the loop)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        process = rank_processes().get(rank)
        if process is not None and sum(process.cpu_times()[:2]) > 6.0:
            return process
        time.sleep(0.2)
    raise AssertionError(f"rank {rank} never started training")


@pytest.fixture
def long_run() -> dict:
    """A run long enough to be interrupted (tens of thousands of iterations)."""
    return train_spec(["naive"], samples=2_000_000, distributed={"timeout_s": TIMEOUT_S})


@pytest.mark.parametrize(("sig", "named"), [(signal.SIGKILL, "was killed by SIGKILL"),
                                            (signal.SIGSTOP, "stopped responding")])
def test_a_rank_that_dies_or_hangs_fails_the_run_naming_it(long_run, sig, named):
    run = _train_in_background(long_run)
    victim = _wait_until_training(1)
    hit = time.monotonic()
    os.kill(victim.pid, sig)
    run["thread"].join(timeout=TIMEOUT_S + 60)
    assert not run["thread"].is_alive(), "the run did not fail"
    error = run["error"]
    assert isinstance(error, DistributedError)
    assert "rank 1" in str(error) and named in str(error)
    assert time.monotonic() - hit < TIMEOUT_S + 30
    time.sleep(0.5)
    assert rank_processes() == {}, "rank processes outlived the run"


def test_cuda_ranks_on_too_few_gpus_are_refused_before_any_work():
    spec = parse_spec({**train_spec(["naive"]), "train": {"backend": "distributed",
                                                          "device": "cuda"}})
    with pytest.raises(SpecError, match="cuda|CUDA"):
        train_experiment(spec)
    assert rank_processes() == {}
