"""Reader of Criteo's tab-separated click logs (Kaggle Display Advertising Challenge, Terabyte).

Preprocessing follows DLRM's reference (facebookresearch/dlrm, ``data_utils.py``): an empty dense value is
0, negative counts are clipped to 0 and every dense value becomes ``log(x + 1)``; categorical
hashes are re-indexed per table in order of first appearance (no ``% R`` hashing), with the
optional frequency threshold of TorchRec and NVIDIA's recipes.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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

__all__ = ["CriteoTSVSpec"]

NUM_DENSE = 13
NUM_CATEGORICAL = 26
DENSE_NAMES = tuple(f"I{i + 1}" for i in range(NUM_DENSE))
TABLE_NAMES = tuple(f"C{i + 1}" for i in range(NUM_CATEGORICAL))
_LABELLED_FIELDS = 1 + NUM_DENSE + NUM_CATEGORICAL
_UNLABELLED_FIELDS = NUM_DENSE + NUM_CATEGORICAL
# Categorical values are 32-bit hashes written in hex; case is not significant.
_HEX_HASH = r"^[0-9a-f]{1,8}$"
# Dense values are integer counts; 18 digits keep them inside int64.
_INTEGER = r"^-?[0-9]{1,18}$"


class CriteoTSVSpec(RawFileSpec):
    """Criteo's tab-separated click logs as a trace of 26 tables (C1..C26) and 13 dense features.

    The labelled layout (Kaggle ``train.txt``, Terabyte ``day_N``) is ``label, I1..I13,
    C1..C26``; the unlabelled one (Kaggle ``test.txt``) drops the label, and its samples get
    label 0. A missing categorical value has its own row (row 0) in each table.

    Attributes:
        kind: ``"criteo-tsv"``.
        labelled: whether lines start with a 0/1 label; None detects it from the first line's
            field count (40 labelled, 39 unlabelled).

    Example:
        >>> trace = CriteoTSVSpec(path="train.txt.gz", max_samples=1_000_000).open()
        >>> trace.layout.names[:2], trace.dense.shape[1]
        (('C1', 'C2'), 13)
    """

    kind: Literal["criteo-tsv"] = "criteo-tsv"
    labelled: bool | None = None

    def _open(self) -> InMemoryTrace:
        """Read the file into a trace (see :class:`RawFileSpec` for the shared knobs)."""
        return self.reading_plan().read(self)

    def reading_plan(self) -> ReadingPlan:
        """How the file is cut into blocks and parsed (shared with chunked preprocessing)."""
        labelled = self._detect_labelled() if self.labelled is None else self.labelled
        return ReadingPlan(
            table_names=TABLE_NAMES,
            dense_names=DENSE_NAMES,
            parse=partial(_parse_block, labelled=labelled),
            delimiter="\t",
            num_fields=_LABELLED_FIELDS if labelled else _UNLABELLED_FIELDS,
            info={**self._base_info(), "labelled": labelled},
        )

    def _detect_labelled(self) -> bool:
        fields = first_line(self.path).count("\t") + 1
        if fields not in (_LABELLED_FIELDS, _UNLABELLED_FIELDS):
            raise TraceFormatError(
                self.path,
                1,
                f"expected {_LABELLED_FIELDS} (labelled) or {_UNLABELLED_FIELDS} (unlabelled) "
                f"tab-separated fields, found {fields}; set `labelled` to read past it",
            )
        return fields == _LABELLED_FIELDS


def _parse_block(block: Block, *, labelled: bool) -> ParsedRows:
    columns = block.columns[1:] if labelled else block.columns
    dense_columns, categorical_columns = columns[:NUM_DENSE], columns[NUM_DENSE:]
    problems = block.problems
    if labelled:
        labels = binary_labels(block.columns[0], block.lines, problems, "label")
    else:
        labels = np.zeros(block.num_rows, np.float32)
    dense = np.empty((block.num_rows, NUM_DENSE), np.float32)
    for f, (name, column) in enumerate(zip(DENSE_NAMES, dense_columns, strict=True)):
        dense[:, f] = _dense(column, name, block.lines, problems)
    codes, keys = [], []
    for name, column in zip(TABLE_NAMES, categorical_columns, strict=True):
        column_codes, column_keys = _categorical(column, name, block.lines, problems)
        codes.append(column_codes)
        keys.append(column_keys)
    return ParsedRows(labels, dense, codes, keys)


def _dense(
    column: pa.ChunkedArray, name: str, lines: np.ndarray, problems: list[Problem]
) -> np.ndarray:
    is_integer = pc.match_substring_regex(column, _INTEGER)
    valid = pc.or_(is_integer, pc.equal(column, "")).to_numpy(zero_copy_only=False)
    problems += bad_value_problem(lines, ~valid, column, f"dense {name} is not an integer")
    counts = pc.cast(pc.if_else(is_integer, column, "0"), pa.int64()).to_numpy()
    return np.log1p(np.maximum(counts, 0)).astype(np.float32)


def _categorical(
    column: pa.ChunkedArray, name: str, lines: np.ndarray, problems: list[Problem]
) -> tuple[np.ndarray, pa.Array]:
    codes, keys = encode_column(column)
    keys = pc.utf8_lower(keys)
    valid = pc.or_(pc.match_substring_regex(keys, _HEX_HASH), pc.equal(keys, ""))
    bad_keys = np.flatnonzero(~valid.to_numpy(zero_copy_only=False))
    if len(bad_keys):
        bad_rows = np.isin(codes, bad_keys)
        problems += bad_value_problem(lines, bad_rows, column, f"{name} is not a hex hash")
    return codes, keys
