"""Ragged tables: samples that read fewer ids from a table than its width.

A trace keeps a table's ids of a sample in ``width`` consecutive columns. In a ragged table a
sample reads ``length ≤ width`` ids (a user's history before it is full, a multi-hot feature of
varying size); its ids fill the first ``length`` columns, and every column past them repeats its
last id. Together with the lengths, that is TorchRec's ``KeyedJaggedTensor`` (values and lengths
per table) padded to each table's width.

The pads are chosen so that every rule over a sample's *distinct* ids (working sets, touches,
writers, who serves a row) reads a padded sample exactly as the ragged one; only the rules that
count an id each time it is read need the lengths, and take them from here: accesses, the
location-aware and affinity scores, HET's per-occurrence clock, BagPipe's rows read once in a
batch, FAE's access counts, pooling and the placements' routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from heraldbench.platform.exceptions import DataError

if TYPE_CHECKING:
    from heraldbench.platform.data._trace import TableLayout

__all__ = ["checked_lengths", "full_lengths", "length_law", "marked_pads", "pad_columns",
           "read_stream", "real_ids", "with_pads"]

#: The id a pad column holds in :func:`marked_pads`: no row.
PAD = -1


def pad_columns(lengths: np.ndarray, widths: tuple[int, ...] | np.ndarray) -> np.ndarray:
    """(n, Σ widths) bool: whether each of a sample's id columns is a pad."""
    widths = np.asarray(widths, np.int64)
    slot = np.arange(int(widths.sum())) - np.repeat(np.cumsum(widths) - widths, widths)
    return slot[None, :] >= np.repeat(np.asarray(lengths, np.int64), widths, axis=1)


def marked_pads(ids: np.ndarray, lengths: np.ndarray | None,
                widths: tuple[int, ...]) -> np.ndarray:
    """``ids`` with every pad column set to :data:`PAD`; ``ids`` itself without lengths."""
    if lengths is None:
        return ids
    return np.where(pad_columns(lengths, widths), ids.dtype.type(PAD), ids)


def with_pads(ids: np.ndarray, lengths: np.ndarray, widths: tuple[int, ...]) -> np.ndarray:
    """``ids`` with every column past its table's length set to the table's last id."""
    widths_ = np.asarray(widths, np.int64)
    last = np.repeat(np.cumsum(widths_) - widths_ + np.asarray(lengths, np.int64) - 1, widths_,
                     axis=1)
    return np.where(pad_columns(lengths, widths), np.take_along_axis(ids, last, axis=1), ids)


def read_stream(ids: np.ndarray, lengths: np.ndarray | None,
                widths: tuple[int, ...]) -> np.ndarray:
    """Every id the samples read, in sample order then column order, pads left out."""
    return ids.reshape(-1) if lengths is None else ids[~pad_columns(lengths, widths)]


def full_lengths(widths: tuple[int, ...] | np.ndarray, samples: int) -> np.ndarray:
    """(samples, T) int32, read-only: every sample reads every table's full width."""
    widths = np.asarray(widths, np.int32)
    return np.broadcast_to(widths, (samples, widths.size))


def length_law(lengths: np.ndarray, width: int) -> np.ndarray:
    """The share of samples reading each number of ids ``0..width`` of one table."""
    counts = np.bincount(np.asarray(lengths, np.int64), minlength=width + 1)[: width + 1]
    return counts / max(1, int(counts.sum()))


def real_ids(lengths: np.ndarray | None, samples: int, ids_per_sample: int) -> int:
    """Ids the ``samples`` samples read, pads left out."""
    return samples * ids_per_sample if lengths is None else int(np.asarray(lengths).sum())


def checked_lengths(ids: np.ndarray, lengths: np.ndarray | None,
                    layout: TableLayout) -> np.ndarray | None:
    """``lengths`` as int32 after checking them against ``ids`` and ``layout``: given exactly
    when the layout is ragged, shape (n, T), each within 1..width (the full width in a table
    that is not ragged), and every pad repeating its table's last id."""
    if not layout.is_ragged:
        if lengths is not None:
            raise DataError("lengths given for a layout without ragged tables")
        return None
    if lengths is None:
        raise DataError("a layout with ragged tables needs each sample's lengths")
    lengths = np.ascontiguousarray(lengths, np.int32)
    widths = np.asarray(layout.table_widths, np.int64)
    if lengths.shape != (ids.shape[0], layout.num_tables):
        raise DataError(f"lengths must have shape {(ids.shape[0], layout.num_tables)}, "
                        f"got {lengths.shape}")
    fixed = ~np.asarray(layout.ragged, bool)
    bad = (lengths < 1) | (lengths > widths) | (fixed & (lengths != widths))
    if bad.any():
        row, table = map(int, np.argwhere(bad)[0])
        raise DataError(f"sample {row} reads {int(lengths[row, table])} ids from table "
                        f"{layout.names[table]!r}, outside 1..{int(widths[table])}"
                        + (" (not a ragged table)" if fixed[table] else ""))
    _check_pads(ids, lengths, widths)
    return lengths


def _check_pads(ids: np.ndarray, lengths: np.ndarray, widths: np.ndarray) -> None:
    wrong = ids != with_pads(ids, lengths, tuple(widths.tolist()))
    if wrong.any():
        row, column = map(int, np.argwhere(wrong)[0])
        raise DataError(f"sample {row} column {column} is a pad but does not repeat its "
                        f"table's last id")
