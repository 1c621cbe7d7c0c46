"""Herald: the released LAIA scheduler (HKUST-SING/herald, ``laia/``) beside heraldbench's.

The released scheduler is compiled from the checkout with our driver (``shims/herald_shim.cc``)
and run on the trace's samples: every iteration's partition, each worker's sync plan and the
counters of the released loop (miss pulls, update pulls, evictions of valid keys, the plans'
sizes as update pushes). heraldbench's ``herald`` runs on the same trace, and the two are
compared iteration by iteration:

* partitions: the worker of each sample of the batch;
* sync plans: the rows each worker pushes after iteration t, for the readers of t + 1 (the
  released plan of iteration t + 1, which its loader hands out with batch t);
* counts: miss pulls, update pulls, evict pushes, update pushes.

The released loop runs one more allocation after the last batch (the next epoch's first batch,
``launch()``); heraldbench replays the trace once and flushes instead. That allocation is shown
in the setting (``after_last``), not compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance._build import SHIMS, Extension, build_extension
from heraldbench.platform.conformance._checkout import require_checkout, trace_ids
from heraldbench.platform.conformance._compare import Side, side_by_side
from heraldbench.platform.conformance._report import ConformanceError, SystemReport
from heraldbench.platform.contract import Read, Send
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import HeraldSpec, from_spec
from heraldbench.platform.sim import decisions
from heraldbench.platform.spec import ExperimentSpec

__all__ = ["COUNTS", "HeraldRun", "check_reference", "compare", "heraldbench_run", "released_run"]

SYSTEM = "Herald (HKUST-SING/herald)"
_SOURCES = ("laia/src/laia_scheduler.cc", "laia/src/array.cc", "laia/src/thread_pool.cc",
            "laia/src/utils.cc")  # fmt: skip
_EXPECTED = (*_SOURCES, "laia/include/laia_scheduler.h", "laia/include/mini_lru_cache.h")
#: Counted per iteration, in the shim's column order.
COUNTS = ("miss_pull", "update_pull", "evict_push", "update_push")

#: The released choices heraldbench's normative rules make differently, each with where it is.
KNOWN = {
    "touch order": "laia/src/laia_scheduler.cc, launch(): a worker reads its keys from an "
    "ordered set, in ascending id (heraldbench: first occurrence), and that order is the LRU "
    "order",
    "eviction on insert": "laia/include/mini_lru_cache.h, insert(): a miss over capacity evicts "
    "the least recently used key at once, possibly one of the batch not read yet (heraldbench: "
    "after the reads, never a row read)",
    "pushed and read": "laia/src/laia_scheduler.cc, launch(): a worker outdates its sync plan's "
    "keys before its reads, so a key it pushes for others and reads itself is an update pull "
    "(heraldbench: a hit)",
    "co-writers": "laia/include/mini_lru_cache.h, get(): every reader's copy is valid after the "
    "iteration, as under consistency: optimistic (strict leaves co-writers' copies outdated)",
    "lru only": "laia/include/mini_lru_cache.h is an LRU cache (the spec asks for LFU)",
}
#: Which known differences can show first in each quantity, most direct first.
_CAUSES = {
    "partition": ("co-writers", "touch order", "eviction on insert", "lru only"),
    "sync plan": ("co-writers", "touch order", "eviction on insert", "lru only"),
    "miss_pull": ("eviction on insert", "touch order", "lru only", "co-writers"),
    "evict_push": ("eviction on insert", "touch order", "lru only", "co-writers"),
    "update_pull": ("pushed and read", "co-writers", "touch order", "eviction on insert"),
    "update_push": ("co-writers", "touch order", "eviction on insert", "lru only"),
}


@dataclass
class HeraldRun:
    """One run's decisions and counts, per iteration.

    Attributes:
        assign: (T, W·m) worker of each sample of each batch.
        plans: per iteration t < T − 1, per worker, the rows pushed after t (sorted).
        counts: per quantity of :data:`COUNTS`, per iteration: (T,), but update pushes (T − 1,)
            (those after t, for the readers of t + 1).
        after_last: the released extra allocation after the last batch: its plan's rows and
            its reads (empty for heraldbench, which flushes instead).
        evictions: copies evicted, dirty or not (heraldbench's run; None for the released).
    """

    assign: np.ndarray
    plans: list[tuple[np.ndarray, ...]]
    counts: dict[str, np.ndarray]
    after_last: dict[str, int]
    evictions: int | None = None

    def side(self) -> Side:
        partitions = [(assign,) for assign in self.assign]
        return Side(self.counts, {"partition": partitions, "sync plan": self.plans})


def check_reference(path: Path) -> str | None:
    """The checkout's commit, once ``path`` holds Herald's released scheduler."""
    return require_checkout(path, SYSTEM, _EXPECTED)


def released_run(reference: Path, ids: np.ndarray, *, workers: int, batch_size: int,
                 cache_rows: int, cache_dir: Path) -> HeraldRun:  # fmt: skip
    """The released scheduler on ``ids`` (N, F), built into ``cache_dir`` if it is not there."""
    module = build_extension(Extension(
        "_herald_shim",
        (SHIMS / "herald_shim.cc", *(reference / source for source in _SOURCES)),
        (SHIMS / "include", reference / "laia" / "include"),
    ), cache_dir)  # fmt: skip
    global_batch = workers * batch_size
    batches = len(ids) // global_batch
    if batches < 2:
        raise ConformanceError(f"the trace has {len(ids):,} samples: fewer than two batches of "
                               f"{global_batch:,} (workers × batch_size)")  # fmt: skip
    out = module.run(np.ascontiguousarray(ids, np.uint64), workers, batch_size, batches,
                     cache_rows)  # fmt: skip
    assign = np.empty((batches, global_batch), np.int64)
    for t in range(batches):
        positions = out["dist"][t] - t * global_batch  # (W, m) samples, as batch positions
        assign[t, positions.ravel()] = np.repeat(np.arange(workers), batch_size)
    plans = _plans(out["plan_sizes"], out["plan_keys"])
    counts = out["counts"].sum(axis=1)  # (T + 1, 4): summed over workers
    pushes = np.array([sum(p.size for p in plan) for plan in plans])
    return HeraldRun(
        assign=assign,
        plans=plans[1:batches],  # the plan of t + 1 is pushed after t
        counts={"miss_pull": counts[:batches, 0], "update_pull": counts[:batches, 1],
                "evict_push": counts[:batches, 2], "update_push": pushes[1:batches]},
        after_last={"plan rows": int(pushes[batches]), "miss pulls": int(counts[batches, 0]),
                    "update pulls": int(counts[batches, 1])},
    )  # fmt: skip


def _plans(sizes: np.ndarray, keys: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    ends = np.cumsum(sizes.ravel())
    flat = np.split(keys.astype(np.int64), ends[:-1])
    workers = sizes.shape[1]
    return [tuple(flat[t * workers : (t + 1) * workers]) for t in range(sizes.shape[0])]


def heraldbench_run(spec: ExperimentSpec, trace: TraceSource, herald: HeraldSpec,
                    cache_rows: int) -> HeraldRun:  # fmt: skip
    """heraldbench's ``herald`` (as ``herald`` says: its variant) on the trace, from the decision
    stream every executor carries out."""
    workers = spec.cluster.workers
    scheduler = from_spec(herald, workers=workers, batch_size=spec.cluster.batch_size,
                          seed=spec.seed)  # fmt: skip
    assign, plans, counts = [], [], []
    evictions = 0
    for dec in decisions(trace, scheduler, cache_rows=cache_rows, policy=spec.cache.policy,
                         consistency=spec.consistency):  # fmt: skip
        assign.append(dec.assign.astype(np.int64))
        update = dec.sent_how == Send.UPDATE
        plans.append(tuple(np.sort(dec.sent_ids[update & (dec.sent_w == w)]).astype(np.int64)
                           for w in range(workers)))  # fmt: skip
        counts.append([np.count_nonzero(dec.touched_kind == Read.MISS),
                       np.count_nonzero(dec.touched_kind == Read.UPDATE),
                       np.count_nonzero(dec.sent_how == Send.EVICT), np.count_nonzero(update)])
        evictions += dec.evicted_ids.size
    table = np.array(counts, np.int64).reshape(-1, len(COUNTS))
    table_counts = {name: table[:, j] for j, name in enumerate(COUNTS)}
    table_counts["update_push"] = table_counts["update_push"][:-1]  # none after the last batch
    return HeraldRun(
        assign=np.array(assign), plans=plans[:-1], counts=table_counts, after_last={},
        evictions=evictions,
    )  # fmt: skip


def compare(reference: Path, spec: ExperimentSpec, trace: TraceSource, *, variant: str,
            cache_dir: Path) -> SystemReport:  # fmt: skip
    """Herald's released scheduler and heraldbench's ``herald`` (``variant``) on ``trace``."""
    commit = check_reference(reference)
    index, herald = _herald_entry(spec, variant)
    ids = trace_ids(trace)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    theirs = released_run(reference, ids, workers=spec.cluster.workers,
                          batch_size=spec.cluster.batch_size, cache_rows=cache_rows,
                          cache_dir=cache_dir)  # fmt: skip
    ours = heraldbench_run(spec, trace, herald, cache_rows)
    facts = {"strict": herald.variant == "normative" and spec.consistency == "strict",
             "lfu": herald.variant == "normative" and spec.cache.policy != "lru",
             "evictions": bool(ours.evictions or theirs.counts["evict_push"].any())}
    setting: dict[str, Any] = {
        "trace": trace.describe(), "workers": spec.cluster.workers,
        "batch_size": spec.cluster.batch_size, "cache_rows": cache_rows,
        "scheduler": {"index": index, **herald.model_dump()},
        "ids_rounded_by_released_loader": int(np.count_nonzero(
            ids.astype(np.float32).astype(np.int64) != ids)),
        "after_last": theirs.after_last,
    }  # fmt: skip
    report = SystemReport("herald", str(reference), commit, variant, setting, len(ours.assign))
    return side_by_side(report, ours.side(), theirs.side(),
                        lambda what: _explain(what, variant, facts))  # fmt: skip


def _herald_entry(spec: ExperimentSpec, variant: str) -> tuple[int | None, HeraldSpec]:
    """The spec's first ``herald`` entry (or the default one) with ``variant`` set."""
    found = next(((i, s) for i, s in enumerate(spec.schedulers) if s.kind == "herald"), None)
    index, entry = found if found is not None else (None, HeraldSpec())
    if entry.lookahead != 1:  # type: ignore[attr-defined]
        raise ConformanceError(
            f"schedulers[{index}].lookahead: the released scheduler looks one iteration ahead; "
            f"got {entry.lookahead}"  # type: ignore[attr-defined]
        )
    return index, entry.model_copy(update={"variant": variant})  # type: ignore[return-value]


def _explain(what: str, variant: str, facts: dict[str, bool]) -> str | None:
    """The known difference that shows first in ``what``, for a normative comparison; None for
    the released variant (which has every known difference switched to the released choice)."""
    if variant == "released":
        return None
    applies = {
        "co-writers": facts["strict"],
        "lru only": facts["lfu"],
        "touch order": facts["evictions"],
        "eviction on insert": facts["evictions"],
        "pushed and read": True,
    }
    causes = [c for c in _CAUSES.get(what, ()) if applies[c]]
    return "; or ".join(KNOWN[c] for c in causes[:2]) if causes else None
