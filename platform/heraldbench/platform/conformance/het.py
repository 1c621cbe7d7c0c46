"""HET: the released embedding cache (PKU-DAIR/Hetu, ``hetu/v1/src/hetu_cache``) beside
heraldbench's ``het``.

The released caches (LRU, LFU, LFUOpt) are compiled from the checkout with our driver
(``shims/het_shim.cc``), which answers their server calls in process with the released
server's version rule (``hetu/v1/ps-lite/src/PSFhandle_embedding.cc``). HET's cache does not
partition: its workers read the batches heraldbench's ``het`` assigns them (naive's random
partition), so both sides see the same reads. Compared per iteration: miss pulls, update
pulls, evict pushes, update pushes and version checks; in total also the copies still holding
updates at the end (heraldbench's flush).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance._build import SHIMS, Extension, build_extension
from heraldbench.platform.conformance._checkout import require_checkout, trace_ids
from heraldbench.platform.conformance._compare import Side, side_by_side
from heraldbench.platform.conformance._report import ConformanceError, SystemReport
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import HETSpec, from_spec
from heraldbench.platform.sim import simulate
from heraldbench.platform.spec import ExperimentSpec

__all__ = ["COUNTS", "check_reference", "compare", "heraldbench_run", "released_run"]

SYSTEM = "HET (PKU-DAIR/Hetu)"
_CACHE = "hetu/v1/src/hetu_cache"
_SOURCES = tuple(f"{_CACHE}/src/{name}.cc" for name in
                 ("cache", "lru_cache", "lfu_cache", "lfuopt_cache", "hetu_client", "embedding"))
_SERVER = "hetu/v1/ps-lite/src/PSFhandle_embedding.cc"  # the rule the stand-in server applies
_EXPECTED = (*_SOURCES, f"{_CACHE}/include/cache.h", _SERVER)
#: Counted per iteration, in the shim's column order; heraldbench's series of the same names.
COUNTS = ("miss_pull", "update_pull", "evict_push", "update_push", "metadata")

#: The released choices heraldbench's normative HET makes differently, each with where it is.
KNOWN = {
    "touch order": f"{_CACHE}/src/cache.cc: a worker's keys are looked up sorted (Unique), in "
    "ascending id (heraldbench: first occurrence), and that order is the cache's recency order",
    "lfu inserts": f"{_CACHE}/src/lfu_cache.cc, lfuopt_cache.cc: misses are inserted after the "
    "lookups and each evicts the row with the fewest uses at once, often one inserted just "
    "before (heraldbench: after the reads, never a row read); a use counts at the lookup and "
    "again at the update",
}


def check_reference(path: Path) -> str | None:
    """The checkout's commit, once ``path`` holds HET's released cache and server."""
    return require_checkout(path, SYSTEM, _EXPECTED)


def released_run(reference: Path, ids: np.ndarray, assign: np.ndarray, *, rows: int,
                 cache_rows: int, policy: str, bound: int,
                 cache_dir: Path) -> dict[str, Any]:  # fmt: skip
    """The released caches on ``ids`` (N, F) under the partition ``assign`` (T, W·m): per
    quantity of :data:`COUNTS` a (T,) array, and ``flush``."""
    module = build_extension(Extension(
        "_het_shim", (SHIMS / "het_shim.cc", *(reference / source for source in _SOURCES)),
        (SHIMS / "include", reference / _CACHE / "include"),
    ), cache_dir)  # fmt: skip
    workers = int(assign.max()) + 1
    out = module.run(np.ascontiguousarray(ids, np.uint64), np.ascontiguousarray(assign, np.int64),
                     workers, rows, cache_rows, policy, bound)  # fmt: skip
    counts = out["counts"].sum(axis=1)
    return {name: counts[:, j] for j, name in enumerate(COUNTS)} | {"flush": int(out["flush"])}


def heraldbench_run(spec: ExperimentSpec, trace: TraceSource, het: HETSpec,
                    cache_rows: int) -> tuple[np.ndarray, dict[str, np.ndarray], int]:  # fmt: skip
    """heraldbench's ``het`` simulated on the trace: its partitions (T, W·m), per-iteration
    counts and flush pushes."""
    scheduler = from_spec(het, workers=spec.cluster.workers, batch_size=spec.cluster.batch_size,
                          seed=spec.seed)  # fmt: skip
    result = simulate(trace, scheduler, cache_rows=cache_rows, policy=spec.cache.policy,
                      consistency=spec.consistency, record_partitions=True)  # fmt: skip
    counts = {name: result.series[name].astype(np.int64) for name in COUNTS}
    return result.partitions.astype(np.int64), counts, int(result.counts.flush_push)


def compare(reference: Path, spec: ExperimentSpec, trace: TraceSource, *, variant: str,
            cache_dir: Path) -> SystemReport:  # fmt: skip
    """HET's released cache and heraldbench's ``het`` (``variant``) on ``trace``."""
    commit = check_reference(reference)
    index, het = _het_entry(spec, variant)
    policy = het.policy or spec.cache.policy
    ids = trace_ids(trace)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    assign, ours, our_flush = heraldbench_run(spec, trace, het, cache_rows)
    if len(assign) == 0:
        raise ConformanceError(f"the trace has {len(ids):,} samples: not one batch of "
                               f"{spec.cluster.workers * spec.cluster.batch_size:,}")  # fmt: skip
    theirs = released_run(reference, ids, assign, rows=trace.layout.total_rows,
                          cache_rows=cache_rows, policy=policy, bound=het.bound,
                          cache_dir=cache_dir)  # fmt: skip
    flush = theirs.pop("flush")
    setting = {
        "trace": trace.describe(), "workers": spec.cluster.workers,
        "batch_size": spec.cluster.batch_size, "cache_rows": cache_rows, "policy": policy,
        "scheduler": {"index": index, **het.model_dump()},
        "flush": {"heraldbench": our_flush, "released": flush},
    }  # fmt: skip
    report = SystemReport("het", str(reference), commit, variant, setting, len(assign))
    causes = ("lfu inserts", "touch order") if policy != "lru" else ("touch order",)
    explanation = None if variant == "released" else "; or ".join(KNOWN[c] for c in causes)
    return side_by_side(report, Side(ours), Side(theirs), lambda what: explanation)


def _het_entry(spec: ExperimentSpec, variant: str) -> tuple[int | None, HETSpec]:
    """The spec's first ``het`` entry (or the default one) with ``variant`` set."""
    found = next(((i, s) for i, s in enumerate(spec.schedulers) if s.kind == "het"), None)
    index, entry = found if found is not None else (None, HETSpec())
    if entry.clock_unit != "occurrence":  # type: ignore[attr-defined]
        raise ConformanceError(f"schedulers[{index}].clock_unit: the released cache counts an "
                               "update per id occurrence; got 'iteration'")  # fmt: skip
    return index, entry.model_copy(update={"variant": variant})  # type: ignore[return-value]

