"""Invariant checker of the replicated-cache executor: an independent, per-row version model.

It re-derives everything from the raw batches (per-worker reads, sync classes, leases) with plain
numpy, follows the executor's membership decisions (which rows a cleanup evicted, which rows
joined S), and raises InvariantViolation when

- a worker reads a replica older than the row's last update (an all-reduce not landed yet, or a
  no-sync row read by a worker other than its one trainer);
- a row is pulled (prefetch or on demand) while the PS lacks its last update (write-back or
  transient write-back not landed);
- a write-back sends a stale replica; a lease rule or the capacity is broken.

Its counts are compared with the kernels' by the executor. Timeline: an all-reduce of
iteration u lands before u+1 (sync-now) or before u+2 (sync-later); a cleanup point waits for
every in-flight all-reduce before it writes back; a transient row is written back as soon as its
reduction lands (its single trainer: at once).
"""

from __future__ import annotations

import numpy as np

from heraldbench.platform.exceptions import InvariantViolation

__all__ = ["ReplicaChecker"]

_NOW, _LATER, _NO_SYNC = 0, 1, 2


class ReplicaChecker:
    """Version model of one replicated-cache run (for tests; O(rows) work per step)."""

    def __init__(self, rows: int, workers: int, capacity: int, lookahead: int, iterations: int):
        self.workers, self.capacity = workers, capacity
        self.lookahead, self.iterations = lookahead, iterations
        self.batches: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.resident = np.zeros(rows, bool)
        self.dirty = np.zeros(rows, bool)
        self.lease = np.full(rows, -1, np.int64)
        self.version = np.zeros(rows, np.int64)  # updates applied so far
        self.ps = np.zeros(rows, np.int64)  # version the parameter server holds
        self.replica = np.zeros(rows, np.int64)  # version every replica holds
        self.owner = np.full(rows, -1, np.int64)  # a no-sync row's one current replica
        self.due = np.full(rows, -1, np.int64)  # iteration its in-flight reduction lands by
        self.to_ps = np.zeros(rows, bool)  # the in-flight reduction is a transient write-back

    def add_batch(self, j: int, ids: np.ndarray, assign: np.ndarray,
                  counted: np.ndarray | None = None) -> None:
        """Batch j's ids, workers, and ``counted``: its ids with a ragged table's pads marked -1
        (a row is read once in the batch when it occurs once among them; default: ``ids``)."""
        counted = np.asarray(ids if counted is None else counted, np.int64)
        self.batches[j] = (np.array(ids, np.int64), np.array(assign, np.int64),
                           counted[counted >= 0])

    # -- events -------------------------------------------------------------------------------

    def cleanup(self, p: int, evicted: np.ndarray, resident: np.ndarray) -> tuple[int, int]:
        """Barrier, evictions, prefetch; returns (write-backs, rows loaded)."""
        self._land(np.flatnonzero(self.due >= 0))
        expired = np.flatnonzero(self.resident & (self.lease < p))
        if set(expired.tolist()) != set(evicted.tolist()):
            raise InvariantViolation(f"cleanup {p}: evicted {sorted(evicted.tolist())}, "
                                     f"expired leases {expired.tolist()}")
        written = self._evict(evicted, p)
        loaded = np.flatnonzero(resident & ~self.resident)
        self._pull(loaded, f"prefetch at cleanup {p}")
        self._load(loaded, p)
        self._check_capacity(f"cleanup {p}")
        return written, len(loaded)

    def run(self, b: int, resident: np.ndarray) -> tuple[int, ...]:
        """Iteration b; returns the kernel's counts (lookups, demand, fill, transient, classes)."""
        self._land(np.flatnonzero((self.due >= 0) & (self.due <= b)))
        ids, assign, counted = self.batches.pop(b)
        rows, counts = np.unique(counted, return_counts=True)
        readers = [np.unique(ids[assign == w]) for w in range(self.workers)]
        missing = rows[~self.resident[rows]]
        admitted = missing[resident[missing]]
        transient = missing[~resident[missing]]
        self._pull(missing, f"on-demand fetch at iteration {b}")
        for w, mine in enumerate(readers):
            hit = mine[self.resident[mine]]
            stale = hit[(self.replica[hit] != self.version[hit]) & (self.owner[hit] != w)]
            if len(stale):
                raise InvariantViolation(f"iteration {b}: worker {w} reads rows {stale.tolist()} "
                                         "before their last update landed in its replica")
        self._load(admitted, b)
        n_read = np.zeros(len(self.resident), np.int64)
        for mine in readers:
            n_read[mine] += 1
        classes = self._classes(b, rows, counts)
        self._update(b, rows, classes, ids, assign)
        self.lease[rows] = np.where(self.resident[rows], self._last_use(b, rows), -1)
        self._check_capacity(f"iteration {b}")
        if (resident != self.resident).any():
            raise InvariantViolation(f"iteration {b}: membership differs from the version model")
        return (
            int(n_read[rows].sum()),
            int(n_read[missing].sum()),
            int((self.workers - n_read[admitted]).sum()),
            len(transient),
            *(int((classes == c).sum()) for c in (_NOW, _LATER, _NO_SYNC)),
        )

    def flush(self) -> int:
        return int((self.resident & self.dirty).sum())

    # -- rules --------------------------------------------------------------------------------

    def _classes(self, b: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        ahead = [self.batches[j][0] for j in range(b + 1, min(b + self.lookahead, self.iterations))]
        nxt = np.isin(rows, ahead[0]) if ahead else np.zeros(len(rows), bool)
        reused = np.isin(rows, np.concatenate(ahead)) if ahead else np.zeros(len(rows), bool)
        return np.where(nxt, _NOW, np.where((counts == 1) & ~reused, _NO_SYNC, _LATER))

    def _last_use(self, t: int, rows: np.ndarray) -> np.ndarray:
        """Last batch of the window [t, t+L) using each row (t if none after t)."""
        last = np.full(len(rows), t, np.int64)
        for j in range(t + 1, min(t + self.lookahead, self.iterations)):
            last[np.isin(rows, self.batches[j][0])] = j
        return last

    def _update(self, b, rows, classes, ids, assign) -> None:
        self.version[rows] += 1
        if (self.due[rows] >= 0).any():
            raise InvariantViolation(f"iteration {b}: a row is updated with a reduction in flight")
        cached = self.resident[rows]
        self.dirty[rows[cached]] = True
        single = classes == _NO_SYNC
        reduced = rows[~single]
        self.due[reduced] = np.where(classes[~single] == _NOW, b + 1, b + 2)
        self.to_ps[reduced] = ~self.resident[reduced]
        self.owner[reduced] = -1
        # each is read once (a ragged table's pads may repeat it, within the same sample)
        at = np.flatnonzero(np.isin(ids.ravel(), rows[single]))
        lone = ids.ravel()[at]
        self.owner[lone] = assign[at // ids.shape[1]]
        written = lone[~self.resident[lone]]  # transient: its one trainer writes it back now
        self.ps[written] = self.version[written]

    def _land(self, rows: np.ndarray) -> None:
        to_ps = rows[self.to_ps[rows]]
        self.ps[to_ps] = self.version[to_ps]
        to_replica = rows[~self.to_ps[rows]]
        self.replica[to_replica] = self.version[to_replica]
        self.due[rows] = -1

    def _evict(self, rows: np.ndarray, p: int) -> int:
        dirty = rows[self.dirty[rows]]
        stale = dirty[(self.replica[dirty] != self.version[dirty]) & (self.owner[dirty] < 0)]
        if len(stale):
            raise InvariantViolation(f"cleanup {p}: write-back of stale replicas {stale.tolist()}")
        self.ps[dirty] = self.version[dirty]
        self.resident[rows] = self.dirty[rows] = False
        self.lease[rows] = -1
        return len(dirty)

    def _pull(self, rows: np.ndarray, what: str) -> None:
        stale = rows[(self.ps[rows] != self.version[rows]) | (self.due[rows] >= 0)]
        if len(stale):
            raise InvariantViolation(f"{what}: rows {stale.tolist()} pulled before their "
                                     "update reached the parameter server")

    def _load(self, rows: np.ndarray, t: int) -> None:
        self.resident[rows] = True
        self.dirty[rows] = False
        self.replica[rows] = self.version[rows]
        self.owner[rows] = -1
        self.lease[rows] = self._last_use(t, rows)

    def _check_capacity(self, where: str) -> None:
        held = int(self.resident.sum())
        if held > self.capacity:
            raise InvariantViolation(f"{where}: {held} rows cached, capacity {self.capacity}")
