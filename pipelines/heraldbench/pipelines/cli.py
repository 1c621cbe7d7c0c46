"""The ``heraldbench`` command line: the platform's commands plus ``run``, ``preprocess``,
``quickstart`` and ``tune``, which run on Dask and log to MLflow.

The platform's typer app is extended here (the platform never imports the pipelines).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.progress import Progress

from heraldbench.pipelines.cluster import ClusterOptions, dask_client, visible_gpus
from heraldbench.pipelines.console import print_submission, progress_bar, run_counter, warm_up_here
from heraldbench.platform.cli import _user_errors, app, err, out
from heraldbench.platform.documents import read_document
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.units import parse_bytes

__all__ = ["app", "main"]

# MLflow and alembic log INFO lines (store creation, migrations) to the terminal; the commands
# print what matters themselves. MLflow sets its logger's level from MLFLOW_LOGGING_LEVEL when it
# is imported (later, and in the LocalCluster's worker processes, which inherit the variable).
os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
logging.getLogger("alembic").setLevel(logging.WARNING)

Address = Annotated[
    str | None,
    typer.Option(
        "--scheduler-address",
        help="Dask scheduler (default: $DASK_SCHEDULER_ADDRESS, "
        "else a LocalCluster for this command)",
    ),
]
Workers = Annotated[int, typer.Option(help="LocalCluster worker processes")]
MemoryLimit = Annotated[str, typer.Option(help="LocalCluster memory per worker ('auto', '2GiB')")]


def _cluster(
    address: str | None, workers: int, memory_limit: str = "auto", train: bool = False
) -> ClusterOptions:
    """A LocalCluster's workers offer one ``GPU`` each when training on a machine with one."""
    gpus = 1 if train and visible_gpus() else 0
    return ClusterOptions(
        address=address, workers=workers, memory_limit=memory_limit, gpus_per_worker=gpus
    )


def _read_document(path: Path) -> dict[str, Any]:
    """A (grid) spec file as a mapping; lists are allowed where the schema wants one value."""
    document = read_document(path)
    if not isinstance(document, dict):
        raise SpecError(f"{path}: a spec must be a mapping of fields")
    return document


@app.command()
def run(
    spec: Annotated[
        Path,
        typer.Argument(metavar="SPEC", help="experiment spec; lists of knob values make a grid"),
    ],
    scheduler_address: Address = None,
    workers: Workers = 2,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="also write the report here")
    ] = None,
    no_mlflow: Annotated[bool, typer.Option("--no-mlflow", help="do not log to MLflow")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print results.json")] = False,
) -> None:
    """Run every (point, seed, scheduler) of SPEC as a Dask task, log to MLflow, compare."""
    from heraldbench.pipelines.admission import Admission, admit_grid
    from heraldbench.pipelines.experiment import run_experiment
    from heraldbench.pipelines.tracking import tracking_uri, ui_hint

    with _user_errors():
        document = _read_document(spec)
        grid = admit_grid(document, Admission())  # fails before any cluster starts
        uri = None if no_mlflow else tracking_uri()
        tasks = len(grid.runs) * (2 if any(r.spec.mode == "train" for r in grid.runs) else 1)
        options = _cluster(scheduler_address, workers, train=tasks > len(grid.runs))
        warm_up_here(err, [r.spec for r in grid.runs], options)
        with dask_client(options) as client, progress_bar(err, "runs") as bar:
            submission = run_experiment(
                document,
                client=client,
                track=uri is not None,
                uri=uri,
                on_done=run_counter(bar, tasks),
                report_dir=out_dir,
            )
    if as_json:
        sys.stdout.write(json.dumps(submission.to_json(), indent=1, default=str) + "\n")
    else:
        print_submission(out, err, submission, ui_hint(uri) if uri else None)
        if out_dir is not None:
            out.print(f"report: {out_dir}")
    if submission.failed:
        raise typer.Exit(1)


@app.command()
def preprocess(
    kind: Annotated[
        str, typer.Argument(metavar="KIND", help="raw format: criteo-tsv, avazu-csv or movielens")
    ],
    inputs: Annotated[
        list[Path], typer.Argument(metavar="FILE", help="raw files, read one after the other")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="folder of the prepared dataset")],
    frequency_threshold: Annotated[int, typer.Option(help="rarer values share one row")] = 0,
    max_samples: Annotated[int | None, typer.Option(help="keep the first N samples")] = None,
    on_malformed: Annotated[str, typer.Option(help="error or skip")] = "error",
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="format knob KEY=VALUE (labelled=true, add_weekday=false, sort_by_time=true, "
            "positive_threshold=3.5)",
        ),
    ] = None,
    part_size: Annotated[str, typer.Option(help="uncompressed bytes per part")] = "32MiB",
    scheduler_address: Address = None,
    workers: Workers = 2,
    memory_limit: MemoryLimit = "auto",
    keep_work: Annotated[bool, typer.Option(help="keep intermediate files")] = False,
) -> None:
    """Prepare raw files as columnar shards (ids, labels, dense, vocabularies, popularity)."""
    from heraldbench.pipelines.preprocess import preprocess as run_preprocess

    with _user_errors():
        source = _raw_spec(kind, inputs[0], frequency_threshold, max_samples, on_malformed, option)
        part_bytes = parse_bytes(part_size)
        options = _cluster(scheduler_address, workers, memory_limit)
        with dask_client(options) as client, progress_bar(err, "preprocess") as bar:
            result = run_preprocess(
                source,
                out_dir,
                client=client,
                inputs=inputs,
                part_bytes=part_bytes,
                keep_work=keep_work,
                progress=_stage_progress(bar),
            )
    state = "up to date, nothing to do" if result.up_to_date else f"{result.seconds:.1f} s"
    out.print(
        f"{result.out}: {result.samples:,} samples, {len(result.tables)} tables, "
        f"{sum(result.tables.values()):,} rows, {result.shards} shards ({state})"
    )
    for stage, tally in result.stages.items():
        out.print(f"  {stage:<6} {tally['run']} tasks run, {tally['reused']} reused")
    out.print("use it in a spec as:\n  dataset: " + json.dumps(result.dataset))


def _raw_spec(kind, path, threshold, max_samples, on_malformed, options):
    from pydantic import TypeAdapter, ValidationError

    from heraldbench.platform.spec import DatasetSpec, format_validation_error

    if kind in ("prepared", "synthetic", "synthetic-criteo"):
        raise SpecError(f"{kind!r} is not a raw format; give criteo-tsv, avazu-csv or movielens")
    knobs: dict[str, Any] = {}
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError(f"--set {item!r}: expected KEY=VALUE")
        knobs[key.strip()] = yaml.safe_load(value)
    document = {
        "kind": kind,
        "path": str(path),
        "frequency_threshold": threshold,
        "max_samples": max_samples,
        "on_malformed": on_malformed,
        **knobs,
    }
    try:
        return TypeAdapter(DatasetSpec).validate_python(document)
    except ValidationError as exc:
        raise SpecError("invalid dataset options:\n" + format_validation_error(exc)) from None


def _stage_progress(bar: Progress | None):
    if bar is None:
        return None

    def start(stage: str, total: int):
        task = bar.add_task(stage, total=total)
        return lambda: bar.update(task, advance=1)

    return start


@app.command()
def quickstart(
    samples: Annotated[
        int | None, typer.Option(help="trace samples (default sized for ~2 min)")
    ] = None,
    scheduler_address: Address = None,
    workers: Workers = 2,
) -> None:
    """Reproduce the Herald comparison on the criteo-kaggle workload, logged to MLflow, with a report."""
    from heraldbench.pipelines.quickstart import run_quickstart

    with _user_errors():
        run_quickstart(
            samples=samples, cluster=_cluster(scheduler_address, workers), out=out, err=err
        )


@app.command()
def tune(
    spec: Annotated[
        Path, typer.Argument(metavar="SPEC", help="experiment spec with a tuning section")
    ],
    trials: Annotated[
        int | None, typer.Option(min=1, help="trials to add (default: tuning.trials)")
    ] = None,
    study: Annotated[
        str | None, typer.Option(help="study name (default: tuning.study, else the spec's name)")
    ] = None,
    storage: Annotated[
        str | None,
        typer.Option(
            help="Optuna RDB URL (default: $HERALDBENCH_OPTUNA_STORAGE, else optuna.db in "
            "$HERALDBENCH_HOME)"
        ),
    ] = None,
    scheduler_address: Address = None,
    workers: Workers = 2,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="tables and plots (default: $HERALDBENCH_HOME/studies/<study>)"),
    ] = None,
    no_mlflow: Annotated[bool, typer.Option("--no-mlflow", help="do not log to MLflow")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the study as JSON")] = False,
) -> None:
    """Run (or resume: same study name) an Optuna study of SPEC's tuning section on Dask."""
    from heraldbench.pipelines.tracking import tracking_uri, ui_hint
    from heraldbench.pipelines.tune import tune_study
    from heraldbench.pipelines.tune.console import print_study, trial_reporter
    from heraldbench.pipelines.tune.measure import metric_key
    from heraldbench.pipelines.tune.space import tuning_spec

    with _user_errors():
        document = _read_document(spec)
        tuned = tuning_spec(document)  # fails before any cluster starts
        tuning = tuned.tuning
        total = trials or tuning.trials
        objectives = [metric_key(o) for o in tuning.objectives]
        uri = None if no_mlflow else tracking_uri()
        options = _cluster(scheduler_address, workers, train=document.get("mode") == "train")
        warm_up_here(err, [tuned], options)
        with dask_client(options) as client, progress_bar(err, "trials") as bar:
            outcome = tune_study(
                document, client=client, storage=storage, study_name=study, trials=trials,
                track=uri is not None, uri=uri, out_dir=out_dir,
                on_trial=trial_reporter(err, bar, total, objectives),
            )  # fmt: skip
    if as_json:
        sys.stdout.write(json.dumps(outcome.summary(), indent=1, default=str) + "\n")
    else:
        print_study(out, outcome, ui_hint(uri) if uri else None)
    if outcome.added and all(o.state == "FAIL" for o in outcome.added):
        raise typer.Exit(1)


def main() -> None:
    app()
