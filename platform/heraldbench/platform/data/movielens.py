"""Reader of MovieLens rating files as a two-table click trace (user, item).

A rating becomes an implicit-feedback sample: label 1 when the rating reaches
``positive_threshold`` (4 of 5 stars by default, the usual choice in recommendation papers),
else 0. The three layouts GroupLens ships are recognised from the first line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field, field_validator, model_validator

from heraldbench.platform.data._trace import TraceSource
from heraldbench.platform.data._vocab import (
    Block,
    ParsedRows,
    Problem,
    RawFileSpec,
    bad_value_problem,
    encode_column,
    first_line,
)
from heraldbench.platform.data.attributes import with_attributes
from heraldbench.platform.data.movielens_genres import genre_attribute, read_movie_genres
from heraldbench.platform.data.reading import ReadingPlan
from heraldbench.platform.exceptions import TraceFormatError
from heraldbench.platform.paths import NamesFile

__all__ = ["MovieLensSpec"]

TABLE_NAMES = ("user", "item")
CSV_HEADER = "userId,movieId,rating,timestamp"
_ID = r"^[0-9]{1,18}$"
_RATING = r"^[0-9]{1,9}(\.[0-9]{1,9})?$"


@dataclass(frozen=True)
class _Layout:
    name: str
    delimiter: str
    header_lines: int
    double_colon: bool = False


_U_DATA = _Layout("u.data (ML-100K, tab-separated)", "\t", 0)
_RATINGS_DAT = _Layout("ratings.dat (ML-1M/10M, '::'-separated)", "\t", 0, double_colon=True)
_RATINGS_CSV = _Layout("ratings.csv (ML-20M/25M/32M, with header)", ",", 1)
_HEADERLESS_CSV = _Layout("ratings csv without header", ",", 0)


class MovieLensSpec(RawFileSpec):
    """MovieLens ratings as a trace of two tables, ``user`` and ``item``, and no dense features.

    Reads ``u.data`` (ML-100K: ``user item rating timestamp``, tab-separated), ``ratings.dat``
    (ML-1M/10M: ``user::item::rating::timestamp``) and ``ratings.csv`` (ML-20M and later, with a
    ``userId,movieId,rating,timestamp`` header), recognised by content.

    Attributes:
        kind: ``"movielens"``.
        positive_threshold: a rating at or above it is a positive sample (label 1).
        sort_by_time: order samples by timestamp (stable); the files are ordered by user or
            not at all. When set, the whole file is read and ``max_samples`` keeps the earliest.
        items: the movie file (``u.item``, ``movies.dat`` or ``movies.csv``); when given, each
            sample also reads its movie's genres, a multi-hot ``genre`` table
            (:mod:`.movielens_genres`).

    Example:
        >>> trace = MovieLensSpec(path="ml-1m/ratings.dat", sort_by_time=True).open()
        >>> trace.layout.names
        ('user', 'item')
    """

    kind: Literal["movielens"] = "movielens"
    positive_threshold: float = 4.0
    sort_by_time: bool = False
    items: Annotated[Path | None, NamesFile()] = Field(
        None, exclude_if=lambda value: value is None,
        description="the movie file: each sample also reads its movie's genres")

    @field_validator("positive_threshold")
    @classmethod
    def _threshold_finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"positive_threshold must be a finite rating, got {value}")
        return value

    @model_validator(mode="after")
    def _genres_of_single_movies(self) -> MovieLensSpec:
        if self.items is not None and self.frequency_threshold > 1:
            raise ValueError(f"items needs frequency_threshold 0 or 1, got "
                             f"{self.frequency_threshold}: the row that rare movies share has no "
                             "genres of its own")
        return self

    def _open(self) -> TraceSource:
        """Read the file into a trace (see :class:`RawFileSpec` for the shared knobs)."""
        plan = self.reading_plan()
        if self.items is None:
            return plan.read(self)
        assembler = plan.assembled(self)
        trace = assembler.finish(self.frequency_threshold, dict(plan.info))
        genres = genre_attribute(read_movie_genres(self.items), assembler.row_keys("item"),
                                 self.items)
        return with_attributes(trace, [genres])

    def reading_plan(self) -> ReadingPlan:
        """How the file is cut into blocks and parsed (shared with chunked preprocessing)."""
        layout = self._detect_layout()
        info = {
            **self._base_info(),
            "labelled": True,
            "format": layout.name,
            "positive_threshold": self.positive_threshold,
            "sorted_by_time": self.sort_by_time,
        } | ({"items": str(self.items)} if self.items is not None else {})
        return ReadingPlan(
            table_names=TABLE_NAMES,
            dense_names=(),
            parse=partial(_parse_block, positive_threshold=self.positive_threshold),
            delimiter=layout.delimiter,
            num_fields=4,
            header_lines=layout.header_lines,
            rewrite=_double_colon_to_tab if layout.double_colon else None,
            separator_name="'::'" if layout.double_colon else None,
            sort_by_key=self.sort_by_time,
            info=info,
        )

    def _detect_layout(self) -> _Layout:
        line = first_line(self.path)
        if "::" in line:
            return _RATINGS_DAT
        if line.replace(" ", "") == CSV_HEADER:
            return _RATINGS_CSV
        if line.count("\t") == 3:
            return _U_DATA
        if line.count(",") == 3 and line.split(",", 1)[0].isdigit():
            return _HEADERLESS_CSV
        raise TraceFormatError(
            self.path,
            1,
            "not a MovieLens rating file: expected 'user<TAB>item<TAB>rating<TAB>timestamp', "
            f"'user::item::rating::timestamp' or the header {CSV_HEADER!r}, got {line[:80]!r}",
        )


def _double_colon_to_tab(raw: bytes) -> bytes:
    return raw.replace(b"::", b"\t")


def _parse_block(block: Block, *, positive_threshold: float) -> ParsedRows:
    user, item, rating, timestamp = block.columns
    problems = block.problems
    codes, keys = [], []
    for name, column in zip(TABLE_NAMES, (user, item), strict=True):
        _check(column, _ID, f"{name} id is not a non-negative integer", block.lines, problems)
        column_codes, column_keys = encode_column(column)
        codes.append(column_codes)
        keys.append(column_keys)
    valid_rating = _check(rating, _RATING, "rating is not a number", block.lines, problems)
    valid_time = _check(timestamp, _ID, "timestamp is not an integer", block.lines, problems)
    stars = pc.cast(pc.if_else(valid_rating, rating, "0"), pa.float64()).to_numpy()
    labels = (stars >= positive_threshold).astype(np.float32)
    seconds = pc.cast(pc.if_else(valid_time, timestamp, "0"), pa.int64()).to_numpy()
    dense = np.zeros((block.num_rows, 0), np.float32)
    return ParsedRows(labels, dense, codes, keys, sort_key=seconds)


def _check(
    column: pa.ChunkedArray, pattern: str, what: str, lines: np.ndarray, problems: list[Problem]
) -> pa.ChunkedArray:
    valid = pc.match_substring_regex(column, pattern)
    problems += bad_value_problem(lines, ~valid.to_numpy(zero_copy_only=False), column, what)
    return valid
