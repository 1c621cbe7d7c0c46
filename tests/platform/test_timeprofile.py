"""Measured hardware profiles: the fit, the YAML round trip and its refusals, the time model's
collective terms, ``time_profile`` in a spec, and the modelled-vs-measured check."""

from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

from heraldbench.platform.exceptions import ProfileError, SpecError
from heraldbench.platform.limits import check_runnable
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.timecheck import order_beyond, time_check, time_check_md
from heraldbench.platform.timemodel import PROFILES, get_profile, model_time, model_times
from heraldbench.platform.timeprofile import fit_link, load_time_profile, save_time_profile

# 100 us + 1 Gbit/s (1.25e8 bytes/s, 8 ns per byte) on all_to_all; 50 us + 2 Gbit/s all-reduce.
DOC = {
    "format": "heraldbench-time-profile",
    "version": 1,
    "name": "measured-test-2r",
    "provenance": {"hosts": ["h"], "ranks": 2, "torch": "x", "date": "2026-01-01"},
    "point_to_point": {"latency_us": 20.0, "bandwidth_gbit_s": 4.0},
    "all_to_all": {"latency_us": 100.0, "bandwidth_gbit_s": 1.0},
    "all_reduce": {"latency_us": 50.0, "bandwidth_gbit_s": 2.0},
    "compute": {"us_per_sample": 10.0, "embedding_dim": 16, "batch_size": 4, "model": "small"},
    "trainer": {"dense_allreduce_bytes": 2500, "bytes_per_value": 4, "ps_colocated": True},
    "sweep": {"all_to_all": [[256.0, 1e-4], [4096.0, 1.3e-4]]},
}


def test_fit_recovers_latency_and_bandwidth_from_synthetic_timings() -> None:
    sizes = np.array([256, 1024, 4096, 16384, 65536, 262144, 1048576], float)
    seconds = 150e-6 + sizes / (3.0e9 / 8)  # 150 us + 3 Gbit/s
    noisy = seconds * (1 + 0.01 * np.random.default_rng(0).standard_normal(sizes.size))
    fit = fit_link(sizes, noisy)
    assert fit.latency_us == pytest.approx(150, rel=0.05)
    assert fit.bandwidth_gbit_s == pytest.approx(3.0, rel=0.03)


def test_fit_refuses_flat_or_single_size_sweeps() -> None:
    with pytest.raises(SpecError, match="does not grow"):
        fit_link([256, 4096], [2e-3, 1e-3])
    with pytest.raises(SpecError, match="two or more distinct sizes"):
        fit_link([256, 256], [1e-3, 1e-3])


def test_yaml_round_trip_gives_the_profile_the_model_uses(tmp_path) -> None:
    path = save_time_profile(tmp_path / "p.yaml", DOC)
    assert yaml.safe_load(path.read_text())["sweep"] == DOC["sweep"]  # the raw sweep is kept
    hw = load_time_profile(path)
    assert hw.name == "measured-test-2r" and not hw.overlap
    assert hw.compute.us_per_sample_at(16) == 10.0
    c = hw.collectives
    assert (c.all_to_all_latency_us, c.all_to_all_gbit_s) == (100.0, 1.0)
    assert (c.allreduce_latency_us, c.allreduce_gbit_s, c.dense_allreduce_bytes) == (50.0, 2.0, 2500)
    assert get_profile(str(path)) == hw and get_profile(hw) is hw


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"format": "other"}, "format"),
        ({"version": 99}, "version"),
        ({"all_reduce": {"latency_us": 5.0, "bandwidth_gbit_s": -1.0}}, "all_reduce.bandwidth_gbit_s"),
        ({"compute": {"embedding_dim": 16}}, "compute.us_per_sample"),
        ({"trainer": None}, "trainer"),
    ],
)
def test_a_malformed_profile_is_refused_naming_file_and_field(tmp_path, change, field) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(DOC | change))
    with pytest.raises(ProfileError, match=rf"bad\.yaml field {field}") as info:
        load_time_profile(path)
    assert info.value.field == field


def test_an_unreadable_profile_is_refused(tmp_path) -> None:
    with pytest.raises(ProfileError, match="missing.yaml"):
        load_time_profile(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ProfileError, match="a profile is a mapping"):
        load_time_profile(tmp_path / "list.yaml")


# One iteration per column: naive-like (pull + update push), then a replicated all-reduce.
SERIES = {
    "miss_pull": np.array([40.0, 0.0]),
    "update_pull": np.array([0.0, 0.0]),
    "evict_push": np.array([0.0, 0.0]),
    "update_push": np.array([40.0, 0.0]),
    "allreduce": np.array([0.0, 2.0 * 10]),  # 10 replicated rows, ring-weighted 2(W−1) at W=2
}


def test_measured_profile_models_the_trainer_rounds_by_hand(tmp_path) -> None:
    hw = load_time_profile(save_time_profile(tmp_path / "p.yaml", DOC))
    est = model_time(SERIES, workers=2, batch_size=4, embedding_dim=16, profile=hw)
    # it 0: 80 rows / 2 workers × 1/2 remote × 64 B = 1,280 B at 8 ns = 10.24 us; two all_to_all
    # rounds 200 us; all-reduce 50 us + 2,500 B at 4 ns = 10 us. it 1: all-reduce only, with
    # 10 rows × 64 B more: 50 + (2,500 + 640) × 4 ns = 62.56 us. Compute 4 × 10 us = 40 us each.
    expected = np.array([40 + 10.24 + 200 + 60, 40 + 62.56]) * 1e-6
    np.testing.assert_allclose(est.iteration_s, expected)
    assert est.steady_iteration_s == pytest.approx(expected[1])


def test_a_replica_pays_compute_for_its_replicated_rows(tmp_path) -> None:
    compute = DOC["compute"] | {"replicated_us": 30.0, "replicated_us_per_row": 0.5}
    hw = load_time_profile(save_time_profile(tmp_path / "p.yaml", DOC | {"compute": compute}))
    est = model_time(SERIES, workers=2, batch_size=4, embedding_dim=16, profile=hw)
    # it 1 has 10 replicated rows: 30 us + 10 × 0.5 us more compute than the plain profile's.
    expected = np.array([40 + 10.24 + 200 + 60, 40 + 30 + 5 + 62.56]) * 1e-6
    np.testing.assert_allclose(est.iteration_s, expected)
    assert est.compute_s == pytest.approx((40 + 40 + 35) * 1e-6)


def test_named_profiles_are_unchanged_and_the_measured_one_is_added(tmp_path) -> None:
    hw = load_time_profile(save_time_profile(tmp_path / "p.yaml", DOC))
    times = model_times(SERIES, workers=2, batch_size=4, embedding_dim=16, extra=(hw,))
    assert list(times) == [*PROFILES, "measured-test-2r"]
    assert "steady_iteration_s" in times["measured-test-2r"]
    assert "steady_iteration_s" not in times["tcp-100g"]
    plain = model_time(SERIES, workers=2, batch_size=4, embedding_dim=16, profile="tcp-100g")
    assert times["tcp-100g"] == plain.to_json()


SPEC = {"name": "s", "dataset": {"kind": "synthetic-criteo", "samples": 100},
        "schedulers": [{"kind": "naive"}]}  # fmt: skip


def test_spec_time_profile_is_checked_naming_file_and_field(tmp_path) -> None:
    """Validation reads no file (a service confines the path first); the check before any work
    reads it and names the field, the file's field and nothing of what it holds."""
    good = save_time_profile(tmp_path / "good.yaml", DOC)
    check_runnable(parse_spec(SPEC | {"time_profile": str(good)}))
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(DOC | {"compute": {"us_per_sample": 0}}))
    spec = parse_spec(SPEC | {"time_profile": str(bad)})  # reads nothing
    with pytest.raises(SpecError, match=r"time_profile: .*\(field compute\.us_per_sample\)"):
        check_runnable(spec)
    os.mkfifo(tmp_path / "fifo")  # refused from its metadata: never opened, never blocks
    with pytest.raises(SpecError, match="not a regular file"):
        check_runnable(parse_spec(SPEC | {"time_profile": str(tmp_path / "fifo")}))


def _run(label: str, modelled: float, phases: dict[str, float], iterations: int = 5) -> dict:
    seconds = {"schedule": 0.5, "pull": 0, "push": 0, "compute": 0, "allreduce": 0, "wait": 0}
    steady = seconds | phases
    return {"scheduler": label, "label": label, "iterations": iterations,
            "time": {"tcp-100g": {"mean_iteration_s": 9.0},
                     "m": {"mean_iteration_s": 9.0, "steady_iteration_s": modelled}},
            "measured": {"workers": 2, "iteration_s": 0.7, "seconds": seconds | phases,
                         "steady": {"iterations": iterations - 1, "seconds": steady}}}  # fmt: skip


def test_the_check_is_computed_from_the_runs_figures() -> None:
    runs = [_run("naive", 0.10, {"pull": 0.2, "compute": 0.2}),  # 0.4 s / 4 = 0.1 s
            _run("herald", 0.06, {"pull": 0.1, "compute": 0.2}),  # 0.075 s
            _run("het", 0.05, {"compute": 0.32})]  # 0.08 s: faster than herald modelled, not measured
    check = time_check(runs)
    assert check["profile"] == "m"  # the measured profile, not a named one
    naive, herald, het = check["rows"]
    assert naive["measured_s"] == pytest.approx(0.1) and naive["ratio"] == pytest.approx(1.0)
    assert herald["ratio"] == pytest.approx(0.06 / 0.075)
    assert het["ratio"] == pytest.approx(0.05 / 0.08) and not het["within_target"]
    assert herald["speedup_measured"] == pytest.approx(0.1 / 0.075)
    assert naive["schedule_s"] == pytest.approx(0.1)
    assert check["discordant_pairs"] == [["herald", "het"]] and not check["order_agrees"]
    assert "| het | 50.00 | 80.00 | 0.62 ✗ |" in time_check_md(check)


def test_no_check_without_measured_runs() -> None:
    run = _run("naive", 0.1, {})
    del run["measured"]
    assert time_check([run]) is None


def test_the_strict_order_check_has_no_tie_band_on_the_measured_side():
    """Where modelled times differ by 10% or more the measured order must agree, however close
    the measured times; pairs modelled closer than 10% are not judged."""
    rows = [{"label": "naive", "modelled_s": 1.00, "measured_s": 1.00},
            {"label": "herald", "modelled_s": 0.85, "measured_s": 1.01},
            {"label": "fae", "modelled_s": 0.99, "measured_s": 0.90}]  # fmt: skip
    assert order_beyond(rows) == [["naive", "herald"], ["herald", "fae"]]
