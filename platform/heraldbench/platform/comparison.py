"""The comparison table ``heraldbench simulate`` prints, fitted to the terminal.

Numbers are never cut: each column is as wide as its widest cell, and when the table would not
fit the terminal, the least important columns are left out (named under the table; ``--json``
has every figure) instead of squeezing numbers into ``384,0…``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # the runner's side-by-side table is fitted here too
    from heraldbench.platform.runner import ExperimentResult

__all__ = ["COLUMNS", "comparison_table"]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _rate(run: Any) -> str:
    c = run.counts
    return f"{c.accesses / run.wall_seconds / 1e6:.1f}" if run.wall_seconds else "-"


#: (header, cell of a run), in display order.
COLUMNS: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("scheduler", lambda r: r.label or r.scheduler),
    ("pull", lambda r: _fmt(r.relative["pull"])),
    ("push", lambda r: _fmt(r.relative["push"])),
    ("overall", lambda r: _fmt(r.relative["overall"])),
    ("miss pull", lambda r: f"{r.counts.miss_pull:,}"),
    ("update pull", lambda r: f"{r.counts.update_pull:,}"),
    ("evict push", lambda r: f"{r.counts.evict_push:,}"),
    ("update push", lambda r: f"{r.counts.update_push:,}"),
    ("flush push", lambda r: f"{r.counts.flush_push:,}"),
    ("allreduce", lambda r: f"{r.counts.allreduce:,.0f}"),
    ("hit rate", lambda r: f"{r.counts.hits / r.counts.lookups:.3f}" if r.counts.lookups else "-"),
    ("× bound", lambda r: _fmt(r.bound["gap"]["overall"]) if r.bound else "-"),
    ("M acc/s", _rate),
)
#: Which columns stay when not all fit: the first ones of this list.
PRIORITY = ("scheduler", "overall", "pull", "push", "allreduce", "× bound", "miss pull",
            "update push", "hit rate", "update pull", "evict push", "flush push", "M acc/s")  # fmt: skip


def _width(header: str, cells: list[str]) -> int:
    """A column's width: its widest cell or its header."""
    return max([len(c) for c in cells] + [len(header)])


def fitted_table(title: str, cells: dict[str, list[str]], priority: tuple[str, ...],
                 width: int | None, left: tuple[str, ...]) -> list[Any]:
    """A table of ``cells`` (header: a cell per row, in display order) within ``width``
    characters: the columns of ``priority`` kept first to last while they fit (the first
    always), and a note naming those left out, if any."""
    widths = {header: _width(header, column) for header, column in cells.items()}
    kept, used = set(), 1  # the table's left border
    for header in priority:
        if width is None or used + widths[header] + 3 <= width or header == priority[0]:
            kept.add(header)
            used += widths[header] + 3  # padding on both sides and a border
    table = Table(title=title)
    shown = [header for header in cells if header in kept]
    for header in shown:
        table.add_column(
            header,
            justify="left" if header in left else "right",
            min_width=widths[header],
            no_wrap=header != priority[0],
            overflow="fold",
        )
    for index in range(len(next(iter(cells.values()), []))):
        table.add_row(*(cells[header][index] for header in shown))
    left_out = [header for header in cells if header not in kept]
    if not left_out:
        return [table]
    note = Text(f"not shown at this width: {', '.join(left_out)} (--json has every figure)",
                style="dim")  # fmt: skip
    return [table, note]


def comparison_table(result: ExperimentResult, width: int | None = None) -> list[Any]:
    """The table (relative and absolute traffic per scheduler, naive = 1; "× bound" is overall
    traffic over the lower bound of the scheduler's own partition), and a note naming the
    columns left out to fit ``width`` characters, if any."""
    spec = result.spec
    cells = {header: [cell(run) for run in result.runs] for header, cell in COLUMNS}
    title = (f"{spec.name}: {spec.cluster.workers} workers × {spec.cluster.batch_size}, "
             f"cache {result.cache_rows:,} rows ({spec.cache.policy}), dim {spec.embedding_dim}, "
             f"{spec.consistency}")
    return fitted_table(title, cells, PRIORITY, width, left=("scheduler",))
