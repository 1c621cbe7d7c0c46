"""Shared machinery of the raw-format readers: text blocks, malformed lines, vocabularies.

A reader turns a delimited text file into an :class:`InMemoryTrace` in one pass:

1. :func:`iter_blocks` cuts the file (plain or gzip) into blocks of whole lines, drops the lines
   with a wrong field count (as :class:`Problem` s) and parses the rest into string columns;
2. the format module checks and converts each block's columns, reporting bad rows as problems;
3. :class:`TraceAssembler` settles the problems (raise, or skip and count), applies
   ``max_samples`` and feeds every categorical column to a :class:`TableVocab`;
4. :meth:`TraceAssembler.finish` maps raw values to contiguous per-table local ids.

Row layout of every table (docs/semantics.md): row 0 is the missing (empty) value, row 1 the shared
"rare" row when a frequency threshold above 1 is set, then one row per remaining raw value in
order of first appearance in the trace.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from pydantic import Field

from heraldbench.platform.data._trace import DatasetSpecBase, InMemoryTrace, TableLayout
from heraldbench.platform.exceptions import DataError, TraceFormatError
from heraldbench.platform.paths import NamesFile

__all__ = [
    "MISSING_ROW",
    "RARE_ROW",
    "Block",
    "ParsedRows",
    "Problem",
    "RawFileSpec",
    "TableVocab",
    "TraceAssembler",
    "bad_value_problem",
    "binary_labels",
    "encode_column",
    "first_line",
    "iter_blocks",
]

MISSING_ROW = 0
RARE_ROW = 1
#: How many malformed line numbers a skipping reader keeps in ``info["malformed_lines"]``.
REPORTED_LINES = 10
_MISSING_CODE = -1
_BLOCK_BYTES = 32 << 20
_GZIP_MAGIC = b"\x1f\x8b"


class RawFileSpec(DatasetSpecBase):
    """Knobs shared by the readers of raw public files.

    Attributes:
        path: the file; gzip-compressed files are recognised by content.
        frequency_threshold: raw values seen fewer times than this (over the samples kept) share
            one "rare" row per table; 0 and 1 keep every value.
        max_samples: keep at most this many well-formed samples (the first ones); None keeps all.
        on_malformed: "error" raises :class:`TraceFormatError` at the first malformed line;
            "skip" drops malformed lines and counts them in ``info["malformed_skipped"]``.
    """

    path: Annotated[Path, NamesFile()]
    frequency_threshold: int = Field(0, ge=0, le=2**63 - 1)
    max_samples: int | None = Field(None, ge=1, le=2**63 - 1, description="null: all")
    on_malformed: Literal["error", "skip"] = "error"

    def _base_info(self) -> dict[str, Any]:
        return {"kind": getattr(self, "kind", "?"), "path": str(self.path)}


# --- text blocks -----------------------------------------------------------------------------


def open_binary(path: Path) -> BinaryIO:
    if not path.is_file():
        raise DataError(f"dataset file {str(path)!r} does not exist or is not a file")
    with path.open("rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    return gzip.open(path, "rb") if compressed else path.open("rb")  # type: ignore[return-value]


def first_line(path: Path) -> str:
    """The first line of a (possibly gzip) text file, without its line ending."""
    with open_binary(path) as stream:
        raw = stream.readline()
    if not raw.strip():
        raise DataError(f"dataset file {str(path)!r} is empty (or starts with a blank line)")
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(path, 1, f"not UTF-8 text ({exc.reason})") from None


@dataclass(frozen=True)
class Problem:
    """Malformed lines found by one check, with a way to explain each."""

    lines: np.ndarray  # 1-based file line numbers
    reason_at: Callable[[int], str]  # reason for lines[i]


@dataclass(frozen=True)
class Block:
    """Consecutive lines of a file: the well-formed ones parsed into string columns."""

    columns: list[pa.ChunkedArray]
    lines: np.ndarray  # file line number of each parsed row
    problems: list[Problem]  # malformed lines found so far; format parsers append theirs

    @property
    def num_rows(self) -> int:
        return len(self.lines)


def iter_blocks(
    path: Path,
    *,
    delimiter: str,
    num_fields: int,
    skip_lines: int = 0,
    rewrite: Callable[[bytes], bytes] | None = None,
    separator_name: str | None = None,
    block_bytes: int | None = None,
    start: int = 0,
    stop: int | None = None,
) -> Generator[Block, None, None]:
    """Yield the file's lines after ``skip_lines`` header lines, block by block.

    ``rewrite`` may turn each raw block into single-character-delimited text (for example
    MovieLens' ``::``); it must not add or remove line breaks. ``separator_name`` names the
    file's own separator in messages (default: the delimiter's name).

    ``start`` and ``stop`` read only the bytes [start, stop) of an uncompressed file; both must
    sit at line starts. Line numbers then count from the range's first line (as line
    ``skip_lines + 1``), so a caller reading a range adds the lines before it.
    """
    separator_name = separator_name or {"\t": "tab", ",": "comma"}.get(delimiter, repr(delimiter))
    block_bytes = block_bytes or _BLOCK_BYTES
    with open_binary(path) as stream, ThreadPoolExecutor(1) as reader:
        if start:
            stream.seek(start)
        for _ in range(skip_lines):
            stream.readline()
        line_no = skip_lines + 1

        def read_next() -> Block | None:
            nonlocal line_no
            room = block_bytes if stop is None else min(block_bytes, stop - stream.tell())
            raw = _read_whole_lines(stream, room) if room > 0 else b""
            if not raw:
                return None
            raw = raw.replace(b"\r\n", b"\n") if b"\r" in raw else raw
            raw = rewrite(raw) if rewrite else raw
            block = _parse_block(path, raw, delimiter, separator_name, num_fields, line_no)
            line_no += raw.count(b"\n")
            return block

        # The next block is read and parsed while the caller works on this one.
        pending = reader.submit(read_next)
        while (block := pending.result()) is not None:
            pending = reader.submit(read_next)
            yield block


def _read_whole_lines(stream: BinaryIO, block_bytes: int) -> bytes:
    raw = stream.read(block_bytes)
    if raw and not raw.endswith(b"\n"):
        raw += stream.readline()
        raw = raw if raw.endswith(b"\n") else raw + b"\n"  # last line without a line break
    return raw


def _parse_block(
    path: Path, raw: bytes, delimiter: str, separator_name: str, num_fields: int, line_no: int
) -> Block:
    # Fast path: the parser checks field counts itself, but reads an empty line as a row of
    # empty fields and a lone carriage return as a line break; those take the slow path.
    if b"\r" not in raw and b"\n\n" not in raw and not raw.startswith(b"\n"):
        columns = _parse_columns(path, raw, delimiter, num_fields, strict=True)
        if columns is not None and len(columns[0]) == raw.count(b"\n"):
            return Block(columns, line_no + np.arange(len(columns[0]), dtype=np.int64), [])
    data = np.frombuffer(raw, np.uint8)
    marks = np.flatnonzero((data == ord(delimiter)) | (data == ord("\n")))
    breaks = np.flatnonzero(data[marks] == ord("\n"))
    ends = marks[breaks] + 1  # one past each line's line break
    fields = np.diff(breaks, prepend=-1)  # delimiters on a line, plus one
    lines = line_no + np.arange(len(fields), dtype=np.int64)
    good = fields == num_fields
    problems = []
    if not good.all():
        bad_lines, bad_fields = lines[~good], fields[~good]
        expected = f"expected {num_fields} {separator_name}-separated fields, found"
        problems.append(Problem(bad_lines, lambda i: f"{expected} {bad_fields[i]}"))
    if b"\r" in raw:  # the parser would take a lone carriage return for a line break
        has_cr = np.zeros(len(lines), bool)
        has_cr[np.searchsorted(ends, np.flatnonzero(data == ord("\r")), side="right")] = True
        problems.append(Problem(lines[has_cr & good], lambda i: "carriage return inside the line"))
        good &= ~has_cr
    if not good.all():
        raw = data[np.repeat(good, np.diff(ends, prepend=0))].tobytes()
    columns = _parse_columns(path, raw, delimiter, num_fields, strict=False)
    assert columns is not None
    return Block(columns, lines[good], problems)


def _parse_columns(
    path: Path, raw: bytes, delimiter: str, num_fields: int, *, strict: bool
) -> list[pa.ChunkedArray] | None:
    """String columns of ``raw``; None when ``strict`` and some line is malformed."""
    names = [f"f{i}" for i in range(num_fields)]
    if not raw:
        return [pa.chunked_array([], pa.string()) for _ in names]
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in names}, strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as exc:
        if strict:
            return None
        # Field counts were checked, so this is, e.g., invalid UTF-8; the line is not known here.
        raise DataError(f"{path}: cannot parse as delimited text: {exc}") from None
    return [table.column(name) for name in names]


# --- checks and categorical columns ------------------------------------------------------------


def bad_value_problem(
    lines: np.ndarray, bad_rows: np.ndarray, values: pa.ChunkedArray, what: str
) -> list[Problem]:
    """A problem for the rows where ``bad_rows`` is true ("<what>: '<value>'"), if any."""
    rows = np.flatnonzero(bad_rows)
    if not len(rows):
        return []
    return [Problem(lines[rows], lambda i: f"{what}: {values[int(rows[i])].as_py()!r}")]


def binary_labels(column: pa.ChunkedArray, lines: np.ndarray, problems: list[Problem],
                  what: str) -> np.ndarray:  # fmt: skip
    """A click column as float32 0/1 labels; a value other than "0" or "1" is a problem
    ("<what> is not 0 or 1") and reads as 0."""
    valid = pc.is_in(column, value_set=pa.array(["0", "1"])).to_numpy(zero_copy_only=False)
    problems += bad_value_problem(lines, ~valid, column, f"{what} is not 0 or 1")
    return pc.equal(column, "1").to_numpy(zero_copy_only=False).astype(np.float32)


def encode_column(column: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Codes into the column's distinct values (first-seen order); an empty value codes -1."""
    chunks = pc.dictionary_encode(column).chunks
    if not chunks:
        return np.zeros(0, np.int32), pa.array([], pa.string())
    # The encoder's memo spans the chunks: the last chunk's dictionary holds every value.
    dictionary = chunks[-1].dictionary
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks])
    codes = codes.astype(np.int32, copy=False)
    empty = pc.index(dictionary, "").as_py()
    if empty >= 0:
        codes = np.where(codes == empty, np.int32(_MISSING_CODE), codes)
    return codes, dictionary


@dataclass
class ParsedRows:
    """One block's rows after checks and conversion, before malformed rows are dropped.

    Attributes:
        labels: (n,) float32.
        dense: (n, D) float32.
        codes: per table, (n,) int32 codes into ``keys[f]``; -1 is the missing value.
        keys: per table, the raw values the codes refer to (duplicates allowed).
        sort_key: optional (n,) int64 key to order the trace by (timestamps).
    """

    labels: np.ndarray
    dense: np.ndarray
    codes: list[np.ndarray]
    keys: list[pa.Array]
    sort_key: np.ndarray | None = None

    def take(self, rows: np.ndarray) -> ParsedRows:
        key = None if self.sort_key is None else self.sort_key[rows]
        return ParsedRows(
            self.labels[rows], self.dense[rows], [c[rows] for c in self.codes], self.keys, key
        )


class TableVocab:
    """The vocabulary of one table, built block by block.

    Each block's codes are stored shifted past the keys of earlier blocks; :meth:`finish` encodes
    all keys together, so equal raw values of different blocks get the same row.
    """

    def __init__(self) -> None:
        self._codes: list[np.ndarray] = []
        self._keys: list[pa.Array] = []
        self._num_keys = 0

    def add(self, codes: np.ndarray, keys: pa.Array) -> None:
        if self._num_keys + len(keys) >= np.iinfo(np.int32).max:
            raise DataError("a table has more distinct values than int32 codes can hold")
        shifted = np.where(codes >= 0, codes + np.int32(self._num_keys), np.int32(_MISSING_CODE))
        self._codes.append(shifted.astype(np.int32, copy=False))
        self._keys.append(keys)
        self._num_keys += len(keys)

    def finish(
        self, frequency_threshold: int, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, int, int]:
        """Local ids of the (selected) rows, the table size and the number of rare values."""
        codes = np.concatenate(self._codes) if self._codes else np.zeros(0, np.int32)
        codes = codes if rows is None else codes[rows]
        keys = pa.concat_arrays(self._keys) if self._keys else pa.array([], pa.string())
        encoded = pc.dictionary_encode(keys)
        num_values = len(encoded.dictionary)
        # One extra value, last, stands for "missing": code -1 indexes it.
        value_of_code = np.append(encoded.indices.to_numpy(zero_copy_only=False), num_values)
        values = value_of_code[codes]
        counts = np.bincount(values, minlength=num_values + 1)[:num_values]
        frequent = counts >= max(frequency_threshold, 1)
        first_value_row = RARE_ROW + 1 if frequency_threshold > 1 else RARE_ROW
        row_of_value = np.where(frequent, first_value_row + np.cumsum(frequent) - 1, RARE_ROW)
        local = np.append(row_of_value, MISSING_ROW)[values]
        rare_values = int(((counts > 0) & ~frequent).sum())
        size = first_value_row + int(frequent.sum())
        self._rows = (encoded.dictionary, row_of_value, frequent, size)  # for row_keys
        return local, size, rare_values

    def row_keys(self) -> np.ndarray:
        """After :meth:`finish`: each row's raw value (object array), None for the rows of the
        missing and the rare values."""
        dictionary, row_of_value, frequent, size = self._rows
        keys = np.full(size, None, object)
        kept = np.flatnonzero(frequent)
        keys[row_of_value[kept]] = dictionary.take(pa.array(kept)).to_pylist()
        return keys


# --- assembling the trace ----------------------------------------------------------------------


class TraceAssembler:
    """Collects checked blocks into an :class:`InMemoryTrace`.

    Args:
        path: the file, for error messages.
        table_names: one name per categorical table, in field order.
        on_malformed: "error" or "skip" (see :class:`RawFileSpec`).
        max_samples: stop after this many well-formed samples; None reads everything.
        sort_by_key: order the trace by ``ParsedRows.sort_key`` (stable) before ``max_samples``
            is applied, so the whole file is read.
    """

    def __init__(
        self,
        path: Path,
        table_names: list[str],
        *,
        on_malformed: Literal["error", "skip"],
        max_samples: int | None,
        sort_by_key: bool = False,
    ) -> None:
        self.path = path
        self.table_names = table_names
        self.on_malformed = on_malformed
        self.max_samples = max_samples
        self.sort_by_key = sort_by_key
        self.vocabs = [TableVocab() for _ in table_names]
        self.kept: list[ParsedRows] = []
        self.num_kept = 0
        self.skipped = 0
        self.skipped_lines: list[int] = []
        self.skipped_reasons: list[str] = []

    @property
    def full(self) -> bool:
        return self._room() == 0

    def _room(self) -> int | None:
        if self.max_samples is None or self.sort_by_key:
            return None
        return self.max_samples - self.num_kept

    def consume(
        self, blocks: Generator[Block, None, None], parse: Callable[[Block], ParsedRows]
    ) -> None:
        """Parse, check and keep blocks until the file or the sample budget runs out."""
        with closing(blocks):  # closes the file at once when the budget runs out
            for block in blocks:
                self.add(block, parse(block))
                if self.full:
                    break

    def add(self, block: Block, parsed: ParsedRows) -> None:
        keep = self._settle(block)
        if not keep.all():
            parsed = parsed.take(np.flatnonzero(keep))
        room = self._room()
        if room is not None and len(parsed.labels) > room:
            parsed = parsed.take(np.arange(room))
        for vocab, codes, keys in zip(self.vocabs, parsed.codes, parsed.keys, strict=True):
            vocab.add(codes, keys)
        self.kept.append(parsed)
        self.num_kept += len(parsed.labels)

    def _settle(self, block: Block) -> np.ndarray:
        """Rows to keep; raises or records the malformed lines read before the budget ran out."""
        if not block.problems:
            return np.ones(block.num_rows, bool)
        bad_lines = np.unique(np.concatenate([p.lines for p in block.problems]))
        keep = ~np.isin(block.lines, bad_lines)
        room = self._room()
        # Lines after the last sample of the budget are never looked at, whatever the block size.
        if room is not None and keep.sum() >= room:
            last_line = block.lines[np.flatnonzero(keep)[room - 1]] if room else 0
            bad_lines = bad_lines[bad_lines < last_line]
        if not len(bad_lines):
            return keep
        if self.on_malformed == "error":
            line = int(bad_lines[0])
            raise TraceFormatError(self.path, line, self._reason(block.problems, line))
        self.skipped += len(bad_lines)
        for line in bad_lines[: REPORTED_LINES - len(self.skipped_lines)]:
            self.skipped_lines.append(int(line))
            self.skipped_reasons.append(self._reason(block.problems, int(line)))
        return keep

    @staticmethod
    def _reason(problems: list[Problem], line: int) -> str:
        for problem in problems:
            hits = np.flatnonzero(problem.lines == line)
            if len(hits):
                return problem.reason_at(int(hits[0]))
        raise AssertionError(f"line {line} is not among the problems")  # pragma: no cover

    def finish(self, frequency_threshold: int, info: dict[str, Any]) -> InMemoryTrace:
        """Map every table to local ids and build the trace; ``info`` is extended with facts."""
        if not self.num_kept:
            skipped = f" ({self.skipped} malformed lines skipped)" if self.skipped else ""
            raise DataError(f"{self.path}: no well-formed samples to read{skipped}")
        rows = self._trace_order()
        num_samples = self.num_kept if rows is None else len(rows)
        local_ids = np.empty((num_samples, len(self.vocabs)), np.int32)
        sizes, rare_values = [], 0
        for f, vocab in enumerate(self.vocabs):
            local_ids[:, f], size, rare = vocab.finish(frequency_threshold, rows)
            sizes.append(size)
            rare_values += rare
        layout = TableLayout(tuple(self.table_names), tuple(sizes))
        ids = local_ids + layout.offsets.astype(np.int32)  # TableLayout bounds the sum by int32
        labels, dense = self._stacked("labels"), self._stacked("dense")
        if rows is not None:
            labels, dense = labels[rows], dense[rows]
        info = {
            **info,
            "samples": len(labels),
            "frequency_threshold": frequency_threshold,
            "rare_rows_mapped": rare_values,
            "missing_row": MISSING_ROW,
            "rare_row": RARE_ROW if frequency_threshold > 1 else None,
            "malformed_skipped": self.skipped,
            "malformed_lines": self.skipped_lines,
            "malformed_reasons": self.skipped_reasons,
        }
        return InMemoryTrace(ids, labels, dense, layout, info)

    def row_keys(self, table: str) -> np.ndarray:
        """After :meth:`finish`: the raw value of each row of ``table`` (see
        :meth:`TableVocab.row_keys`)."""
        return self.vocabs[self.table_names.index(table)].row_keys()

    def _stacked(self, name: str) -> np.ndarray:
        return np.concatenate([getattr(parsed, name) for parsed in self.kept])

    def _trace_order(self) -> np.ndarray | None:
        if not self.sort_by_key:
            return None
        keys = np.concatenate([p.sort_key for p in self.kept if p.sort_key is not None])
        return np.argsort(keys, kind="stable")[: self.max_samples]
