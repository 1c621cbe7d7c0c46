"""``heraldbench calibrate``: fit a workload profile to a trace, and check it (docs/workloads.md)."""

from __future__ import annotations

import json
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from heraldbench.platform.cli import _user_errors, app, err, out
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.trace_files import DEFAULT_MAX_SAMPLES, KINDS, dataset_of_file

__all__ = ["calibrate"]



@app.command()
def calibrate(
    path: Annotated[Path, typer.Argument(help="the trace: a raw file, or a prepared folder")],
    kind: Annotated[str, typer.Option("--kind", help=f"its format: {', '.join(KINDS)}")],
    out_path: Annotated[Path, typer.Option("--out", help="where to write the profile (YAML)")],
    options: Annotated[list[str] | None, typer.Option(
        "--option", help="a reader option KEY=VALUE (frequency_threshold=3, labelled=true, ...)"
    )] = None,  # fmt: skip
    max_samples: Annotated[int, typer.Option(
        help="fit on at most this many samples, the first ones", min=1)] = DEFAULT_MAX_SAMPLES,
    name: Annotated[str | None, typer.Option(help="the profile's name (default: the file's)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the refinement and of the check", min=0)] = 0,
    check: Annotated[bool, typer.Option(
        "--check", help="generate the profile at the trace's length and compare every scheduler")
    ] = False,  # fmt: skip
    shapes: Annotated[list[str] | None, typer.Option(
        "--shape", help="a --check shape WORKERS:CACHE_FRACTION (default 4:0.02, 8:0.1, 16:0.2)"
    )] = None,  # fmt: skip
    report_dir: Annotated[Path | None, typer.Option(
        "--report", help="write the --check tables and charts to this folder")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    features: Annotated[str | None, typer.Option(
        "--features", help="JSON of dataset.features (multi-hot, a sequence) for --check: "
        "made on both traces before they are compared")] = None,
) -> None:
    """Fit a workload profile to the trace at PATH and write it to --out."""
    from heraldbench.platform import workload_check as round_trip
    from heraldbench.platform.data.attributes import split_attributes, with_attributes
    from heraldbench.platform.data.workload.fit import fit_profile, read_trace
    from heraldbench.platform.data.workload.schema import save_profile

    with _user_errors():
        dataset = dataset_of_file(kind, path, options, max_samples)
        parsed_shapes = _shapes(shapes) if check or shapes else ()
        made = _features(features)
        trace, attributes = split_attributes(dataset.open())
        with _stages(enabled=not as_json) as stage:
            data = read_trace(trace, max_samples, stage("reading", trace.num_samples))
            stage("fitting", None)
            profile = fit_profile(
                data, name=name or _name(out_path), source=f"{path.name} ({kind})",
                source_kind=kind, command=_command(), seed=seed, attributes=attributes,
            )  # fmt: skip
            written = save_profile(profile, out_path)
            result = None
            if check or report_dir is not None:
                tick = stage("round trip", len(parsed_shapes or round_trip.DEFAULT_SHAPES) * 2)
                real = with_attributes(data_trace(data, trace), attributes)
                result = round_trip.check_round_trip(
                    real, profile, shapes=parsed_shapes or round_trip.DEFAULT_SHAPES,
                    seed=seed, progress=tick, features=made,
                )  # fmt: skip
        report = _write_report(result, profile, report_dir)
    _print(written, profile, result, report, as_json)


def _features(text: str | None):
    """``--features`` read as ``dataset.features``; a bad one is a SpecError naming it."""
    from pydantic import ValidationError

    from heraldbench.platform.data import FeaturesSpec
    from heraldbench.platform.spec import format_validation_error

    if text is None:
        return None
    try:
        return FeaturesSpec.model_validate_json(text)
    except ValidationError as exc:
        raise SpecError(f"--features: {format_validation_error(exc)}") from None


def data_trace(data, trace):
    """The samples the profile was fitted on, as a trace (the round trip's R)."""
    from heraldbench.platform.data import InMemoryTrace, SampleChunk

    chunk = SampleChunk((data.ids + trace.layout.offsets).astype(np.int32), data.labels, data.dense)
    return InMemoryTrace.from_chunk(chunk, trace.layout)


def _shapes(texts: list[str] | None):
    from heraldbench.platform.workload_check import parse_shape

    try:
        return tuple(parse_shape(t) for t in texts or ())
    except ValueError as exc:
        raise SpecError(f"--shape: {exc}") from None


def _name(out_path: Path) -> str:
    stem = "".join(c if c.isalnum() or c in "_.-" else "-" for c in out_path.stem).strip("-.")
    return stem or "profile"


def _command() -> str:
    return "heraldbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])


@contextmanager
def _stages(enabled: bool):
    """A progress bar per stage on a terminal (stderr); callbacks that do nothing otherwise."""
    if not (enabled and err.is_terminal):
        yield lambda name, total: (lambda *args: None)
        return
    bar = Progress(TextColumn("{task.description:<12}"), BarColumn(),
                   TextColumn("{task.completed:,}/{task.total:,}"), TimeElapsedColumn(),
                   console=err, transient=True)  # fmt: skip
    with bar:

        def stage(name: str, total: int | None):
            task = bar.add_task(name, total=total)

            def advance(done: Any = None, _total: Any = None) -> None:
                if isinstance(done, int):
                    bar.update(task, completed=done)
                else:
                    bar.advance(task)

            return advance

        yield stage


def _write_report(result, profile, folder: Path | None) -> list[Path]:
    if folder is None or result is None:
        return []
    from heraldbench.platform.workload_check_report import write_check_report

    return write_check_report(result, profile, folder)


def _print(written: Path, profile, result, report: list[Path], as_json: bool) -> None:
    if as_json:
        document = {
            "profile": str(written), "name": profile.name,
            "provenance": profile.provenance.model_dump(), "fit": profile.fit,
            "attributes": _attributes(profile),
            "check": result.to_json() if result else None, "report": [str(p) for p in report],
        }  # fmt: skip
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return
    out.print(_fit_table(profile))
    out.print(_blocks_table(profile))
    for line in _attributes(profile):
        out.print(f"attribute {line['name']} of {line['parent']}: {line['rows']} rows, "
                  f"{line['mean_ids_per_sample']:.2f} ids a sample on average, at most "
                  f"{line['most_ids']}")
    if result is not None:
        out.print(_check_table(result))
        if result.lengths:
            out.print(_lengths_table(result))
    out.print(f"profile: {written}")
    if report:
        out.print(f"report: {', '.join(str(p) for p in report)}")


def _attributes(profile) -> list[dict]:
    """The fitted attribute tables in brief: rows, and the mean and largest set a sample reads."""
    return [{"name": a.name, "parent": a.parent, "rows": len(a.weights),
             "mean_ids_per_sample": float(np.arange(1, len(a.lengths) + 1) @ a.lengths),
             "most_ids": len(a.lengths)} for a in profile.attributes]


def _fit_table(profile) -> Table:
    fit = profile.fit
    table = Table(title=f"{profile.name}: fitted on {profile.provenance.samples_read:,} samples "
                        f"of {profile.provenance.source}")  # fmt: skip
    for column in ("", "real", "synthetic"):
        table.add_column(column, justify="left" if not column else "right")
    for key in ("distinct_rows", "top1pct_share", "rows_seen_once_fraction"):
        table.add_row(key.replace("_", " "), f"{fit['real'][key]:,}", f"{fit['synthetic'][key]:,}")
    curves = fit["miss_ratio_curve"]
    for key, real in curves["real"].items():
        table.add_row(f"LRU miss ratio, cache {float(key):.0%}", f"{real:.3f}",
                      f"{curves['synthetic'][key]:.3f}")  # fmt: skip
    return table


def _blocks_table(profile) -> Table:
    classes = profile.fit["block_classes"]
    table = Table(title="blocks (fields that recur together): share of samples, real / synthetic")
    for column in ("fields", "new tuple", "repeat", "head tuple", "follows roots", "head given"):
        table.add_column(column, justify="left" if column in ("fields", "head given") else "right")
    for k, block in enumerate(profile.blocks):
        share = {name: f"{classes['real'][name][k]:.3f} / {classes['synthetic'][name][k]:.3f}"
                 for name in ("new", "repeat", "head")}  # fmt: skip
        parent = " ".join(profile.blocks[block.given.block].fields) if block.given else "-"
        table.add_row(" ".join(block.fields), share["new"], share["repeat"], share["head"],
                      ", ".join(f"{f:.2f}" for f in block.follow) or "-", parent)  # fmt: skip
    return table


def _check_table(result) -> Table:
    from heraldbench.platform.workload_check import MRC_TOLERANCE, TRAFFIC_TOLERANCE

    table = Table(title=f"round trip: worst traffic difference {result.worst_traffic:.3f} "
                        f"(±{TRAFFIC_TOLERANCE}), miss-ratio curve {result.worst_mrc:.3f} "
                        f"(±{MRC_TOLERANCE}): {'met' if result.met else 'not met'}")  # fmt: skip
    for column in ("shape", "scheduler", "pull real/syn", "push real/syn", "overall real/syn"):
        table.add_column(column, justify="left" if column in ("shape", "scheduler") else "right")
    grouped: dict[tuple, dict[str, dict]] = {}
    for r in result.rows:
        key = (f"W={r['workers']} m={r['batch_size']} {r['cache_fraction']:.0%}", r["scheduler"])
        grouped.setdefault(key, {})[r["total"]] = r
    for (shape, scheduler), totals in grouped.items():
        cells = []
        for total in ("pull", "push", "overall"):
            r = totals.get(total)
            mark = "" if r is None or abs(r["difference"]) <= TRAFFIC_TOLERANCE else " ✗"
            cells.append("-" if r is None else f"{r['real']:.3f} / {r['synthetic']:.3f}{mark}")
        table.add_row(shape, scheduler, *cells)
    return table


def _lengths_table(result) -> Table:
    """Each ragged table's law of ids a sample reads, on the real trace and the profile's."""
    table = Table(title="ragged tables: ids a sample reads")
    for column in ("table", "mean real", "mean synthetic", "largest CDF difference",
                   "largest row share difference"):
        table.add_column(column, justify="left" if column == "table" else "right")
    for r in result.lengths:
        share = r.get("max_row_share_difference")
        table.add_row(r["table"], f"{r['real_mean']:.2f}", f"{r['synthetic_mean']:.2f}",
                      f"{r['max_cdf_difference']:.3f}", "-" if share is None else f"{share:.3f}")
    return table

