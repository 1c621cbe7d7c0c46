"""The ``heraldbench`` command line."""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from typer.core import TyperOption

from heraldbench.platform.comparison import comparison_table
from heraldbench.platform.exceptions import HeraldbenchError, SpecError
from heraldbench.platform.runner import simulate_experiment
from heraldbench.platform.sidebyside import side_by_side_table
from heraldbench.platform.spec import load_spec

app = typer.Typer(
    help="Benchmark embedding-cache schedulers (Herald, HET, FAE, BagPipe, ...).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Piped output keeps a wide table instead of wrapping to 80 columns (unless COLUMNS says).
out = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200)
err = Console(stderr=True)

SpecPath = Annotated[Path, typer.Argument(metavar="SPEC", help="experiment spec (YAML or JSON)")]


def _flag_type(self: TyperOption, ctx: Any) -> str | None:
    """A flag's help shows no value type: typer 0.29 labels every flag ``<bool>``, although a
    flag takes no value (``--json``, not ``--json true``)."""
    return None if self.is_flag else _option_type(self, ctx)


# A display hook of typer's internals (0.29): older and newer typers may lack it, and then keep
# their own labels rather than fail at import.
_option_type = getattr(TyperOption, "display_type_rich", None)
if _option_type is not None:
    TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]


def _version(value: bool) -> None:
    if value:
        try:
            version = metadata.version("heraldbench")
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        out.print(f"heraldbench {version}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    """Benchmark embedding-cache schedulers (Herald, HET, FAE, BagPipe, ...)."""


@contextmanager
def _user_errors():
    """Print heraldbench errors as one clear message and exit 2, without a traceback."""
    try:
        yield
    except HeraldbenchError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None


@app.command()
def validate(spec: SpecPath) -> None:
    """Check a spec and print it with every default filled in."""
    with _user_errors():
        parsed = load_spec(spec)
    out.print_json(json.dumps(parsed.model_dump(mode="json")))


@app.command()
def simulate(
    spec: SpecPath,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    simulate_only: Annotated[
        bool, typer.Option("--simulate-only", help="simulate a mode: train spec")
    ] = False,
    check_invariants: Annotated[
        bool, typer.Option(help="verify the accounting invariants every iteration (slow)")
    ] = False,
    report_dir: Annotated[
        Path | None, typer.Option("--report", help="also write the Table-1 report to this folder")
    ] = None,
) -> None:
    """Count the communication each scheduler of SPEC costs on the spec's trace."""
    with _user_errors():
        parsed = load_spec(spec)
        if parsed.mode == "train" and not simulate_only:
            err.print(
                f"error: {spec} has mode: train; run `heraldbench train {spec}` to train, or "
                "pass --simulate-only to count its communication without training"
            )
            raise typer.Exit(2)
        with _progress(enabled=not as_json) as factory:
            result = simulate_experiment(
                parsed, progress=factory, check_invariants=check_invariants
            )
    document = result.to_json()
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        for printable in comparison_table(result, width=out.width):
            out.print(printable)
        if parsed.placements:
            for printable in side_by_side_table(document["side_by_side"]["rows"], parsed.name,
                                                parsed.baseline, width=out.width):
                out.print(printable)
    if report_dir is not None:
        from heraldbench.platform.report import write_report

        written = write_report(document, report_dir)
        (err if as_json else out).print(f"report: {', '.join(str(p) for p in written)}")


@app.command()
def train(
    spec: SpecPath,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    scheduler_address: Annotated[
        str | None,
        typer.Option(help="backend distributed: one rank per worker of this Dask cluster"),
    ] = None,
    report_dir: Annotated[
        Path | None, typer.Option("--report", help="also write the report to this folder")
    ] = None,
) -> None:
    """Train the spec's DLRM under each scheduler: traffic moved, held-out AUC, throughput.

    With ``train: {backend: distributed}`` the ranks are processes started here, one per worker
    of the Dask cluster at --scheduler-address, or (under torchrun) this process's rank.
    """
    from heraldbench.platform.distributed import torchrun_rank
    from heraldbench.platform.distributed.worker import leave_finished
    from heraldbench.platform.training import train_experiment, training_table  # imports torch

    with _user_errors():
        parsed = load_spec(spec)
        distributed = parsed.train is not None and parsed.train.backend == "distributed"
        if scheduler_address is not None and not distributed:
            raise SpecError(f"--scheduler-address needs train.backend: distributed in {spec}")
        ranked = torchrun_rank() if distributed else None
        if ranked is not None and ranked[0] != 0:  # torchrun: rank 0 reports
            _train_other_rank(parsed)
            leave_finished(0)
        with _progress(enabled=not as_json) as factory:
            result = train_experiment(parsed, progress=factory,
                                      scheduler_address=scheduler_address)  # fmt: skip
    document = result.to_json()
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        out.print(training_table(result))
        if result.placements_trained:
            from heraldbench.platform.placement_training import placements_table

            out.print(placements_table(result.placements_trained, parsed.name))
    if report_dir is not None:
        from heraldbench.platform.report import write_report

        written = write_report(document, report_dir)
        (err if as_json else out).print(f"report: {', '.join(str(p) for p in written)}")
    if ranked is not None:
        leave_finished(0)


def _train_other_rank(parsed) -> None:
    """A torchrun rank other than 0: train its share of every scheduler, print nothing."""
    from heraldbench.platform.distributed import train_distributed
    from heraldbench.platform.spec import scheduler_specs

    train_distributed(parsed, list(range(len(scheduler_specs(parsed)))))


@app.command()
def report(
    result: Annotated[
        Path,
        typer.Argument(
            metavar="RESULT",
            help="results file: `heraldbench simulate --json`, or results.json of `heraldbench "
            "run --out` and `heraldbench quickstart`",
        ),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="folder for the report")] = Path("report"),
    profile: Annotated[str, typer.Option(help="hardware profile of the modelled time")] = "tcp-100g",
) -> None:
    """Write Herald's Table 1, the full comparison and their charts for RESULT."""
    from heraldbench.platform.report_files import report_command

    with _user_errors():
        for path in report_command(result, out_dir, profile):
            out.print(str(path))


@app.command()
def schedulers() -> None:
    """List the scheduler kinds and their knobs."""
    from heraldbench.platform.schedulers import plugin_errors, registered

    table = Table("kind", "knobs (default)", "what it is")
    for kind, cls in sorted(registered().items()):
        knobs = ", ".join(
            f"{name}={field.default}"
            for name, field in cls.spec_cls.model_fields.items()
            if name not in NOT_KNOBS
        )
        table.add_row(kind, knobs or "-", _summary(cls.__doc__))
    out.print(table)
    for name, reason in sorted(plugin_errors().items()):
        err.print(f"scheduler plugin {name!r} failed to load: {reason}")


#: Scheduler fields that are no knob of the scheduler: its tag, and the experiment's embedding
#: width (FAE turns a byte budget into rows with it; the experiment sets it).
NOT_KNOBS = ("kind", "embedding_dim")


def _summary(doc: str | None) -> str:
    """A docstring's first line without its citations of the design notes (not shipped)."""
    first = (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""
    return re.sub(r"\s*\((?:see )?research/[^)]*\)", "", first).strip()


@contextmanager
def _progress(enabled: bool):
    """A progress bar per run on a terminal; nothing otherwise."""
    live = enabled and err.is_terminal
    if not live:
        yield None
        return
    bar = Progress(
        TextColumn("{task.description:<24}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
        TimeRemainingColumn(), console=err, transient=True,
    )  # fmt: skip
    with bar:

        def factory(label: str):
            task = bar.add_task(label, total=None)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return update

        yield factory


def main() -> None:
    app()


from heraldbench.platform import (
    calibrate_cli,  # noqa: F401  (registers `calibrate`)
    conformance_cli,  # noqa: F401  (registers `conformance`)
    place_cli,  # noqa: F401  (registers `place`)
    profile_cli,  # noqa: F401  (registers `profile-cluster`)
    reproduce_cli,  # noqa: F401  (registers `reproduce`)
)
