"""Skew figures of any trace, to check a generator against what is published (peers_and_data §4.2).

Three things must match for a trace to stress caches like Criteo does: the share of accesses that
go to the hottest 1% of rows, how many distinct rows a run touches, and how many distinct ids a
global batch holds. A fourth says whether the trace has temporal locality: how far apart in time
the two uses of a row used exactly twice are (cold rows of a chronological log come in bursts; in
a trace without locality the two uses are two random points of the run, a median of about 0.29 of
it apart). :func:`calibrate` measures all of them in one streamed pass.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from heraldbench.platform.data._trace import TraceSource

__all__ = ["calibrate", "top_share"]

#: Samples per streamed chunk, rounded down to whole batches.
_CHUNK_SAMPLES = 1 << 20
#: Reuse gaps up to this many batches count as "near" in ``reuse_gap_within_100_batches_fraction``.
_NEAR_BATCHES = 100


def calibrate(trace: TraceSource, batch_samples: int, max_samples: int | None = None) -> dict:
    """Measure the access skew, row coverage, batch uniqueness and label mean of a trace.

    Args:
        trace: any trace source; it is streamed once.
        batch_samples: samples per global batch for the per-batch unique-id figures.
        max_samples: read at most this many samples (default: the whole trace).

    Returns:
        A dict of plain numbers. ``top1pct_share_all_rows`` is the share of accesses that hit the
        ``ceil(1% × all rows)`` most accessed rows; ``top1pct_share_touched_rows`` the same over
        ``ceil(1% × touched rows)``. Batch figures average over full batches (a trailing short
        batch counts only when it is the only one). Locality figures are over the rows used
        exactly twice in the run (``rows_used_twice``), and their *reuse gap*, the number of
        batches from the first use's batch to the second's (0: the same batch):
        ``reuse_gap_median_batches``, ``reuse_gap_median_span_fraction`` (that median over the
        run's batches; about 0.29 when uses are spread at random over the run, far less with
        temporal locality) and ``reuse_gap_within_100_batches_fraction``; they are None when no
        row is used twice.
    """
    if batch_samples <= 0:
        raise ValueError(f"batch_samples must be positive, got {batch_samples}")
    if max_samples is not None and max_samples <= 0:
        raise ValueError(f"max_samples must be positive, got {max_samples}")
    layout = trace.layout
    counts = np.zeros(layout.total_rows, dtype=np.int64)
    last_batch = np.full(layout.total_rows, -1, dtype=np.int32)
    first_gap = np.full(layout.total_rows, -1, dtype=np.int32)
    unique_per_batch = [np.zeros(0, dtype=np.int64)]
    batch_sizes = [np.zeros(0, dtype=np.int64)]
    samples, label_sum, first_batch = 0, 0.0, 0
    limit = trace.num_samples if max_samples is None else min(max_samples, trace.num_samples)
    chunk_samples = max(1, _CHUNK_SAMPLES // batch_samples) * batch_samples
    for chunk in trace.chunks(chunk_samples):
        chunk = chunk.slice(0, min(len(chunk), limit - samples))
        uniques, sizes = _count_chunk(
            chunk.ids, batch_samples, first_batch, counts, last_batch, first_gap
        )
        unique_per_batch.append(uniques)
        batch_sizes.append(sizes)
        first_batch += len(sizes)
        samples += len(chunk)
        label_sum += float(chunk.labels.sum(dtype=np.float64))
        if samples >= limit:
            break
    return _summarise(
        counts, layout.names, layout.sizes, layout.offsets, samples, label_sum, batch_samples,
        np.concatenate(unique_per_batch), np.concatenate(batch_sizes), first_gap,
    )  # fmt: skip


def top_share(counts: np.ndarray, rows: int) -> float:
    """Share of all accesses in ``counts`` that go to the ``rows`` most accessed rows."""
    total = int(counts.sum())
    if total == 0 or rows <= 0:
        return 0.0
    rows = min(rows, counts.size)
    return float(np.partition(counts, counts.size - rows)[-rows:].sum() / total)


def _count_chunk(ids, batch_samples, first_batch, counts, last_batch, first_gap):
    ids = np.ascontiguousarray(ids)
    n_batches = -(-len(ids) // batch_samples)
    uniques = np.zeros(n_batches, dtype=np.int64)
    _count_kernel(ids.reshape(-1), ids.shape[1] * batch_samples, first_batch, counts, last_batch,
                  first_gap, uniques)  # fmt: skip
    sizes = np.full(n_batches, batch_samples, dtype=np.int64)
    if n_batches:
        sizes[-1] = len(ids) - (n_batches - 1) * batch_samples
    return uniques, sizes


def _summarise(counts, names, table_sizes, offsets, samples, label_sum, batch_samples, uniques,
               sizes, first_gap) -> dict[str, Any]:  # fmt: skip
    touched = counts > 0
    rows_touched = int(touched.sum())
    per_table = {
        name: float(touched[offset : offset + rows].mean())
        for name, offset, rows in zip(names, offsets, table_sizes, strict=True)
    }
    full = sizes == batch_samples
    if not full.any():
        full = np.ones_like(full)
    ids_per_sample = len(names)
    mean_unique = float(uniques[full].mean()) if len(uniques) else 0.0
    return {
        "samples": samples,
        "accesses": samples * ids_per_sample,
        "rows": int(counts.size),
        "top1pct_share_all_rows": top_share(counts, math.ceil(0.01 * counts.size)),
        "top1pct_share_touched_rows": top_share(counts, math.ceil(0.01 * rows_touched)),
        "rows_touched": rows_touched,
        "rows_touched_fraction": rows_touched / counts.size,
        "rows_touched_fraction_per_table": per_table,
        "touched_rows_used_once_fraction": float((counts == 1).sum() / max(rows_touched, 1)),
        "batch_samples": batch_samples,
        "mean_unique_ids_per_batch": mean_unique,
        "unique_fraction_per_batch": float(
            (uniques[full] / (sizes[full] * ids_per_sample)).mean() if len(uniques) else 0.0
        ),
        "label_mean": label_sum / samples if samples else 0.0,
        **_reuse_figures(first_gap[counts == 2], len(sizes)),
    }


def _reuse_figures(gaps: np.ndarray, batches: int) -> dict[str, Any]:
    """Locality of rows used twice, from the batch gaps between their two uses."""
    if not len(gaps):
        median = span_fraction = near = None
    else:
        median = float(np.median(gaps))
        span_fraction = median / batches
        near = float((gaps <= _NEAR_BATCHES).mean())
    return {
        "rows_used_twice": len(gaps),
        "reuse_gap_median_batches": median,
        "reuse_gap_median_span_fraction": span_fraction,
        "reuse_gap_within_100_batches_fraction": near,
    }


@numba.njit(cache=True, nogil=True)
def _count_kernel(
    flat_ids, ids_per_batch, first_batch, counts, last_batch, first_gap, uniques
):  # pragma: no cover - numba
    """Access counts per row, distinct rows per batch and, per row, the batch gap from its first
    use to its second, in one pass over the ids."""
    for local_batch in range(uniques.shape[0]):
        batch = first_batch + local_batch
        distinct = 0
        stop = min((local_batch + 1) * ids_per_batch, flat_ids.shape[0])
        for k in range(local_batch * ids_per_batch, stop):
            row = flat_ids[k]
            if counts[row] == 1:
                first_gap[row] = batch - last_batch[row]
            counts[row] += 1
            if last_batch[row] != batch:
                last_batch[row] = batch
                distinct += 1
        uniques[local_batch] = distinct
