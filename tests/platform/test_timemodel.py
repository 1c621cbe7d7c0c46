"""The time model's arithmetic, checked by hand on tiny series."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heraldbench.platform.exceptions import SpecError, UnknownNameError
from heraldbench.platform.timemodel import (
    DEFAULT_PROFILE,
    PROFILES,
    ComputeModel,
    HardwareProfile,
    get_profile,
    model_time,
    model_times,
    speedups,
)

# 2 us per sample at dim 128, growing as sqrt(dim / 128).
COMPUTE = ComputeModel("test", us_per_sample=2.0, reference_dim=128, dim_exponent=0.5, source="-")
# 8 Gbit/s = 1e9 bytes/s, so 1 byte costs 1 ns; 10 us per message round.
SLOW = HardwareProfile("slow", bandwidth_gbit_s=8.0, latency_us=10.0, overlap=False,
                       compute=COMPUTE, source="-")  # fmt: skip
SLOW_OVERLAP = HardwareProfile("slow-overlap", 8.0, 10.0, True, COMPUTE, "-")


def _series(**columns: list[float]) -> dict[str, np.ndarray]:
    n = len(next(iter(columns.values())))
    names = ("hits", "miss_pull", "update_pull", "evict_push", "update_push", "allreduce",
             "metadata")  # fmt: skip
    return {k: np.asarray(columns.get(k, [0.0] * n), dtype=np.float64) for k in names}


# Iteration 0: 10 miss + 6 update pulls, 4 update pushes = 20 rows over 2 workers = 10 rows per
# worker × 128 × 4 B = 5,120 B -> 5.12 us; one pull and one push round -> 20 us; comm 25.12 us.
# Iteration 1 moves nothing. Compute: 4 samples × 2 us = 8 us per iteration.
TWO_ITERATIONS = _series(miss_pull=[10, 0], update_pull=[6, 0], update_push=[4, 0])
KW = {"workers": 2, "batch_size": 4, "embedding_dim": 128}


def test_bytes_bandwidth_and_latency_add_up_by_hand() -> None:
    est = model_time(TWO_ITERATIONS, profile=SLOW, **KW)
    assert est.iterations == 2
    assert est.transfer_s == pytest.approx(5.12e-6)
    assert est.latency_s == pytest.approx(20e-6)
    assert est.comm_s == pytest.approx(25.12e-6)
    assert est.compute_s == pytest.approx(16e-6)
    assert est.iteration_s == pytest.approx([33.12e-6, 8e-6])
    assert est.total_s == pytest.approx(41.12e-6)
    assert est.mean_iteration_s == pytest.approx(20.56e-6)
    assert est.exposed_comm_s == pytest.approx(25.12e-6)  # nothing hidden without overlap


def test_overlap_takes_the_max_of_compute_and_comm() -> None:
    est = model_time(TWO_ITERATIONS, profile=SLOW_OVERLAP, **KW)
    assert est.iteration_s == pytest.approx([25.12e-6, 8e-6])
    assert est.total_s == pytest.approx(33.12e-6)
    assert est.exposed_comm_s == pytest.approx(17.12e-6)
    assert est.comm_s == pytest.approx(25.12e-6)  # still reported, hidden or not


def test_bytes_scale_with_dim_and_compute_with_its_exponent() -> None:
    est = model_time(TWO_ITERATIONS, profile=SLOW, workers=2, batch_size=4, embedding_dim=512)
    assert est.transfer_s == pytest.approx(4 * 5.12e-6)
    assert est.compute_s == pytest.approx(2 * 4 * 2.0 * math.sqrt(512 / 128) * 1e-6)
    assert COMPUTE.us_per_sample_at(128) == 2.0


def test_latency_rounds_pull_push_and_ring_steps() -> None:
    series = _series(miss_pull=[1, 0, 0, 0], evict_push=[0, 1, 0, 0],
                     allreduce=[0, 0, 1, 0], metadata=[0, 0, 0, 1])  # fmt: skip
    est = model_time(series, profile=SLOW, workers=4, batch_size=1, embedding_dim=128)
    # pull round, push round, 2(W-1) = 6 ring steps, one round of version checks
    rounds = np.array([1, 1, 6, 1])
    transfer = np.array([512, 512, 512, 8]) / 4 * 1e-9  # a 512-B row or an 8-B check, over W
    assert est.iteration_s == pytest.approx(rounds * 10e-6 + transfer + 2e-6)


def test_version_checks_ride_in_the_pull_round() -> None:
    series = _series(miss_pull=[3], metadata=[5])
    est = model_time(series, profile=SLOW, workers=1, batch_size=1, embedding_dim=1)
    assert est.latency_s == pytest.approx(10e-6)
    assert est.transfer_s == pytest.approx((3 * 4 + 5 * 8) * 1e-9)


def test_missing_series_count_as_zero() -> None:
    est = model_time({"miss_pull": np.array([2.0, 2.0])}, profile=SLOW, **KW)
    assert est.transfer_s == pytest.approx(2 * 1 * 512e-9)
    assert est.latency_s == pytest.approx(2 * 10e-6)


def test_unknown_profile_lists_the_names() -> None:
    with pytest.raises(UnknownNameError) as info:
        model_time(TWO_ITERATIONS, profile="infiniband-9000", **KW)
    message = str(info.value)
    assert "infiniband-9000" in message
    for name in PROFILES:
        assert name in message
    assert isinstance(info.value, KeyError)


def test_bad_sizes_and_ragged_series_are_spec_errors() -> None:
    with pytest.raises(SpecError):
        model_time(TWO_ITERATIONS, profile=SLOW, workers=0, batch_size=4, embedding_dim=128)
    ragged = {"miss_pull": np.zeros(3), "update_pull": np.zeros(2)}
    with pytest.raises(SpecError, match="unequal"):
        model_time(ragged, profile=SLOW, **KW)


def test_named_profiles_are_consistent() -> None:
    assert DEFAULT_PROFILE == "tcp-100g"
    for name, profile in PROFILES.items():
        assert profile.name == name and get_profile(name) is profile
        assert profile.overlap == name.endswith("-overlap")
        assert profile.bandwidth_gbit_s > 0 and profile.latency_us > 0 and profile.source
    tcp, rdma, pcie = (PROFILES[n] for n in ("tcp-100g", "rdma-100g", "pcie4-x16"))
    assert tcp.bandwidth_gbit_s < rdma.bandwidth_gbit_s <= 100 < pcie.bandwidth_gbit_s
    assert rdma.latency_us < tcp.latency_us
    assert tcp.compute.us_per_sample == pytest.approx(1e6 / 494_000)  # V100 DLRM FP32
    assert get_profile(SLOW) is SLOW


def test_model_times_gives_one_json_estimate_per_profile() -> None:
    times = model_times(TWO_ITERATIONS, profiles=("tcp-100g", "rdma-100g"), **KW)
    assert list(times) == ["tcp-100g", "rdma-100g"]
    tcp = times["tcp-100g"]
    assert tcp["profile"] == "tcp-100g" and tcp["overlap"] is False
    assert tcp["comm_s"] == pytest.approx(tcp["transfer_s"] + tcp["latency_s"])
    assert tcp["total_s"] > times["rdma-100g"]["total_s"]
    assert set(model_times(TWO_ITERATIONS, **KW)) == set(PROFILES)


def test_speedups_divide_the_baseline_time() -> None:
    naive = model_time(TWO_ITERATIONS, profile=SLOW, **KW)  # 41.12 us
    half = _series(miss_pull=[5, 0], update_pull=[3, 0], update_push=[2, 0])
    better = model_time(half, profile=SLOW, **KW)  # 2.56 + 20 + 8 + 8 = 38.56 us
    result = speedups({"naive": naive, "better": better}, "naive")
    assert result["naive"] == 1.0
    assert result["better"] == pytest.approx(41.12 / 38.56)


def test_speedups_need_the_baseline_and_one_profile() -> None:
    est = model_time(TWO_ITERATIONS, profile=SLOW, **KW)
    with pytest.raises(UnknownNameError, match="naive"):
        speedups({"herald": est}, "naive")
    other = model_time(TWO_ITERATIONS, profile=SLOW_OVERLAP, **KW)
    with pytest.raises(SpecError, match="one profile"):
        speedups({"naive": est, "herald": other}, "naive")
