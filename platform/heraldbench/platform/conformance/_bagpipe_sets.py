"""BagPipe's per-batch decisions as sets, on each side, in the released oracle's terms.

The released oracle (``BagPipe/oraclecacher.py``) sends, per batch b, the rows to prefetch for
b, the TTL updates (rows kept, with the batch their lease now ends), the no-sync, sync-now and
sync-later sets, and each trainer's slice of the batch. heraldbench's decision stream
(:func:`heraldbench.platform.sim.decisions`) names when rows move; here both become, per batch:

* ``partition``: each worker's sample positions;
* ``prefetch``: the rows loaded for b: a row prefetched at a cleanup point p is loaded for the
  first batch from p on that reads it, and a row fetched on demand at b for b;
* ``lease``: (row, end) pairs; ``sync_now``, ``sync_later``, ``no_sync``: rows;
* ``evicted`` and ``written_back``: the rows of b whose lease ended at b, evicted (written back)
  at the next cleanup point, attributed to their last use before it; a row staged for b alone
  is evicted and written back at b. The released oracle leaves eviction to its trainers at their
  cleanup points; what it implies is the rows of b it does not lease (each was updated at b, so
  each is written back).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from heraldbench.platform.contract import IterationDecisions, Read, Send

__all__ = ["QUANTITIES", "SETS", "BatchRows", "batch_part", "ours", "packed", "released"]

_NONE = np.zeros(0, np.int64)

#: The per-batch sets of the released oracle's result, by the driver's names.
SETS = ("prefetch", "no_sync", "sync_now", "sync_later", "ttl_idx", "ttl_val")
#: The compared quantities, in report order.
QUANTITIES = ("partition", "prefetch", "lease", "sync_now", "sync_later", "no_sync", "evicted",
              "written_back")  # fmt: skip


class BatchRows:
    """Each global batch's distinct rows, for attributing a move to a batch."""

    def __init__(self, ids: np.ndarray, global_batch: int) -> None:
        batches = ids.shape[0] // global_batch
        self.rows = [np.unique(ids[b * global_batch : (b + 1) * global_batch])
                     for b in range(batches)]  # fmt: skip

    def first_use(self, rows: np.ndarray, start: int, stop: int) -> dict[int, np.ndarray]:
        """Per batch j in ``[start, stop)``, those of ``rows`` whose first use from start is j."""
        left, found = np.unique(rows), {}
        for j in range(start, min(stop, len(self.rows))):
            used = np.isin(left, self.rows[j], assume_unique=True)
            if used.any():
                found[j], left = left[used], left[~used]
        return found

    def last_use(self, rows: np.ndarray, before: int, since: int) -> dict[int, np.ndarray]:
        """Per batch j in ``[since, before)``, those of ``rows`` whose last use before is j."""
        left, found = np.unique(rows), {}
        for j in range(before - 1, max(since, 0) - 1, -1):
            used = np.isin(left, self.rows[j], assume_unique=True)
            if used.any():
                found[j], left = left[used], left[~used]
        return found


def ours(stream: Iterator[IterationDecisions], rows: BatchRows, workers: int, lookahead: int,
         global_batch: int) -> list[dict[str, object]]:  # fmt: skip
    """Per iteration of heraldbench's stream, the compared sets."""
    out: list[dict[str, object]] = []
    loaded: dict[int, list[np.ndarray]] = {}
    for dec in stream:
        b = dec.iteration
        for j, found in rows.first_use(dec.prefetch_ids, b, b + lookahead).items():
            loaded.setdefault(j, []).append(found)
        for name, moved in (("evicted", dec.evicted_ids),
                            ("written_back", dec.sent_ids[dec.sent_how == Send.EVICT])):
            for j, found in rows.last_use(moved, b, b - lookahead).items():
                out[j][name] = _union(out[j][name], found)  # type: ignore[arg-type]
        demand = dec.touched_ids[dec.touched_kind == Read.MISS]
        staged = np.unique(dec.sent_ids[dec.sent_how == Send.RELEASE])
        order = np.argsort(dec.lease_ids, kind="stable")
        out.append({
            "partition": [b * global_batch + np.flatnonzero(dec.assign == w)
                          for w in range(workers)],
            "prefetch": _union(np.concatenate(loaded.pop(b, [_NONE])), demand),
            "lease": np.stack([dec.lease_ids[order], dec.lease_ends[order]]).astype(np.int64),
            "sync_now": np.sort(dec.sync_now_ids), "sync_later": np.sort(dec.sync_later_ids),
            "no_sync": np.sort(dec.no_sync_ids),
            "evicted": staged, "written_back": staged,
        })  # fmt: skip
    return out


def released(result: dict[str, np.ndarray], rows: BatchRows) -> list[dict[str, object]]:
    """Per batch the released oracle emitted, the compared sets."""
    out = []
    for i, b in enumerate(result["batch_number"].tolist()):
        part = {name: batch_part(result, name, i) for name in SETS}
        order = np.argsort(part["ttl_idx"], kind="stable")
        ends = np.setdiff1d(rows.rows[b], part["ttl_idx"])
        out.append({
            "partition": list(result["trainer_samples"][i]),
            "prefetch": np.unique(part["prefetch"]),
            "lease": np.stack([part["ttl_idx"][order], part["ttl_val"][order]]),
            "sync_now": np.sort(part["sync_now"]), "sync_later": np.sort(part["sync_later"]),
            "no_sync": np.sort(part["no_sync"]), "evicted": ends, "written_back": ends,
        })  # fmt: skip
    return out


def packed(sets: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-batch sets as the driver's result holds them: each name's values, concatenated over
    the batches, and ``<name>_splits``, the offsets where each batch starts (and the end)."""
    out = {}
    for name, parts in sets.items():
        out[name] = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        out[f"{name}_splits"] = np.cumsum([0, *(p.size for p in parts)])
    return out


def batch_part(result: dict[str, np.ndarray], name: str, i: int) -> np.ndarray:
    """The set ``name`` of the ``i``-th batch in the driver's result (values with splits)."""
    splits = result[f"{name}_splits"]
    return result[name][splits[i] : splits[i + 1]].astype(np.int64)


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.union1d(a, b).astype(np.int64)
