"""A streaming Criteo-Kaggle-like trace: the real table sizes, a Zipf head, a cold tail, and
labels a model can learn.

Access model (peers_and_data.md §4.2). Each of the 26 categorical fields draws its row from a
mixture: with probability ``1 - t_f`` a bounded Zipf(``zipf_alpha``) over popularity ranks, whose
ranks are scattered over the table by a random permutation; with probability ``t_f`` a row of the
cold tail (uniformly random, or, by default, one of the recently arrived rows: see below). A pure
Zipf touches only ~31% of Kaggle's rows in an epoch, while the real file touches every one of them,
most only a few times; the tail restores that. ``t_f`` is set so that the tail visits each row
``tail_visits_per_row`` times in expectation over a *reference epoch* of ``scale × 45,840,617``
samples, hence big tables get a big tail share and tiny ones none:
``t_f = min(1, tail_visits_per_row × rows_f / (scale × 45,840,617))``. At the defaults a Kaggle-size
run puts about 92% of accesses on the hottest 1% of rows (BagPipe: >92%) and touches about 90% of
the rows, most of the cold ones once or twice.

Temporal locality of the tail (``tail_window``). Criteo Kaggle is chronological: a cold id (a new
ad, a new user) arrives, is seen a few times while it lives, and goes. So each table's tail sweeps
through a random *arrival order* of its rows (a second permutation, independent of the head's): row
number ``k`` of that order arrives at reference time ``k / rows_f`` of the reference epoch, i.e. the
sweep moves ``rows_f / (scale × 45,840,617)`` rows per sample and passes every row once per
reference epoch. A tail draw at sample ``t`` picks uniformly among the rows that arrived in the last
``scale × tail_window`` samples. Each row is therefore live for one window, and gets
``tail_visits_per_row`` tail visits in expectation (Poisson-like), all inside that window; the
marginal over a whole reference epoch is still uniform, so the top-1% share and the epoch's row
coverage stay as they were (a run shorter than the reference epoch touches fewer rows than with the
uniform tail, since only the rows that have arrived can be drawn: 30% instead of 44% of the rows
after 22% of the epoch at scale 0.05). The window is given in Kaggle samples (scale 1) and shrinks
with ``scale`` like the reference epoch does, so a scaled trace is a miniature of the full one: the
window is the same fraction of the epoch, and the rows live in the tail at any time are the same
fraction (``tail_window / 45,840,617``) of each table, hence of a cache sized as a share of all
rows. The sweep wraps around: at ``t = 0`` the rows that arrived "before the start" are the last
rows of the arrival order, so the trace is stationary from its first sample (no warm-up where the
tail hits a handful of rows), and a second reference epoch replays the first one's arrivals, as a
second pass over the real file would. ``tail_window=None`` (or 0) is the uniform tail of the first
version, and reproduces its traces bit for bit.

The default window, 1,000,000 Kaggle samples, is about 15% of one of Kaggle's 7 days (6.55 M
samples, roughly 3.7 hours of traffic): a cold row's visits fall within ~490 global batches of 2,048
at scale 1 (~24 at scale 0.05) instead of anywhere in the epoch, and about 2.2% of each big table is
live in the tail at any time (about a fifth of a cache holding 10% of the rows). The head does not
drift: its popular rows stay popular for the whole trace (they are re-read within a batch or a few
anyway; a drift would matter mostly to frequency-based caches over long runs).

Every random number is a hash of (seed, stream, sample index), so a sample's content does not depend
on how the trace is cut into blocks, and any range can be generated on its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from statistics import NormalDist
from typing import Any, Literal

import numba
import numpy as np
from pydantic import Field

from heraldbench.platform.data._trace import (
    ROW_ID_DTYPE,
    DatasetSpecBase,
    SampleChunk,
    TableLayout,
    TraceSource,
)
from heraldbench.platform.exceptions import DataError

__all__ = [
    "DEFAULT_TAIL_WINDOW",
    "KAGGLE_CARDINALITIES",
    "KAGGLE_SAMPLES",
    "SyntheticCriteoSpec",
    "SyntheticCriteoTrace",
]

#: Distinct values of C1..C26 in DLRM's processed Criteo Kaggle data (sum 33,762,577).
KAGGLE_CARDINALITIES: tuple[int, ...] = (
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
    27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572,
)  # fmt: skip
#: Labelled rows of the Kaggle file.
KAGGLE_SAMPLES = 45_840_617
NUM_DENSE = 13
#: Default life of a cold row, in Kaggle samples: ~15% of one of Kaggle's 7 days (module docstring).
DEFAULT_TAIL_WINDOW = 1_000_000

#: Samples per generated block: big enough to amortise the kernel calls, small enough for cache.
BLOCK_SAMPLES = 65_536
#: The Zipf quantile function is tabulated at 2**16 equal-probability buckets, uniform within
#: each; a rank's probability is off by at most 2 / 2**16, far below sampling noise.
_BUCKET_BITS = 16
#: Dense features take 2**12 quantile levels each.
_DENSE_BITS = 12
#: Tables smaller than this (Kaggle rows) carry a per-row click effect: they are seen often
#: enough to be learnt, like advertiser or site fields; the huge id-like tables carry none.
_EFFECT_TABLE_LIMIT = 100_000

# Dense features are log(count + 1) of log-normal counts, as in DLRM's preprocessing of Criteo's
# integer features: medians from about 1 to about 3,000, with wide spreads.
_DENSE_LOG_MEDIANS = (0.0, 1.1, 2.0, 1.6, 8.0, 3.7, 1.1, 2.1, 3.7, 0.0, 0.7, 0.0, 1.6)
_DENSE_LOG_SPREADS = (1.2, 1.8, 1.5, 1.1, 1.6, 1.7, 1.5, 1.0, 1.2, 0.9, 1.0, 1.3, 1.4)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW24 = np.uint64((1 << 24) - 1)
_S16, _S24, _S27, _S30, _S31, _S40, _S48 = (np.uint64(s) for s in (16, 24, 27, 30, 31, 40, 48))
_DENSE_SHIFT = np.uint64(64 - _DENSE_BITS)


class SyntheticCriteoSpec(DatasetSpecBase):
    """A synthetic trace shaped like Criteo Kaggle (26 tables, 13 dense features, ~25% clicks).

    Args:
        samples: number of samples in the trace.
        scale: table sizes are ``round(Kaggle cardinality × scale)``, never below
            ``min(Kaggle cardinality, min_table_rows)``.
        seed: the trace is a pure function of the spec; a new seed gives a new trace.
        zipf_alpha: exponent of the Zipf head (FBGEMM recommends 1.15 for training traces).
        tail_visits_per_row: expected uniform "cold" visits per row over ``scale × 45.84 M``
            samples; 0 gives a pure Zipf.
        tail_window: how long a cold row lives, in Kaggle samples (the trace uses
            ``scale × tail_window`` samples): its tail visits fall within that many samples
            after its arrival. ``None`` or 0 spreads them uniformly over the trace (the first
            version's tail, reproduced exactly); at most 45,840,617 (the whole reference epoch).
        min_table_rows: the floor that keeps tiny fields (C9 has 3 values) intact when scaling.
        click_rate: mean label.
        dense_signal: weight of the dense features in the label's logit (std of their term).
        categorical_signal: weight of the per-row effects of the small tables (std of their term).

    Example:
        >>> trace = SyntheticCriteoSpec(samples=1000, scale=0.01).open()
        >>> next(trace.chunks(256)).ids.shape
        (256, 26)
    """

    kind: Literal["synthetic-criteo"] = "synthetic-criteo"
    samples: int = Field(gt=0, description="samples in the trace")
    scale: float = Field(1.0, gt=0.0, le=1.0, description="fraction of Kaggle's table sizes")
    seed: int = Field(0, ge=0, description="seed of everything random")
    zipf_alpha: float = Field(1.15, gt=0.0, le=4.0, description="Zipf exponent of the head")
    tail_visits_per_row: float = Field(
        2.0, ge=0.0, le=1000.0, description="uniform cold visits per row per reference epoch"
    )
    tail_window: int | None = Field(
        DEFAULT_TAIL_WINDOW,
        ge=0,
        le=KAGGLE_SAMPLES,
        description="Kaggle samples a cold row lives (its tail visits fall in that span); "
        "None or 0: uniform over the trace",
    )
    min_table_rows: int = Field(100, ge=1, description="tables never shrink below this")
    click_rate: float = Field(0.256, gt=0.0, lt=1.0, description="mean label")
    dense_signal: float = Field(1.0, ge=0.0, le=10.0, description="logit std from dense features")
    categorical_signal: float = Field(
        1.0, ge=0.0, le=10.0, description="logit std from small-table row effects"
    )

    def table_sizes(self) -> tuple[int, ...]:
        """Rows of C1..C26 at this spec's scale."""
        return tuple(
            max(min(card, self.min_table_rows), round(card * self.scale))
            for card in KAGGLE_CARDINALITIES
        )

    def _open(self) -> SyntheticCriteoTrace:
        return SyntheticCriteoTrace(self)


class SyntheticCriteoTrace(TraceSource):
    """The trace of a :class:`SyntheticCriteoSpec`, generated block by block on demand.

    Holds O(rows) state (a rank-to-row permutation per table, and with a tail window an
    arrival-order permutation too: 4 or 8 bytes per row) and a few small tables; memory does not
    grow with the number of samples. :meth:`generate` produces any range of samples directly, e.g.
    for parallel consumers.
    """

    def __init__(self, spec: SyntheticCriteoSpec) -> None:
        self.spec = spec
        sizes = spec.table_sizes()
        self.layout = TableLayout(tuple(f"C{i + 1}" for i in range(len(sizes))), sizes)
        self.num_samples = spec.samples
        self.num_dense = NUM_DENSE
        streams = len(sizes) + NUM_DENSE + 2
        keys = np.random.SeedSequence(spec.seed).generate_state(streams, np.uint64)
        self._id_keys = keys[: len(sizes)]
        self._dense_keys = keys[len(sizes) : len(sizes) + NUM_DENSE]
        self._effect_key, self._label_key = keys[-2], keys[-1]
        self._offsets = self.layout.offsets
        self._tail_cuts = self._tail_cutoffs()
        self._bucket_starts = np.stack([_zipf_bucket_starts(n, spec.zipf_alpha) for n in sizes])
        self._rank_to_row = self._rank_permutations()
        self._window = bool(spec.tail_window)
        if self._window:
            sizes_f = np.asarray(sizes, dtype=np.float64)
            self._sweep_rates = sizes_f / (spec.scale * KAGGLE_SAMPLES)
            self._live_rows = sizes_f * (spec.tail_window / KAGGLE_SAMPLES)
            self._arrival_to_row = self._arrival_permutations()
        self._dense_values, self._dense_logit = self._dense_tables()
        self._effect_tables = np.array(
            [f for f, card in enumerate(KAGGLE_CARDINALITIES) if card < _EFFECT_TABLE_LIMIT],
            dtype=np.int64,
        )
        self._effect_scale = spec.categorical_signal / math.sqrt(len(self._effect_tables))
        self._bias = 0.0
        self._bias = self._solve_bias()

    # ---- set-up --------------------------------------------------------------------------------

    def tail_shares(self) -> dict[str, float]:
        """Probability that an access of each table is a uniform cold draw."""
        reference_epoch = self.spec.scale * KAGGLE_SAMPLES
        return {
            name: min(1.0, self.spec.tail_visits_per_row * rows / reference_epoch)
            for name, rows in zip(self.layout.names, self.layout.sizes, strict=True)
        }

    def _tail_cutoffs(self) -> np.ndarray:
        shares = np.array(list(self.tail_shares().values()))
        return np.round(shares * (1 << 24)).astype(np.uint64)

    def _rank_permutations(self) -> np.ndarray:
        # Popular rows sit at random places in each table, not at ids 0..k.
        rank_to_row = np.empty(self.layout.total_rows, dtype=ROW_ID_DTYPE)
        for f, (offset, rows) in enumerate(zip(self._offsets, self.layout.sizes, strict=True)):
            rng = np.random.default_rng([self.spec.seed, 1, f])
            rank_to_row[offset : offset + rows] = rng.permutation(rows) + offset
        return rank_to_row

    def _arrival_permutations(self) -> np.ndarray:
        # The order in which the tail sweeps each table: independent of the popularity ranks.
        arrival_to_row = np.empty(self.layout.total_rows, dtype=ROW_ID_DTYPE)
        for f, (offset, rows) in enumerate(zip(self._offsets, self.layout.sizes, strict=True)):
            rng = np.random.default_rng([self.spec.seed, 3, f])
            arrival_to_row[offset : offset + rows] = rng.permutation(rows) + offset
        return arrival_to_row

    def tail_window_samples(self) -> float | None:
        """Samples over which a cold row's tail visits fall (None: anywhere in the trace)."""
        return self.spec.scale * self.spec.tail_window if self._window else None

    def _dense_tables(self) -> tuple[np.ndarray, np.ndarray]:
        levels = (np.arange(1 << _DENSE_BITS) + 0.5) / (1 << _DENSE_BITS)
        normal = np.array([NormalDist().inv_cdf(q) for q in levels])
        medians, spreads = np.array(_DENSE_LOG_MEDIANS), np.array(_DENSE_LOG_SPREADS)
        counts = np.floor(np.exp(medians[:, None] + spreads[:, None] * normal[None, :]))
        values = np.log1p(counts)
        weights = np.random.default_rng([self.spec.seed, 2]).normal(size=NUM_DENSE)
        weights *= self.spec.dense_signal / np.linalg.norm(weights)
        standardized = (values - values.mean(axis=1, keepdims=True)) / values.std(
            axis=1, keepdims=True
        )
        return values.astype(np.float32), weights[:, None] * standardized

    def _solve_bias(self) -> float:
        """The logit offset that makes the mean click probability ``click_rate``.

        Solved on the first block's worth of sample indices whatever the trace's length, so a
        shorter trace is a prefix of a longer one with the same knobs.
        """
        ids = np.empty((BLOCK_SAMPLES, self.layout.num_tables), dtype=ROW_ID_DTYPE)
        dense = np.empty((BLOCK_SAMPLES, NUM_DENSE), dtype=np.float32)
        logits = np.empty(BLOCK_SAMPLES)
        positions = np.arange(BLOCK_SAMPLES)
        self._fill_ids(positions, ids)
        _fill_dense_and_logits(positions, ids, dense, logits, *self._label_arrays())
        low, high = -40.0, 40.0
        for _ in range(60):
            mid = (low + high) / 2
            if _mean_sigmoid(logits + mid) < self.spec.click_rate:
                low = mid
            else:
                high = mid
        return (low + high) / 2

    def _label_arrays(self) -> tuple[Any, ...]:
        return (
            self._dense_keys, self._dense_values, self._dense_logit, self._effect_tables,
            self._effect_key, self._effect_scale, self._bias,
        )  # fmt: skip

    # ---- generation ----------------------------------------------------------------------------

    def _fill_ids(self, positions: np.ndarray, ids: np.ndarray) -> None:
        """ids[i] = the ids of sample ``positions[i]``."""
        sizes = np.asarray(self.layout.sizes, dtype=np.int64)
        if self._window:
            _fill_ids_windowed(
                positions, ids, self._id_keys, self._tail_cuts, self._bucket_starts, sizes,
                self._offsets, self._rank_to_row, self._sweep_rates, self._live_rows,
                self._arrival_to_row,
            )  # fmt: skip
        else:
            _fill_ids(
                positions, ids, self._id_keys, self._tail_cuts, self._bucket_starts, sizes,
                self._offsets, self._rank_to_row,
            )  # fmt: skip

    def generate(self, start: int, stop: int) -> SampleChunk:
        """Samples ``[start, stop)`` of the trace."""
        if not 0 <= start <= stop <= self.num_samples:
            raise DataError(
                f"samples [{start}, {stop}) are outside the trace's 0..{self.num_samples}"
            )
        return self._samples(np.arange(start, stop))

    random_access = True  # every sample is a function of its position

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        """The samples at ``positions``, generating only those samples."""
        return self._samples(self._checked_positions(positions))

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        """The ids of the samples at ``positions``, generating only those ids."""
        positions = self._checked_positions(positions)
        ids = np.empty((positions.size, self.layout.num_tables), dtype=ROW_ID_DTYPE)
        self._fill_ids(positions, ids)
        return ids

    def _samples(self, positions: np.ndarray) -> SampleChunk:
        n = positions.size
        ids = np.empty((n, self.layout.num_tables), dtype=ROW_ID_DTYPE)
        dense = np.empty((n, NUM_DENSE), dtype=np.float32)
        labels = np.empty(n, dtype=np.float32)
        logits = np.empty(n)
        self._fill_ids(positions, ids)
        _fill_dense_and_logits(positions, ids, dense, logits, *self._label_arrays())
        _fill_labels(positions, logits, labels, self._label_key)
        return SampleChunk(ids, labels, dense)

    def _blocks(self) -> Iterator[SampleChunk]:
        for start in range(0, self.num_samples, BLOCK_SAMPLES):
            yield self.generate(start, min(start + BLOCK_SAMPLES, self.num_samples))

    def describe(self) -> dict[str, Any]:
        knobs = self.spec.model_dump()
        knobs.pop("samples")
        return {
            **super().describe(),
            **knobs,
            "table_sizes": dict(zip(self.layout.names, self.layout.sizes, strict=True)),
            "tail_window_samples": self.tail_window_samples(),
            "label_bias": self._bias,
        }


def _zipf_bucket_starts(rows: int, alpha: float) -> np.ndarray:
    """First rank of each of 2**16 equal-probability buckets of a Zipf over ``rows`` ranks.

    Bucket k holds the ranks ``starts[k]..starts[k + 1]`` (inclusive); shape (2**16 + 1,).
    """
    cdf = np.arange(1, rows + 1, dtype=np.float64)
    np.power(cdf, -alpha, out=cdf)
    np.cumsum(cdf, out=cdf)
    cdf /= cdf[-1]
    quantiles = np.arange((1 << _BUCKET_BITS) + 1) / (1 << _BUCKET_BITS)
    starts = np.searchsorted(cdf, quantiles, side="right")
    return np.minimum(starts, rows - 1).astype(np.int32)


def _mean_sigmoid(x: np.ndarray) -> float:
    return float(np.mean(0.5 * (1.0 + np.tanh(0.5 * x))))


# ---- kernels: counter-based random numbers (splitmix64 of seed-key ^ sample index) ------------


@numba.njit(cache=True, inline="always")
def _mix64(z):  # pragma: no cover - numba
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True, inline="always")
def _random(key, sample):  # pragma: no cover - numba
    return _mix64((np.uint64(sample) * _GOLDEN) ^ key)


@numba.njit(cache=True, inline="always")
def _head_row(r, starts, offset, rank_to_row):  # pragma: no cover - numba
    """The Zipf head's row for draw ``r``: top 16 bits pick a bucket, bits 24..47 a rank in it."""
    bucket = np.int64(r >> _S48)
    first = starts[bucket]
    span = np.uint64(starts[bucket + 1] - first + 1)
    rank = first + np.int64((((r >> _S24) & _LOW24) * span) >> _S24)
    return rank_to_row[offset + rank]


@numba.njit(cache=True, nogil=True)
def _fill_ids(
    positions, ids, keys, tail_cuts, bucket_starts, sizes, offsets, rank_to_row
):  # pragma: no cover - numba
    """One 64-bit draw per id: low 24 bits pick tail or head; the tail uses the top 40 bits as a
    uniform row; the head uses the top 16 bits as a Zipf bucket and bits 24..47 inside it.
    Exact while tables have < 2**24 rows (the largest, C3, has 10.1 M at scale 1)."""
    n, tables = ids.shape
    for f in range(tables):
        key, cut, rows, offset = keys[f], tail_cuts[f], np.uint64(sizes[f]), offsets[f]
        starts = bucket_starts[f]
        for i in range(n):
            r = _random(key, positions[i])
            if (r & _LOW24) < cut:
                ids[i, f] = offset + np.int64(((r >> _S24) * rows) >> _S40)
            else:
                ids[i, f] = _head_row(r, starts, offset, rank_to_row)


@numba.njit(cache=True, nogil=True)
def _fill_ids_windowed(
    positions, ids, keys, tail_cuts, bucket_starts, sizes, offsets, rank_to_row, sweep_rates,
    live_rows, arrival_to_row,
):  # pragma: no cover - numba
    """:func:`_fill_ids` with a sweeping tail: at sample ``t`` the tail's arrival position is
    ``t × sweep_rate - u × live_rows`` (``u`` the top 40 bits as a uniform in [0, 1)), wrapped
    around the table, and the row is that position of the arrival order. The head is unchanged."""
    n, tables = ids.shape
    inv40 = 1.0 / 1099511627776.0
    for f in range(tables):
        key, cut, rows, offset = keys[f], tail_cuts[f], sizes[f], offsets[f]
        starts = bucket_starts[f]
        rate, live = sweep_rates[f], live_rows[f]
        for i in range(n):
            t = positions[i]
            r = _random(key, t)
            if (r & _LOW24) < cut:
                u = np.float64(r >> _S24) * inv40
                position = np.int64(math.floor(t * rate - u * live)) % rows
                if position < 0:
                    position += rows
                ids[i, f] = arrival_to_row[offset + position]
            else:
                ids[i, f] = _head_row(r, starts, offset, rank_to_row)


@numba.njit(cache=True, inline="always")
def _row_effect(row, key):  # pragma: no cover - numba
    """A fixed, roughly standard-normal click effect of a row (Irwin-Hall of 4 hashed uniforms)."""
    r = _mix64(np.uint64(row) ^ key)
    mask = np.uint64(0xFFFF)
    total = (r & mask) + ((r >> _S16) & mask) + ((r >> np.uint64(32)) & mask) + (r >> _S48)
    return (np.float64(total) / 65536.0 - 2.0) * 1.7320508075688772


@numba.njit(cache=True, nogil=True)
def _fill_dense_and_logits(
    positions, ids, dense, logits, dense_keys, dense_values, dense_logit, effect_tables, effect_key,
    effect_scale, bias,
):  # pragma: no cover - numba
    """Dense features and the click logit: bias + dense term + small-table row effects."""
    for i in range(ids.shape[0]):
        logit = bias
        for j in range(dense.shape[1]):
            level = np.int64(_random(dense_keys[j], positions[i]) >> _DENSE_SHIFT)
            dense[i, j] = dense_values[j, level]
            logit += dense_logit[j, level]
        effects = 0.0
        for f in effect_tables:
            effects += _row_effect(ids[i, f], effect_key)
        logits[i] = logit + effect_scale * effects


@numba.njit(cache=True, nogil=True)
def _fill_labels(positions, logits, labels, key):  # pragma: no cover - numba
    """Bernoulli(sigmoid(logit)) labels."""
    for i in range(logits.shape[0]):
        u = (np.float64(_random(key, positions[i]) >> np.uint64(11)) + 0.5) / 9007199254740992.0
        labels[i] = 1.0 if u * (1.0 + math.exp(-logits[i])) < 1.0 else 0.0
