"""Per-access reference simulator: a plain, literal reading of ``docs/semantics.md``.

This module exists to be obviously correct, not fast. It walks every iteration, every worker and
every row with ordinary dicts and sets, and checks the invariants of the semantics page after every
iteration. The vectorised simulator (:mod:`heraldbench.platform.sim`) is held to it count for count
by ``tests/platform/sim/test_differential.py``. Use it for traces of at most a few thousand samples.

**How on-demand(L) sees the future.** At the end of iteration b, the on-demand rule needs the
working sets of iterations b+1 … b+L, and those depend on the partitions of those iterations. A
partition depends only on which rows are cached and valid, and cache contents and validity never
depend on *when* a dirty copy is pushed (a push keeps validity; eviction ignores dirtiness; a pull
happens whatever the push timing). So the reference runs the trace twice:

1. a first pass with write-through sync, which records every iteration's working sets;
2. the real pass with the scheduler's sync rule, which reads the future from that record, and
   asserts that the working sets it computes itself are the recorded ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from heraldbench.platform.data import SampleChunk, TraceSource

__all__ = ["COUNT_KEYS", "KINDS", "reference_simulate"]

#: kind -> (partition, sync rule), the table of docs/semantics.md "Schedulers".
KINDS: dict[str, tuple[str, str]] = {
    "naive": ("random", "write-through"),
    "herald": ("location-aware", "on-demand"),
    "herald-sync-only": ("random", "on-demand"),
    "herald-partition-only": ("location-aware", "write-through"),
}

COUNT_KEYS = (
    "accesses",
    "lookups",
    "hits",
    "miss_pull",
    "update_pull",
    "evict_push",
    "update_push",
    "flush_push",
    "allreduce",
)

WorkingSets = list[list[int]]  # per worker: U_w in touch order
Batch = list[list[int]]  # per sample of a global batch: the ids it reads, in field order


@dataclass
class _Copy:
    """One cached copy of a row at one worker. Partial = dirty and not valid."""

    valid: bool
    dirty: bool
    last_touch: tuple[int, int]  # (iteration, position in that iteration's touch order)
    uses: int  # iterations that touched the row since it was (re)inserted

    @property
    def partial(self) -> bool:
        return self.dirty and not self.valid


class _Reference:
    """Cache state of every worker, and the per-iteration steps of the semantics page."""

    def __init__(
        self,
        *,
        partition: str,
        sync: str,
        workers: int,
        batch_size: int,
        cache_rows: int,
        policy: str,
        consistency: str,
        lookahead: int,
        seed: int,
        released: bool = False,
    ) -> None:
        self.partition_rule, self.sync_rule = partition, sync
        self.released = released  # Herald's released cache rules (contract.ReadRules)
        self.W, self.m, self.K = workers, batch_size, cache_rows
        self.policy, self.consistency = policy, consistency
        self.lookahead, self.seed = lookahead, seed
        self.caches: list[dict[int, _Copy]] = [{} for _ in range(workers)]
        self.counts: Counter[str] = Counter({key: 0 for key in COUNT_KEYS})

    # -- driver ---------------------------------------------------------------------------------

    def run(self, batches: list[Batch], future: list[WorkingSets] | None) -> list[WorkingSets]:
        """Simulate every batch; ``future`` is the record of a first pass (needed by on-demand)."""
        history: list[WorkingSets] = []
        for b, batch in enumerate(batches):
            sets = self.working_sets(batch, self.partition(b, batch))
            if future is not None:
                assert sets == future[b], f"iteration {b}: partition differs from the first pass"
            self.counts["accesses"] += sum(len(sample) for sample in batch)
            self.read_and_touch(b, sets)
            self.write(sets)
            self.sync(b, future)
            self.check_invariants()
            history.append(sets)
        self.counts["flush_push"] += sum(c.dirty for cache in self.caches for c in cache.values())
        return history

    # -- 1. partition ---------------------------------------------------------------------------

    def partition(self, b: int, batch: Batch) -> list[int]:
        """Worker of each sample of batch b (from the state at the end of iteration b-1)."""
        if self.partition_rule == "random":
            owner = self.random_partition(b)
        else:
            owner = self.location_aware_partition(b, batch)
        assert all(owner.count(w) == self.m for w in range(self.W)), "unbalanced partition"
        return owner

    def random_partition(self, b: int) -> list[int]:
        """Sample ``perm[p]`` sits at position p of the permuted batch and goes to worker p // m."""
        perm = np.random.default_rng([self.seed, b]).permutation(self.W * self.m)
        owner = [-1] * (self.W * self.m)
        for position, sample in enumerate(perm):
            owner[int(sample)] = position // self.m
        return owner

    def location_aware_partition(self, b: int, batch: Batch) -> list[int]:
        """Herald's greedy: strictly best score among workers with room, rotated scan order."""
        scores = [[self.score(w, sample) for w in range(self.W)] for sample in batch]
        load = [0] * self.W
        owner = []
        for score in scores:
            best = -1
            for j in range(self.W):
                w = (j + b) % self.W
                if load[w] < self.m and (best < 0 or score[w] > score[best]):
                    best = w
            owner.append(best)
            load[best] += 1
        return owner

    def score(self, w: int, sample: list[int]) -> int:
        """Number of the sample's ids (duplicates counted) cached and valid at w."""
        cache = self.caches[w]
        return sum(1 for k in sample if k in cache and cache[k].valid)

    # -- 2. working sets ------------------------------------------------------------------------

    def working_sets(self, batch: Batch, owner: list[int]) -> WorkingSets:
        """U_w: distinct ids of w's samples by ascending sample index, then field order (the
        released rules: in ascending id)."""
        sets: WorkingSets = [[] for _ in range(self.W)]
        seen: list[set[int]] = [set() for _ in range(self.W)]
        for index, sample in enumerate(batch):
            w = owner[index]
            for k in sample:
                if k not in seen[w]:
                    seen[w].add(k)
                    sets[w].append(k)
        return [sorted(rows) for rows in sets] if self.released else sets

    # -- 3./4. reads, recency and eviction ------------------------------------------------------

    def read_and_touch(self, b: int, sets: WorkingSets) -> None:
        if self.released:
            self.read_and_touch_released(b, sets)
            return
        for w, rows in enumerate(sets):
            for k in rows:
                self.classify_read(w, k)
        for w, rows in enumerate(sets):
            self.touch(b, w, rows)
            self.evict(w, set(rows))

    def read_and_touch_released(self, b: int, sets: WorkingSets) -> None:
        """Herald's released cache: key by key, a read, its touch and, when an insert takes the
        cache over K, the LRU victim's eviction, which may be a key read later; a valid copy
        of a row another worker also reads is outdated first (an update pull)."""
        readers: Counter[int] = Counter(k for rows in sets for k in rows)
        for w, rows in enumerate(sets):
            for position, k in enumerate(rows):
                self.classify_read(w, k, outdated=readers[k] > 1)
                self.touch(b, w, [k], first_position=position)
                self.evict(w, {k})

    def classify_read(self, w: int, k: int, outdated: bool = False) -> None:
        """Count one lookup (a valid copy taken as ``outdated`` is an update pull); a pull
        asserts the PS holds k's latest value (invariant)."""
        copy = self.caches[w].get(k)
        self.counts["lookups"] += 1
        if copy is not None and copy.valid and not outdated:
            self.counts["hits"] += 1
            return
        self.counts["miss_pull" if copy is None else "update_pull"] += 1
        for v, cache in enumerate(self.caches):
            other = cache.get(k)
            assert other is None or not other.partial, f"pull of {k} while a partial copy exists"
            assert v == w or other is None or not other.dirty, f"pull of {k}: dirty copy at {v}"

    def touch(self, b: int, w: int, rows: list[int], first_position: int = 0) -> None:
        """Insert misses, refresh update pulls, and record the touch of every row of U_w."""
        cache = self.caches[w]
        for position, k in enumerate(rows, start=first_position):
            copy = cache.get(k)
            if copy is None:
                cache[k] = _Copy(valid=True, dirty=False, last_touch=(b, position), uses=1)
                continue
            assert copy.valid or not copy.dirty, "update pull of a partial copy"
            copy.valid = True
            copy.last_touch = (b, position)
            copy.uses += 1

    def evict(self, w: int, protected: set[int]) -> None:
        """Evict the policy's victim (never a row of U_w) while the cache is over K rows."""
        cache = self.caches[w]
        while len(cache) > self.K:
            candidates = [k for k in cache if k not in protected]
            victim = min(candidates, key=lambda k: self.eviction_key(cache[k]))
            if cache.pop(victim).dirty:
                self.counts["evict_push"] += 1

    def eviction_key(self, copy: _Copy) -> tuple[int, ...]:
        if self.policy == "lru":
            return copy.last_touch
        return (copy.uses, *copy.last_touch)

    # -- 5. writes ------------------------------------------------------------------------------

    def write(self, sets: WorkingSets) -> None:
        writers: dict[int, list[int]] = {}
        for w, rows in enumerate(sets):
            for k in rows:
                writers.setdefault(k, []).append(w)
        for k, ws in writers.items():
            shared_strict = len(ws) > 1 and self.consistency == "strict"
            for w in ws:
                copy = self.caches[w][k]
                copy.valid, copy.dirty = not shared_strict, True
            for v, cache in enumerate(self.caches):
                if v not in ws and k in cache:
                    assert not cache[k].dirty, f"row {k} outdated at {v} while still dirty there"
                    cache[k].valid = False

    # -- 6. syncs -------------------------------------------------------------------------------

    def sync(self, b: int, future: list[WorkingSets] | None) -> None:
        for v, cache in enumerate(self.caches):
            for k, copy in cache.items():
                if copy.dirty and self.must_push(b, v, k, copy, future):
                    self.counts["update_push"] += 1
                    copy.dirty = False

    def must_push(
        self, b: int, v: int, k: int, copy: _Copy, future: list[WorkingSets] | None
    ) -> bool:
        if self.sync_rule == "write-through":
            return True
        assert future is not None, "on-demand sync needs the first pass's working sets"
        window = future[b + 1 : b + 1 + self.lookahead]  # iterations past the trace read nothing
        readers = {w for sets in window for w, rows in enumerate(sets) if k in rows}
        return bool(readers - {v}) or (copy.partial and bool(readers))

    # -- invariants -----------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Cache sizes, and at most one non-partial dirty copy per row in strict mode."""
        for cache in self.caches:
            assert len(cache) <= self.K, "cache over capacity"
        if self.consistency == "strict":
            owners = Counter(k for c in self.caches for k, x in c.items() if x.dirty and x.valid)
            assert all(n == 1 for n in owners.values()), "two valid dirty copies of one row"


def _full_batches(trace: TraceSource, global_batch: int) -> tuple[list[Batch], int]:
    """The trace's full global batches, and the number of samples dropped."""
    batches = [
        _samples(chunk, trace.layout.table_widths)
        for chunk in trace.chunks(global_batch)
        if len(chunk) == global_batch
    ]
    return batches, trace.num_samples - len(batches) * global_batch


def _samples(chunk: SampleChunk, widths: tuple[int, ...]) -> Batch:
    """Each sample's ids as it reads them, table by table: a ragged table's first ``length``
    columns (the reference never sees a pad)."""
    rows = chunk.ids.tolist()
    if chunk.lengths is None:
        return rows
    starts = np.cumsum(widths) - np.asarray(widths)
    return [[k for start, n in zip(starts.tolist(), lengths) for k in row[start:start + n]]
            for row, lengths in zip(rows, chunk.lengths.tolist())]


def _validate(
    kind: str,
    *,
    workers: int,
    batch_size: int,
    cache_rows: int,
    fields: int,
    policy: str,
    consistency: str,
    lookahead: int,
) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(KINDS)}")
    if workers < 1 or batch_size < 1 or lookahead < 1:
        raise ValueError("workers, batch_size and lookahead must be positive")
    if cache_rows < batch_size * fields:
        raise ValueError(f"cache_rows {cache_rows} < batch_size × F = {batch_size * fields}")
    if policy not in ("lru", "lfu"):
        raise ValueError(f"unknown policy {policy!r}; expected 'lru' or 'lfu'")
    if consistency not in ("strict", "optimistic"):
        raise ValueError(f"unknown consistency {consistency!r}; expected 'strict' or 'optimistic'")


def reference_simulate(
    trace: TraceSource,
    kind: str,
    *,
    workers: int,
    batch_size: int,
    cache_rows: int,
    policy: str = "lru",
    consistency: str = "strict",
    lookahead: int = 1,
    seed: int = 0,
    variant: str = "normative",
) -> dict[str, int]:
    """Simulate ``kind`` on ``trace`` per docs/semantics.md and return the counts.

    ``batch_size`` is m, the samples per worker per iteration. ``lookahead`` is used only by the
    on-demand kinds. ``variant: released`` (the Herald kinds) applies Herald's released cache
    rules (``contract.ReadRules``: ascending touch order, eviction on insert, a pushed row
    read by its pusher is an update pull) with LRU and optimistic co-writers, whatever
    ``policy`` and ``consistency`` say. Returns the keys of :data:`COUNT_KEYS` plus
    ``iterations`` and ``samples_dropped``.
    """
    released = variant == "released"
    if released and kind == "naive":
        raise ValueError("naive has no released variant")
    if released:
        policy, consistency = "lru", "optimistic"
    knobs: dict[str, Any] = {
        "workers": workers,
        "batch_size": batch_size,
        "cache_rows": cache_rows,
        "policy": policy,
        "consistency": consistency,
        "lookahead": lookahead,
    }
    _validate(kind, fields=trace.layout.ids_per_sample, **knobs)
    batches, dropped = _full_batches(trace, workers * batch_size)
    partition, sync = KINDS[kind]
    future = None
    if sync == "on-demand":
        first_pass = _Reference(partition=partition, sync="write-through", seed=seed,
                                released=released, **knobs)  # fmt: skip
        future = first_pass.run(batches, None)
    reference = _Reference(partition=partition, sync=sync, seed=seed, released=released, **knobs)
    reference.run(batches, future)
    counts = {key: int(reference.counts[key]) for key in COUNT_KEYS}
    assert counts["lookups"] == counts["hits"] + counts["miss_pull"] + counts["update_pull"]
    return {**counts, "iterations": len(batches), "samples_dropped": dropped}
