"""What the pipeline commands print: a progress bar over runs and the comparison tables."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from heraldbench.pipelines.cluster import ClusterOptions, is_local
from heraldbench.pipelines.experiment import Submission
from heraldbench.pipelines.grid import comparison_baseline
from heraldbench.pipelines.tasks import RunRecord
from heraldbench.platform.sidebyside import side_by_side_table

__all__ = ["print_submission", "progress_bar", "run_counter", "warm_up_here"]


@contextmanager
def progress_bar(console: Console, label: str) -> Iterator[Progress | None]:
    """A progress bar on a terminal; nothing when the output is piped."""
    if not console.is_terminal:
        yield None
        return
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=True,
    )
    with bar:
        yield bar


def warm_up_here(err: Console, specs: Iterable[Any], options: ClusterOptions) -> None:
    """Compile the kernels ``specs`` need in this process, before a LocalCluster's workers
    need them (they then load numba's cache), showing the steps on ``err``; a remote cluster's
    workers compile on their own machines."""
    if not is_local(options):
        return
    from heraldbench.platform.warmup import warm_up, warm_up_label

    with progress_bar(err, "compiling the simulator's kernels, once per machine") as bar:
        task = bar.add_task("", total=None) if bar is not None else None

        def show(done: int, total: int, step: str) -> None:
            if bar is not None:
                bar.update(task, completed=done, total=total, description=step)
            elif done < total:
                err.print(f"{warm_up_label(done, total)} ({step})", highlight=False)

        warm_up(specs, show, processes=2)  # a LocalCluster's two worker processes' cores


def run_counter(bar: Progress | None, total: int):
    """An ``on_done`` callback advancing ``bar`` by one run, showing the run that ended."""
    task = bar.add_task("", total=total) if bar is not None else None

    def done(record: RunRecord) -> None:
        if bar is not None:
            bar.update(task, advance=1, description=f"{record.status}: {record.task.run_name}")

    return done


def print_submission(out: Console, err: Console, submission: Submission, hint: str | None) -> None:
    """One table per (point, seed) (and one of the trained runs), failures, MLflow links."""
    for (point, seed), records in submission.groups().items():
        out.print(_table(submission, records, point, seed))
    baseline = comparison_baseline(submission.grid.document)
    for (point, seed), rows in submission.comparisons().items():
        for printable in side_by_side_table(rows, _title(submission, point, seed), baseline,
                                            width=out.width):
            out.print(printable)
    trained = [r for r in submission.records if r.task.action == "train"]
    if trained:
        out.print(_trained_table(submission, trained))
    for record in submission.failed:
        err.print(f"[red]failed[/] {record.task.run_name}: {record.error}", highlight=False)
    if submission.target is not None and submission.url() is not None:
        out.print(f"MLflow run of this submission: {submission.url()}", soft_wrap=True)
    elif submission.target is not None:
        out.print(f"logged to MLflow ({submission.target.uri}); open its UI with: {hint}",
                  soft_wrap=True, highlight=False)  # fmt: skip


def _title(submission: Submission, point: int | None, seed: int | None, what: str = "") -> str:
    grid = submission.grid
    where = [
        grid.points[point].label if point is not None and len(grid.points) > 1 else "",
        f"seed {seed}" if seed is not None and len(grid.seeds) > 1 else "",
        what,
    ]
    return " · ".join([grid.name, *[w for w in where if w]])


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else f"{value:{spec}}"


def _table(submission: Submission, records: list[RunRecord], point: int, seed: int) -> Table:
    """Traffic relative to naive (= 1) and absolute, per scheduler."""
    table = Table(title=_title(submission, point, seed))
    for column in ("scheduler", "pull", "push", "overall", "pulls", "pushes", "s", "MLflow run"):
        table.add_column(
            column, justify="left" if column in ("scheduler", "MLflow run") else "right"
        )
    for record in records:
        table.add_row(
            record.task.label,
            *_traffic(record),
            f"{record.seconds:.1f}",
            submission.url(record) or "-",
        )
    return table


def _traffic(record: RunRecord) -> list[str]:
    if record.status == "failed":
        return ["failed", "", "", "", ""]
    relative, totals = record.result.get("relative") or {}, record.result["totals"]
    return [
        *(_fmt(relative.get(m)) for m in ("pull", "push", "overall")),
        f"{totals['pull']:,.0f}",
        f"{totals['push']:,.0f}",
    ]


def _trained_table(submission: Submission, records: list[RunRecord]) -> Table:
    """Held-out quality of the trained runs, and its difference from naive's."""
    table = Table(title=_title(submission, None, None, "trained"))
    for column in (
        "scheduler",
        "point",
        "seed",
        "AUC",
        "Δ AUC",
        "log loss",
        "Δ log loss",
        "overall",
        "s",
        "MLflow run",
    ):
        table.add_column(
            column, justify="left" if column in ("scheduler", "point", "MLflow run") else "right"
        )
    for record in records:
        result: dict[str, Any] = record.result or {}
        metrics, deltas = result.get("metrics") or {}, result.get("metrics_vs_naive") or {}
        overall = (result.get("relative") or {}).get("overall")
        table.add_row(
            record.task.label,
            record.task.point,
            str(record.task.seed),
            _fmt(metrics.get("auc"), ".4f"),
            _fmt(deltas.get("auc"), "+.4f"),
            _fmt(metrics.get("logloss"), ".4f"),
            _fmt(deltas.get("logloss"), "+.4f"),
            "failed" if record.status == "failed" else _fmt(overall),
            f"{record.seconds:.1f}",
            submission.url(record) or "-",
        )
    return table
