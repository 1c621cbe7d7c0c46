"""Measure every metric a claim names, on the setting of Herald's Table 1.

Two simulations of the built-in ``criteo-kaggle`` profile (the setting of
``examples/comparison.yaml``: scale 0.05, 8 workers × 256, LRU caches of 10% of the rows, dim
128): the ``normative`` one (every scheduler's default variant, ``consistency: strict``) and the
``released`` one (``variant: released``, under Herald's released co-writer rule, ``consistency:
optimistic``). Traffic comes from the simulator's counts, times from the time model's estimate on
a named hardware profile, and the skew from the trace's access counts. The sharding papers'
claims are measured by placing (:mod:`.sharding`): FlexShard's on a sequence workload of as many
samples, RecShard's on the normative trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from heraldbench.platform.exceptions import SpecError

__all__ = ["DEFAULT_SAMPLES", "MIN_SAMPLES", "Measurement", "measure"]

_WORKERS, _BATCH = 8, 256
#: BagPipe's lookahead (the comparison's); its released oracle never emits the last 50 batches.
_LOOKAHEAD = 50
#: The fewest samples that leave BagPipe's released oracle two batches to emit.
MIN_SAMPLES = _WORKERS * _BATCH * (_LOOKAHEAD + 2)
#: Half of examples/comparison.yaml's 2 M samples: about two minutes of simulation on 2 cores.
DEFAULT_SAMPLES = 1_000_000
VARIANTS = {"normative": "strict", "released": "optimistic"}  # variant -> consistency


@dataclass(frozen=True)
class Measurement:
    """A measured value (None: nothing to measure, for ``note``) and what bounds it here."""

    value: float | None
    note: str = ""


def setting_spec(samples: int, variant: str) -> dict[str, Any]:
    """The experiment measured for ``variant``: Table 1's setting, one entry per seed system."""
    extra = {} if variant == "normative" else {"variant": variant}
    return {
        "name": f"claims-{variant}", "mode": "simulate",
        "dataset": {"kind": "synthetic", "profile": "criteo-kaggle", "samples": samples,
                    "scale": 0.05, "seed": 1},
        "cluster": {"workers": _WORKERS, "batch_size": _BATCH},
        "cache": {"ratio": 0.1, "policy": "lru"}, "embedding_dim": 128,
        "consistency": VARIANTS[variant], "lower_bound": False, "seed": 0,
        "schedulers": [{"kind": "naive"}, {"kind": "herald", **extra},
                       {"kind": "het", "bound": 100, **extra}, {"kind": "fae", **extra},
                       {"kind": "bagpipe", "lookahead": _LOOKAHEAD, **extra}],
    }  # fmt: skip


def _time(run: dict[str, Any], profile: str) -> dict[str, float]:
    return run["time"][profile]


def _speedup(naive: dict, run: dict, profile: str, naive_profile: str | None = None) -> Measurement:
    """Naive's modelled iteration over ``run``'s; the note gives the ceiling a scheduler that
    moved nothing would reach (naive's iteration over its compute alone)."""
    base, mine = _time(naive, naive_profile or profile), _time(run, profile)
    if not mine["iterations"] or not base["iterations"]:
        return Measurement(None, "the run emitted no iteration: give more samples")
    ceiling = base["total_s"] / base["compute_s"]
    return Measurement(base["mean_iteration_s"] / mine["mean_iteration_s"],
                       f"moving nothing at all would give {ceiling:.2f}× here")  # fmt: skip


def _saving(run: dict[str, Any]) -> Measurement:
    return Measurement(1 - run["relative"]["overall"])


def variant_metrics(document: dict[str, Any]) -> dict[str, Measurement]:
    """The metrics of one simulated experiment (``simulate --json``'s document)."""
    runs = {run["scheduler"]: run for run in document["runs"]}
    naive, herald = runs["naive"], runs["herald"]
    out = {f"herald.{part}": Measurement(herald["relative"][part])
           for part in ("pull", "push", "overall")}  # fmt: skip
    out["herald.saving"] = _saving(herald)
    for profile in ("tcp-100g", "rdma-100g"):
        out[f"herald.speedup.{profile}"] = _speedup(naive, herald, profile)
    out["het.saving"] = _saving(runs["het"])
    out["het.speedup.tcp-100g"] = _speedup(naive, runs["het"], "tcp-100g")
    out["fae.speedup.pcie4-x16"] = _speedup(naive, runs["fae"], "pcie4-x16")
    out["bagpipe.speedup.overlap"] = _speedup(naive, runs["bagpipe"], "tcp-100g-overlap",
                                              naive_profile="tcp-100g")  # fmt: skip
    tcp = _time(naive, "tcp-100g")
    out["naive.comm_share.tcp-100g"] = Measurement(tcp["exposed_comm_s"] / tcp["total_s"])
    return out


def skew_metric(spec) -> Measurement:
    """The share of the trace's accesses that go to its hottest 1% of rows."""
    from heraldbench.platform.data.calibration import calibrate

    figures = calibrate(spec.dataset.open(), _WORKERS * _BATCH)
    return Measurement(figures["top1pct_share_all_rows"],
                       f"{figures['rows_touched']:,} rows touched")  # fmt: skip


def measure(
    samples: int = DEFAULT_SAMPLES, progress: Callable[[str], None] | None = None
) -> dict[str, dict[str, Measurement]]:
    """``{variant: {metric: Measurement}}`` at ``samples`` samples; the trace's skew is under
    ``normative`` (it depends on no scheduler)."""
    from heraldbench.platform.runner import simulate_experiment
    from heraldbench.platform.spec import parse_spec

    if isinstance(samples, bool) or not isinstance(samples, int) or samples < MIN_SAMPLES:
        raise SpecError(f"samples must be an integer of at least {MIN_SAMPLES:,} (BagPipe's "
                        f"lookahead of {_LOOKAHEAD} batches), got {samples!r}")  # fmt: skip
    measured: dict[str, dict[str, Measurement]] = {}
    for variant in VARIANTS:
        if progress is not None:
            progress(f"simulating the {variant} variants on {samples:,} samples")
        spec = parse_spec(setting_spec(samples, variant))
        measured[variant] = variant_metrics(simulate_experiment(spec).to_json())
    measured["normative"]["trace.top1pct"] = skew_metric(spec)
    if progress is not None:
        progress("placing the sharding papers' workloads (FlexShard's sequence trace, RecShard's "
                 "capacity-constrained devices)")
    from heraldbench.platform.reproduce.sharding import flexshard_metrics, recshard_metrics

    measured["normative"].update(flexshard_metrics(samples))
    measured["normative"].update(recshard_metrics(spec.dataset))
    return measured
