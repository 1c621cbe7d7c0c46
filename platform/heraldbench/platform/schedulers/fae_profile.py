"""FAE's offline phase: sampled access counts, the hot set, and which samples are hot.

The rules are FAE's (docstring of ``_fae``); this module makes them fast at Criteo scale. Sources
with random access (:attr:`TraceSource.random_access`) are read only where needed: the sampled
positions for the counts, every position on all cores for the hot/cold split, and then each
class's own samples when the trace is replayed.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from heraldbench.platform._cores import usable_cores
from heraldbench.platform.data import SampleChunk, TraceSource, read_ahead
from heraldbench.platform.data.ragged import marked_pads

__all__ = [
    "READ_SAMPLES",
    "bits_between",
    "find_hot_samples",
    "hot_row_bits",
    "released_access_counts",
    "released_top_rows",
    "sample_access_counts",
    "top_rows",
]

#: Samples read from the source trace at a time while profiling and reordering.
READ_SAMPLES = 1 << 16


def sample_access_counts(
    trace: TraceSource, rate: float, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Access count of every row over ``round(rate × samples)`` samples drawn with replacement.

    The draws are made chunk by chunk of the trace: each chunk receives a binomial share of the
    draws still to make (its share of the samples still unread), which gives exactly a
    multinomial split of uniform draws, and its positions are then drawn uniformly within the
    chunk. Where the source has random access only the drawn samples are generated; otherwise
    it is read once, front to back.

    Returns:
        (counts per global row as int64, number of samples drawn).
    """
    total = trace.num_samples
    draws = max(1, round(rate * total)) if total else 0
    counts = np.zeros(trace.layout.total_rows, dtype=np.int64)
    drawn = _draws_by_chunk(total, draws, rng)
    if not trace.random_access:
        chunks = trace.chunks(READ_SAMPLES, ids_only=True)
        for chunk, (start, positions) in zip(read_ahead(chunks), drawn):
            _count_rows(_counted(chunk.take(positions - start), trace), counts)
        return counts, draws
    pending: list[np.ndarray] = []
    held = 0
    for _, positions in drawn:
        pending.append(positions)
        held += positions.size
        if held >= READ_SAMPLES:
            _count_rows(_counted_at(trace, np.concatenate(pending)), counts)
            pending, held = [], 0
    if held:
        _count_rows(_counted_at(trace, np.concatenate(pending)), counts)
    return counts, draws


def _counted_at(trace: TraceSource, positions: np.ndarray) -> np.ndarray:
    """The ids of the samples at ``positions`` that an access count counts (pads left out)."""
    if not trace.layout.is_ragged:
        return trace.ids_at(positions)
    return _counted(trace.id_samples_at(positions), trace)


def _counted(chunk: SampleChunk, trace: TraceSource) -> np.ndarray:
    return marked_pads(chunk.ids, chunk.lengths, trace.layout.table_widths)


def _draws_by_chunk(
    total: int, draws: int, rng: np.random.Generator
) -> Iterator[tuple[int, np.ndarray]]:
    """(first sample, drawn positions) for each chunk of ``READ_SAMPLES`` samples, in order."""
    unread, left = total, draws
    for start in range(0, total, READ_SAMPLES):
        size = min(READ_SAMPLES, total - start)
        take = int(rng.binomial(left, size / unread)) if left else 0
        unread, left = unread - size, left - take
        yield start, start + (rng.integers(0, size, take) if take else np.zeros(0, np.int64))


def top_rows(counts: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` rows with the largest positive counts, ties to smaller ids, as sorted int32."""
    sampled = np.flatnonzero(counts)
    if sampled.size <= n:
        return sampled.astype(np.int32)
    values = counts[sampled]
    threshold = np.partition(values, values.size - n)[values.size - n]  # the n-th largest
    above = sampled[values > threshold]
    ties = sampled[values == threshold][: n - above.size]  # ascending ids
    return np.sort(np.concatenate([above, ties])).astype(np.int32)


def released_access_counts(
    trace: TraceSource, percent: int, seed: int
) -> tuple[np.ndarray, int]:
    """Access counts as FAE's released profiler (``dlrm_input_profiler.py``) draws them:
    ``int(percent / 100 × samples)`` positions from numpy's legacy ``randint``, with
    replacement, all at once. The script draws from numpy's global generator unseeded; here it
    is seeded with ``[seed, 0xFAE]`` (the conformance check seeds the script's the same way).

    Returns:
        (counts per global row as int64, number of samples drawn).
    """
    total = trace.num_samples
    draws = int((percent / 100) * total)
    positions = np.random.RandomState([seed, 0xFAE]).randint(0, max(total, 1), size=draws)
    counts = np.zeros(trace.layout.total_rows, dtype=np.int64)
    for start in range(0, draws, READ_SAMPLES):
        _count_rows(_counted_at(trace, positions[start : start + READ_SAMPLES]), counts)
    return counts, draws


def released_top_rows(counts: np.ndarray, n: int) -> np.ndarray:
    """The hot set as FAE's released profiler picks it, as sorted int32: the first ``n`` rows of
    numpy's default (unstable) ``argsort`` of all counts, reversed. Ties at the threshold fall
    where that sort leaves them, which depends on the CPU's SIMD level (numpy dispatches its
    sort by it), and rows never sampled fill the set when fewer than ``n`` rows were."""
    order = counts.argsort()[::-1][:n]
    return np.sort(order).astype(np.int32)


def hot_row_bits(hot_rows: np.ndarray, total_rows: int) -> np.ndarray:
    """The hot set as a bitset, bit ``k % 8`` of byte ``k // 8`` for row k: 4 MB for Criteo
    Kaggle's 33.8 M rows, small enough to stay in the CPU's cache while samples are tested."""
    table = np.zeros(total_rows, dtype=bool)
    table[hot_rows] = True
    return np.packbits(table, bitorder="little")


def _hot_mask(ids: np.ndarray, hot_bits: np.ndarray) -> np.ndarray:
    """Per sample of ``ids``, whether every one of its ids is hot."""
    mask = np.empty(ids.shape[0], dtype=np.bool_)
    _all_hot(ids, hot_bits, mask)
    return mask


def find_hot_samples(trace: TraceSource, hot_bits: np.ndarray) -> np.ndarray:
    """Which samples of ``trace`` have only hot ids, as a bitset over the samples (bit ``i % 8``
    of byte ``i // 8``: 5.7 MB for Criteo Kaggle), computed on every core where the source
    has random access."""
    n = trace.num_samples
    block = -(-READ_SAMPLES // 8) * 8  # whole bytes of the bitset per block
    found = np.zeros(-(-n // 8), dtype=np.uint8)

    def mark(start: int, ids: np.ndarray) -> None:
        packed = np.packbits(_hot_mask(ids, hot_bits), bitorder="little")
        found[start // 8 : start // 8 + packed.size] = packed

    if not trace.random_access:
        start = 0
        for chunk in read_ahead(trace.chunks(block, ids_only=True)):
            mark(start, chunk.ids)
            start += len(chunk)
        return found

    def mark_block(start: int) -> None:
        mark(start, trace.ids_at(np.arange(start, min(start + block, n))))

    with ThreadPoolExecutor(max_workers=usable_cores(), thread_name_prefix="heraldbench-fae") as pool:
        list(pool.map(mark_block, range(0, n, block)))
    return found


def bits_between(bits: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Bits ``start..stop`` of a little-endian bitset, as booleans."""
    first = start // 8
    unpacked = np.unpackbits(bits[first : -(-stop // 8)], bitorder="little")
    return unpacked[start - 8 * first : stop - 8 * first].astype(bool)


@numba.njit(cache=True, nogil=True)
def _count_rows(ids, counts):  # pragma: no cover - numba
    for i in range(ids.shape[0]):
        for f in range(ids.shape[1]):
            if ids[i, f] >= 0:  # not a pad of a ragged table
                counts[ids[i, f]] += 1


@numba.njit(cache=True, nogil=True)
def _all_hot(ids, hot_bits, out):  # pragma: no cover - numba
    """out[i] = every id of sample i is hot; stops at a sample's first cold id (most are cold)."""
    for i in range(ids.shape[0]):
        hot = True
        for f in range(ids.shape[1]):
            k = ids[i, f]
            if not (hot_bits[k >> 3] >> (k & 7)) & 1:
                hot = False
                break
        out[i] = hot
