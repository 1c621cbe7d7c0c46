"""Reader of the Avazu click-through CSV files (Kaggle, 10 days of mobile ad traffic).

Every column but ``id`` and ``click`` is categorical (the Avazu CTR challenge's data description). The raw
``hour`` (YYMMDDHH) would give every hour of the 10 days its own row, which only memorises the
date; like most Avazu pipelines we keep the hour of day (24 rows) and, optionally, derive the
day of week as one more table.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Literal

import numpy as np
import pyarrow as pa

from heraldbench.platform.data._trace import InMemoryTrace
from heraldbench.platform.data._vocab import (
    Block,
    ParsedRows,
    Problem,
    RawFileSpec,
    bad_value_problem,
    binary_labels,
    encode_column,
    first_line,
)
from heraldbench.platform.data.reading import ReadingPlan
from heraldbench.platform.exceptions import TraceFormatError

__all__ = ["AvazuCSVSpec"]

LABEL_COLUMN = "click"
IGNORED_COLUMNS = ("id",)
#: Avazu's columns in file order, label included.
COLUMNS = (
    "id", "click", "hour", "C1", "banner_pos", "site_id", "site_domain", "site_category",
    "app_id", "app_domain", "app_category", "device_id", "device_ip", "device_model",
    "device_type", "device_conn_type", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21",
)  # fmt: skip
HOUR_COLUMN = "hour"
WEEKDAY_TABLE = "weekday"
_HOUR_FORMAT = "%y%m%d%H"
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # fixed, not the locale's names


class AvazuCSVSpec(RawFileSpec):
    """Avazu's CSV files as a trace of categorical tables and no dense features.

    Tables follow the file's columns without ``id`` and ``click``: ``hour`` (reduced to the hour
    of day, "00".."23"), ``C1``, ``banner_pos``, ... ``C21``, then ``weekday`` ("Mon".."Sun")
    when ``add_weekday`` is set. ``train`` has a ``click`` column, which becomes the label;
    ``test`` lacks it (detected from the header), and its samples get label 0.

    Attributes:
        kind: ``"avazu-csv"``.
        add_weekday: add a ``weekday`` table derived from the date in ``hour``.

    Example:
        >>> trace = AvazuCSVSpec(path="train.gz", frequency_threshold=5).open()
        >>> trace.layout.names[:3]
        ('hour', 'C1', 'banner_pos')
    """

    kind: Literal["avazu-csv"] = "avazu-csv"
    add_weekday: bool = True

    def _open(self) -> InMemoryTrace:
        """Read the file into a trace (see :class:`RawFileSpec` for the shared knobs)."""
        return self.reading_plan().read(self)

    def reading_plan(self) -> ReadingPlan:
        """How the file is cut into blocks and parsed (shared with chunked preprocessing)."""
        header = self._read_header()
        labelled = LABEL_COLUMN in header
        tables = [c for c in COLUMNS if c != LABEL_COLUMN and c not in IGNORED_COLUMNS]
        names = tables + [WEEKDAY_TABLE] if self.add_weekday else tables
        position = {name: i for i, name in enumerate(header)}
        parse = partial(
            _parse_block, position=position, tables=tables, add_weekday=self.add_weekday
        )
        return ReadingPlan(
            table_names=tuple(names),
            dense_names=(),
            parse=parse,
            delimiter=",",
            num_fields=len(header),
            header_lines=1,
            info={**self._base_info(), "labelled": labelled, "hour": "hour of day"},
        )

    def _read_header(self) -> list[str]:
        header = first_line(self.path).split(",")
        expected = set(COLUMNS)
        missing = sorted(expected - {LABEL_COLUMN} - set(header))
        unknown = sorted(set(header) - expected)
        if missing or unknown or len(set(header)) != len(header):
            raise TraceFormatError(
                self.path,
                1,
                f"not an Avazu header: missing columns {missing}, unknown columns {unknown}"
                if missing or unknown
                else "not an Avazu header: repeated column names",
            )
        return header


def _parse_block(
    block: Block, *, position: dict[str, int], tables: list[str], add_weekday: bool
) -> ParsedRows:
    problems = block.problems
    if LABEL_COLUMN in position:
        label_column = block.columns[position[LABEL_COLUMN]]
        labels = binary_labels(label_column, block.lines, problems, "click")
    else:
        labels = np.zeros(block.num_rows, np.float32)
    hour_column = block.columns[position[HOUR_COLUMN]]
    hour_codes, hour_of_day, weekday = _hour(hour_column, block.lines, problems)
    codes, keys = [], []
    for name in tables:
        if name == HOUR_COLUMN:
            column_codes, column_keys = hour_codes, hour_of_day
        else:
            column_codes, column_keys = encode_column(block.columns[position[name]])
        codes.append(column_codes)
        keys.append(column_keys)
    if add_weekday:
        codes.append(hour_codes)
        keys.append(weekday)
    dense = np.zeros((block.num_rows, 0), np.float32)
    return ParsedRows(labels, dense, codes, keys)


def _hour(
    column: pa.ChunkedArray, lines: np.ndarray, problems: list[Problem]
) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """Codes into the distinct raw hours, with each one's hour of day and weekday."""
    codes, raw_hours = encode_column(column)
    hour_of_day, weekday, bad = [], [], []
    for i, raw in enumerate(raw_hours.to_pylist()):  # a few hundred distinct values at most
        moment = _parse_hour(raw)
        if moment is None and raw != "":
            bad.append(i)
        hour_of_day.append(f"{moment.hour:02d}" if moment else "")
        weekday.append(_WEEKDAYS[moment.weekday()] if moment else "")
    if bad:
        bad_rows = np.isin(codes, bad)
        problems += bad_value_problem(lines, bad_rows, column, "hour is not YYMMDDHH")
    return codes, pa.array(hour_of_day, pa.string()), pa.array(weekday, pa.string())


def _parse_hour(raw: str) -> datetime | None:
    if len(raw) != 8 or not raw.isdigit():
        return None
    try:
        return datetime.strptime(raw, _HOUR_FORMAT)
    except ValueError:
        return None
