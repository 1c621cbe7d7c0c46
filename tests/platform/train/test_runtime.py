"""Host-to-device copies and the stopwatch: what a run on either device relies on."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from heraldbench.platform.train.runtime import Stopwatch, to_device

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_to_device_copies_values_in_the_asked_dtype(device: str) -> None:
    array = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]  # not contiguous
    tensor = to_device(array, torch.device(device), torch.float32)
    assert tensor.device.type == device and tensor.dtype == torch.float32
    assert tensor.cpu().numpy().tolist() == array.astype(np.float32).tolist()


def test_on_the_cpu_an_index_shares_the_arrays_memory() -> None:
    """No copy where none is needed (the emulated trainer's indices, every iteration)."""
    array = np.arange(5, dtype=np.int64)
    tensor = to_device(array, torch.device("cpu"))
    array[0] = 7
    assert int(tensor[0]) == 7


def test_the_stopwatch_adds_phases_and_drains_nothing_on_the_cpu() -> None:
    watch = Stopwatch(torch.device("cpu"))
    for _ in range(2):
        with watch("movement"):
            pass
    watch.drain()
    assert set(watch.seconds) == {"movement"} and watch.seconds["movement"] >= 0


@pytest.mark.gpu
def test_on_a_gpu_the_queued_kernels_are_drained_into_their_own_phase() -> None:
    watch = Stopwatch(torch.device("cuda"))
    with watch("compute"):
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(20):
            big = big @ big / 4096
    watch.drain()
    assert watch.seconds["drain"] > 0


def test_under_torchs_profiler_each_phase_is_a_range_holding_its_operators() -> None:
    """What ``benchmarks/bench_host_time.py`` reads: the phase's range and the operators in it."""
    from torch.profiler import ProfilerActivity, profile

    watch = Stopwatch(torch.device("cpu"))
    with profile(activities=[ProfilerActivity.CPU]) as prof, watch("movement"):
        torch.zeros(8, 4).index_add_(0, torch.tensor([1, 1]), torch.ones(2, 4))
    events = prof.events()
    phase = [e for e in events if e.name == "heraldbench/movement"]
    assert len(phase) == 1
    assert "aten::index_add_" in {e.name for e in events if e.cpu_parent is phase[0]}
