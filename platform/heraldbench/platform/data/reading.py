"""How a raw file is read: the plan each format module gives, shared by every reader of it.

A format module (``criteo``, ``avazu``, ``movielens``) describes its file as a
:class:`ReadingPlan`: how to cut it into blocks of lines and how to parse a block. The in-memory
reader (:meth:`ReadingPlan.read`) and the chunked preprocessing of ``heraldbench.pipelines``
both follow the plan, so they parse, check and convert every line identically. This module is
the data package's public face for the preprocessing.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heraldbench.platform.data._vocab import (
    MISSING_ROW,
    RARE_ROW,
    REPORTED_LINES,
    Block,
    ParsedRows,
    Problem,
    RawFileSpec,
    TraceAssembler,
    iter_blocks,
)

if TYPE_CHECKING:
    from heraldbench.platform.data._trace import InMemoryTrace

#: What a reader outside this package (the chunked preprocessing) uses of the vocabularies:
#: the block it parses, the rows and problems a parse gives, the rows of missing and rare
#: values, how many bad lines an error names, and the spec of a raw file.
__all__ = [
    "MISSING_ROW",
    "RARE_ROW",
    "REPORTED_LINES",
    "Block",
    "ParsedRows",
    "Problem",
    "RawFileSpec",
    "ReadingPlan",
]


@dataclass(frozen=True)
class ReadingPlan:
    """What a reader needs to know about one raw file.

    Attributes:
        table_names: one name per categorical table, in field order.
        dense_names: one name per dense feature, in column order (may be empty).
        parse: checks and converts one block (appending bad rows to ``block.problems``).
        delimiter: single-character field delimiter after ``rewrite``.
        num_fields: fields per well-formed line.
        header_lines: lines to skip at the start of the file.
        rewrite: turns raw bytes into ``delimiter``-separated text (MovieLens ``::``).
        separator_name: the file's own separator, for messages.
        sort_by_key: order the trace by ``ParsedRows.sort_key`` (stable).
        info: facts about the file for ``describe()``.
    """

    table_names: tuple[str, ...]
    dense_names: tuple[str, ...]
    parse: Callable[[Block], ParsedRows]
    delimiter: str
    num_fields: int
    header_lines: int = 0
    rewrite: Callable[[bytes], bytes] | None = None
    separator_name: str | None = None
    sort_by_key: bool = False
    info: dict[str, Any] = field(default_factory=dict)

    def blocks(
        self,
        path: Path,
        *,
        start: int = 0,
        stop: int | None = None,
        block_bytes: int | None = None,
    ) -> Generator[Block, None, None]:
        """Blocks of the file, or of its uncompressed byte range [start, stop).

        A range that starts past 0 starts after the header, so no header line is skipped in it.
        """
        return iter_blocks(
            path,
            delimiter=self.delimiter,
            num_fields=self.num_fields,
            skip_lines=self.header_lines if start == 0 else 0,
            rewrite=self.rewrite,
            separator_name=self.separator_name,
            block_bytes=block_bytes,
            start=start,
            stop=stop,
        )

    def read(self, spec: RawFileSpec) -> InMemoryTrace:
        """Read ``spec.path`` whole into an in-memory trace."""
        return self.assembled(spec).finish(spec.frequency_threshold, dict(self.info))

    def assembled(self, spec: RawFileSpec) -> TraceAssembler:
        """``spec.path`` read whole, not yet finished: for a reader that needs the tables'
        raw values after :meth:`TraceAssembler.finish` (:meth:`TraceAssembler.row_keys`)."""
        assembler = TraceAssembler(
            spec.path,
            list(self.table_names),
            on_malformed=spec.on_malformed,
            max_samples=spec.max_samples,
            sort_by_key=self.sort_by_key,
        )
        assembler.consume(self.blocks(spec.path), self.parse)
        return assembler
