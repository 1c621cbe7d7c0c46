"""BagPipe's released oracle beside heraldbench's ``bagpipe`` scheduler, batch by batch.

BagPipe (uw-mad-dash/bagpipe, ``BagPipe/oraclecacher.py``) runs an oracle that looks
``lookahead_value`` batches ahead and sends each trainer, per batch, its slice of the batch, the
rows to prefetch, the TTL updates (rows kept until their last use in the window) and the
gradient sync classes. The released oracle is driven on the trace by :mod:`._bagpipe_driver`;
heraldbench's decisions come from its decision stream; both are put in the oracle's terms by
:mod:`._bagpipe_sets` and compared per batch: partition, prefetch set, lease, sync-now,
sync-later and no-sync sets, and the rows evicted and written back after each batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance import _bagpipe_driver
from heraldbench.platform.conformance._bagpipe_sets import QUANTITIES, BatchRows, ours, released
from heraldbench.platform.conformance._checkout import git_commit, require_checkout, trace_ids
from heraldbench.platform.conformance._fae_bagpipe_run import (
    cached_result,
    local_ids,
    only_on_each_side,
    run_driver,
    variant_spec,
)
from heraldbench.platform.conformance._report import ConformanceError, Difference, SystemReport
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import BagPipe, BagPipeSpec, from_spec
from heraldbench.platform.sim import decisions
from heraldbench.platform.spec import ExperimentSpec

__all__ = ["ORACLE", "check_reference", "compare"]

#: The released file this check drives, relative to the checkout.
ORACLE = "BagPipe/oraclecacher.py"
_LOADER = "BagPipe/load_csv.py"
#: Sample positions listed per worker in a partition difference.
_SHOWN = 20

_TAIL = ("oraclecacher.py stops when its loader runs dry, with lookahead_value batches still "
         "queued: the last L batches never run; the normative variant runs every batch")
_SLICES = ("oraclecacher.py gives trainer t samples [t*m, (t+1)*m) of each batch; the normative "
           "variant partitions each batch at random, as naive does")
_CAPACITY = ("oraclecacher.py stores cache_size and never reads it: every row of the window is "
             "prefetched and leased; the normative variant bounds the cache by K rows (rows that "
             "do not fit are fetched on demand, admitted later or staged for one iteration)")
_EXPLAINED = {"partition": _SLICES, "prefetch": _CAPACITY, "lease": _CAPACITY,
              "evicted": _CAPACITY, "written_back": _CAPACITY}  # fmt: skip


def check_reference(path: Path) -> str | None:
    """The checkout's git commit (None outside git); ConformanceError when ``path`` is not a
    BagPipe checkout."""
    return require_checkout(Path(path), "BagPipe", [ORACLE])


def compare(
    reference: Path, spec: ExperimentSpec, trace: TraceSource, *, variant: str, cache_dir: Path
) -> SystemReport:
    """Run BagPipe's oracle and heraldbench's ``bagpipe`` (``variant``) on ``trace``; compare
    every batch both ran."""
    require_checkout(Path(reference), "BagPipe", [ORACLE, _LOADER])
    scheduler = _scheduler(spec, variant)
    ids = trace_ids(trace, limit=None)
    _check_takes(ids.shape[0] // scheduler.global_batch, scheduler.lookahead)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    rows = BatchRows(ids, scheduler.global_batch)
    mine = _heraldbench_sets(spec, trace, scheduler, rows)  # a cache it refuses stops here
    result = _run_released(Path(reference), trace, ids, scheduler, cache_rows, Path(cache_dir))
    return _report(str(reference), git_commit(Path(reference)), spec, trace, scheduler,
                   result, (rows, mine))  # fmt: skip


def _heraldbench_sets(spec: ExperimentSpec, trace: TraceSource, scheduler: BagPipe,
                      rows: BatchRows) -> list[dict[str, Any]]:  # fmt: skip
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    stream = decisions(trace, scheduler, cache_rows=cache_rows, policy=spec.cache.policy,
                       consistency=spec.consistency)  # fmt: skip
    return ours(stream, rows, scheduler.workers, scheduler.lookahead, scheduler.global_batch)


def _report(reference: str, commit: str | None, spec: ExperimentSpec, trace: TraceSource,
            scheduler: BagPipe, result: dict[str, np.ndarray],
            ours_done: tuple[BatchRows, list[dict[str, Any]]] | None = None) -> SystemReport:
    """heraldbench's ``scheduler`` on ``trace`` (its sets, if ``ours_done``) against the
    released oracle's ``result`` (the driver's arrays)."""
    if ours_done is None:
        rows = BatchRows(trace_ids(trace, limit=None), scheduler.global_batch)
        ours_done = rows, _heraldbench_sets(spec, trace, scheduler, rows)
    rows, mine = ours_done
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    theirs = released(result, rows)
    setting = {
        "trace": trace.describe(), "workers": scheduler.workers,
        "batch_size": scheduler.batch_size, "cache_rows": cache_rows,
        "scheduler": scheduler.spec.model_dump(), "cleanup_interval": scheduler.cleanup_interval,
        "evictions_compared_before": _last_cleanup(len(mine), scheduler.cleanup_interval),
    }  # fmt: skip
    variant = scheduler.spec.variant  # type: ignore[attr-defined]
    report = SystemReport(
        system="bagpipe", reference=reference, commit=commit, variant=variant, setting=setting,
        iterations=min(len(mine), len(theirs)),
    )  # fmt: skip
    _fill(report, mine, theirs, variant)
    return report


def _scheduler(spec: ExperimentSpec, variant: str) -> BagPipe:
    scheduler = from_spec(variant_spec(spec, BagPipeSpec, variant), workers=spec.cluster.workers,
                          batch_size=spec.cluster.batch_size, seed=spec.seed)  # fmt: skip
    assert isinstance(scheduler, BagPipe)
    return scheduler


def _check_takes(batches: int, lookahead: int) -> None:
    if batches <= lookahead:
        raise ConformanceError(
            f"dataset.samples gives {batches} global batches, not more than "
            f"schedulers.bagpipe.lookahead {lookahead}: oraclecacher.py emits batches - "
            "lookahead of them, so none would be compared"
        )


def _run_released(reference: Path, trace: TraceSource, ids: np.ndarray, scheduler: BagPipe,
                  cache_rows: int, cache_dir: Path) -> dict[str, np.ndarray]:  # fmt: skip
    local = local_ids(ids, trace)
    sizes = np.array(trace.layout.sizes, np.int64)
    spec: BagPipeSpec = scheduler.spec  # type: ignore[assignment]
    knobs = [str(scheduler.workers), str(scheduler.global_batch), str(spec.lookahead),
             repr(spec.cleanup_proportion), str(cache_rows)]  # fmt: skip

    def produce(folder: Path) -> Path:
        np.save(folder / "ids.npy", local)
        np.save(folder / "sizes.npy", sizes)
        run_driver(_bagpipe_driver.__name__,
                   [str(reference.resolve()), "ids.npy", "sizes.npy", *knobs], folder, "BagPipe")
        return folder / "result.npz"

    inputs = [(reference / ORACLE).read_bytes(), (reference / _LOADER).read_bytes(),
              Path(_bagpipe_driver.__file__).read_bytes(), local.tobytes(), sizes.tobytes(),
              " ".join(knobs).encode()]  # fmt: skip
    return cached_result(cache_dir, "bagpipe", inputs, produce)


def _last_cleanup(iterations: int, interval: int) -> int:
    """The last cleanup point of the run: evictions of later batches happen after it ends."""
    return ((iterations - 1) // interval) * interval if iterations else 0


def _fill(report: SystemReport, mine: list[dict[str, Any]], theirs: list[dict[str, Any]],
          variant: str) -> None:  # fmt: skip
    cutoff = report.setting["evictions_compared_before"]
    report.totals["iterations"] = (len(mine), len(theirs))
    if len(mine) != len(theirs):
        report.differences.append(Difference(
            min(len(mine), len(theirs)), "iterations", len(mine), len(theirs),
            _TAIL if variant == "normative" else None,
        ))  # fmt: skip
    first: dict[str, Difference] = {}
    sums = {name: [0, 0] for name in QUANTITIES}
    for b in range(report.iterations):
        entry: dict[str, Any] = {"iteration": b}
        for name in QUANTITIES:
            if name in ("evicted", "written_back") and b >= cutoff:
                continue
            a, r = mine[b][name], theirs[b][name]
            entry[name] = (_size(a), _size(r))
            sums[name][0] += _size(a)
            sums[name][1] += _size(r)
            if name not in first and not _equal(a, r):
                first[name] = Difference(b, name.replace("_", " "), *_sides(a, r),
                                         _EXPLAINED.get(name) if variant == "normative" else None)
        report.per_iteration.append(entry)
    report.totals.update({name.replace("_", " "): tuple(v) for name, v in sums.items()})
    report.differences.extend(first[name] for name in QUANTITIES if name in first)


def _size(value: Any) -> int:
    if isinstance(value, list):
        return sum(int(v.size) for v in value)
    return int(value.shape[-1])


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _sides(a: Any, b: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each side's size and what only it has: ids, (row, end) pairs, or per worker the first
    sample positions."""
    if isinstance(a, list):
        return ({"per worker": [v[:_SHOWN].tolist() for v in a]},
                {"per worker": [v[:_SHOWN].tolist() for v in b]})  # fmt: skip
    if a.ndim == 2:
        return only_on_each_side([tuple(p) for p in a.T.tolist()], [tuple(p) for p in b.T.tolist()])
    return only_on_each_side(a.tolist(), b.tolist())
