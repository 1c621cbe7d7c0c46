"""The round trip: a real trace R against S, its profile generated with as many samples as R.

Above the data layer (it runs the schedulers through the runner), beside ``calibrate_cli``.

For every shape (W workers, a cache of a fraction of R's distinct rows) every registered scheduler
runs at its defaults on R and on S; their relative pull, push and overall (naive = 1, each trace
against its own naive) are compared. The LRU miss-ratio curves of R and S are compared at caches of
fractions of R's distinct rows. Targets (docs/workloads.md): every relative figure within
``TRAFFIC_TOLERANCE``, the curve within ``MRC_TOLERANCE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heraldbench.platform.data import FeaturesSpec, InMemoryTrace, TraceSource, with_features
from heraldbench.platform.data.attributes import split_attributes
from heraldbench.platform.data.ragged import full_lengths, length_law, read_stream
from heraldbench.platform.data.workload.schema import WorkloadProfile
from heraldbench.platform.data.workload.stats import miss_ratio_curve
from heraldbench.platform.data.workload.trace import profile_trace
from heraldbench.platform.runner import fill_relative, simulate_run
from heraldbench.platform.schedulers import registered
from heraldbench.platform.spec import parse_spec

__all__ = [
    "DEFAULT_SHAPES",
    "MRC_TOLERANCE",
    "TRAFFIC_TOLERANCE",
    "CheckResult",
    "Shape",
    "check_round_trip",
    "compare_traces",
    "parse_shape",
    "round_trip_spec",
]

TRAFFIC_TOLERANCE = 0.03
MRC_TOLERANCE = 0.02
#: Samples per worker at most; fewer where BagPipe's replicated cache could not hold a batch.
MAX_BATCH = 32


@dataclass(frozen=True)
class Shape:
    """W workers with caches of ``cache_fraction`` of the real trace's distinct rows."""

    workers: int
    cache_fraction: float

    def label(self) -> str:
        return f"W={self.workers}, cache {self.cache_fraction:.0%}"

    def sizes(self, distinct: int, fields: int) -> tuple[int, int]:
        """(cache rows, samples per worker) for a real trace of ``distinct`` rows over ``fields``
        tables: caches a share of its rows, the largest batch whose ids fit in one."""
        cache_rows = max(1, int(self.cache_fraction * distinct))
        return cache_rows, batch_for(cache_rows, self.workers, fields)


DEFAULT_SHAPES = (Shape(4, 0.02), Shape(8, 0.10), Shape(16, 0.20))


def parse_shape(text: str) -> Shape:
    """``W:FRACTION`` (``8:0.1``) as a :class:`Shape`; ValueError names what is wrong."""
    workers, sep, fraction = text.partition(":")
    try:
        shape = Shape(int(workers), float(fraction))
    except ValueError:
        raise ValueError(f"shape {text!r}: expected WORKERS:CACHE_FRACTION, e.g. 8:0.1") from None
    if not sep or not 1 <= shape.workers <= 64 or not 0 < shape.cache_fraction <= 1:
        raise ValueError(f"shape {text!r}: workers in 1..64 and a cache fraction in (0, 1]")
    return shape


def batch_for(cache_rows: int, workers: int, fields: int) -> int:
    """The largest power of two up to MAX_BATCH with a global batch's ids fitting in the cache."""
    m = MAX_BATCH
    while m > 1 and workers * m * fields > cache_rows:
        m //= 2
    return m


@dataclass
class CheckResult:
    """Per (shape, scheduler, total): real and synthetic relative traffic; both miss-ratio curves."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    mrc_real: dict[str, float] = field(default_factory=dict)
    mrc_synthetic: dict[str, float] = field(default_factory=dict)
    distinct_rows: int = 0
    samples: int = 0
    #: per ragged table: the ids-per-sample law on both traces (:func:`compare_lengths`)
    lengths: list[dict[str, Any]] = field(default_factory=list)

    @property
    def worst_traffic(self) -> float:
        return max((abs(r["difference"]) for r in self.rows), default=0.0)

    @property
    def worst_mrc(self) -> float:
        return max((abs(self.mrc_synthetic[k] - v) for k, v in self.mrc_real.items()), default=0.0)

    @property
    def met(self) -> bool:
        return self.worst_traffic <= TRAFFIC_TOLERANCE and self.worst_mrc <= MRC_TOLERANCE

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "distinct_rows": self.distinct_rows,
            "traffic_tolerance": TRAFFIC_TOLERANCE,
            "mrc_tolerance": MRC_TOLERANCE,
            "worst_traffic_difference": round(self.worst_traffic, 4),
            "worst_mrc_difference": round(self.worst_mrc, 4),
            "met": self.met,
            "traffic": self.rows,
            "miss_ratio_curve": {"real": self.mrc_real, "synthetic": self.mrc_synthetic},
        } | ({"ids_per_sample_law": self.lengths} if self.lengths else {})


def check_round_trip(
    real: TraceSource, profile: WorkloadProfile, *, shapes: tuple[Shape, ...] = DEFAULT_SHAPES,
    seed: int = 0, progress: Callable[[str], None] | None = None,
    features: FeaturesSpec | None = None,
) -> CheckResult:  # fmt: skip
    """Compare ``real`` with ``profile`` generated at the same length (see the module docstring),
    both given ``features`` (multi-hot, a sequence) when named."""
    synthetic = profile_trace(profile, samples=real.num_samples, seed=seed)
    return compare_traces(with_features(real, features), with_features(synthetic, features),
                          shapes=shapes, progress=progress)


def compare_traces(
    real: TraceSource, synthetic: TraceSource, *, shapes: tuple[Shape, ...] = DEFAULT_SHAPES,
    progress: Callable[[str], None] | None = None,
) -> CheckResult:  # fmt: skip
    """Every scheduler's relative traffic and the miss-ratio curve of ``synthetic`` against
    ``real``, with caches sized on ``real``'s distinct rows."""
    attributes = {source.name for source in split_attributes(real)[1]}
    real, synthetic = real.materialize(), synthetic.materialize()
    distinct = int(len(np.unique(real.ids)))
    result = CheckResult(samples=real.num_samples, distinct_rows=distinct,
                         lengths=compare_lengths(real, synthetic, attributes))
    # each trace's own widths: a fitted attribute's largest set may be smaller than the log's
    result.mrc_real = _rounded(miss_ratio_curve(
        read_stream(real.ids, real.lengths, real.layout.table_widths), distinct))
    result.mrc_synthetic = _rounded(miss_ratio_curve(
        read_stream(synthetic.ids, synthetic.lengths, synthetic.layout.table_widths), distinct))
    for shape in shapes:
        cache_rows, batch = shape.sizes(distinct, real.layout.ids_per_sample)
        spec = round_trip_spec(shape.workers, batch, cache_rows)
        both = {}
        for name, trace in (("real", real), ("synthetic", synthetic)):
            if progress:
                progress(f"{shape.label()}: {name}")
            runs = [simulate_run(spec, s, trace=trace) for s in spec.schedulers]
            fill_relative(runs)
            both[name] = {run.label: run.relative for run in runs}
        result.rows.extend(_compare(shape, batch, cache_rows, both))
    return result


def compare_lengths(real: InMemoryTrace, synthetic: InMemoryTrace,
                    attributes: set[str] = frozenset()) -> list[dict[str, Any]]:  # fmt: skip
    """Per ragged table, the law of ids a sample reads on each trace: the mean, and the largest
    difference between the two laws' cumulative shares (Kolmogorov's distance). For an
    attribute table (``attributes``: a profile fits its rows one by one), also the largest
    difference between a row's shares of the table's reads."""
    rows = []
    layout = real.layout
    either = [any(r) for r in zip(*(t.layout.ragged or (False,) * layout.num_tables
                                     for t in (real, synthetic)), strict=True)]
    for t, ragged in enumerate(either):
        if not ragged:
            continue
        width = layout.table_widths[t]
        laws = [length_law(_lengths(trace)[:, t], width) for trace in (real, synthetic)]
        means = [float(law @ np.arange(width + 1)) for law in laws]
        row = {"table": layout.names[t], "real_mean": round(means[0], 3),
               "synthetic_mean": round(means[1], 3),
               "max_cdf_difference": round(float(np.abs(
                   np.cumsum(laws[0]) - np.cumsum(laws[1])).max()), 4)}
        if layout.names[t] in attributes:
            shares = [_row_shares(trace, t) for trace in (real, synthetic)]
            row["max_row_share_difference"] = round(float(np.abs(shares[0] - shares[1]).max()), 4)
        rows.append(row)
    return rows


def _lengths(trace: InMemoryTrace) -> np.ndarray:
    """(n, T) ids each sample reads per table: the full widths where no table is ragged."""
    if trace.lengths is not None:
        return trace.lengths
    return full_lengths(trace.layout.table_widths, trace.num_samples)


def _row_shares(trace: InMemoryTrace, table: int) -> np.ndarray:
    """Each row's share of the reads of one table (pads left out)."""
    layout = trace.layout
    start = int(sum(layout.table_widths[:table]))
    width = layout.table_widths[table]
    read = read_stream(trace.ids[:, start:start + width], _lengths(trace)[:, table:table + 1],
                       (width,)) - int(layout.offsets[table])
    return np.bincount(read, minlength=layout.sizes[table]) / max(1, read.size)


def round_trip_spec(workers: int, batch: int, cache_rows: int):
    """The round trip's experiment at one shape: every registered scheduler at its defaults (the
    traces are given to each run, so the dataset named here is never opened)."""
    return parse_spec({
        "name": "round-trip",
        "dataset": {"kind": "synthetic-criteo", "samples": 1},  # the traces are given
        "cluster": {"workers": workers, "batch_size": batch},
        "cache": {"rows": cache_rows},
        "schedulers": [{"kind": kind} for kind in sorted(registered())],
        "lower_bound": False,
    })  # fmt: skip


def _compare(shape: Shape, batch: int, cache_rows: int, both: dict) -> list[dict[str, Any]]:
    rows = []
    for label, real in both["real"].items():
        synthetic = both["synthetic"][label]
        for total in ("pull", "push", "overall"):
            r, s = real[total], synthetic[total]
            if r is None or s is None:
                continue
            rows.append({
                "workers": shape.workers, "cache_fraction": shape.cache_fraction,
                "batch_size": batch, "cache_rows": cache_rows, "scheduler": label,
                "total": total, "real": round(r, 4), "synthetic": round(s, 4),
                "difference": round(s - r, 4),
            })  # fmt: skip
    return rows


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in values.items()}
