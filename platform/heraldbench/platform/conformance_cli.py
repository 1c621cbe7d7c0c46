"""``heraldbench conformance``: a seed system's released code run beside heraldbench.

The released code comes from a checkout the user names (``--reference``); it is built or
imported once into ``$HERALDBENCH_HOME/conformance/<system>-<commit>`` and driven by
heraldbench's own shims (:mod:`heraldbench.platform.conformance`). Exit status: 0 when every
decision and count agrees, 1 when something differs, 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from heraldbench.platform.cli import _user_errors, app, out
from heraldbench.platform.conformance import (
    SYSTEMS,
    VARIANTS,
    ConformanceError,
    SystemReport,
    cache_root,
    system_module,
)
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import ExperimentSpec, load_spec, parse_spec
from heraldbench.platform.trace_files import DEFAULT_MAX_SAMPLES, KINDS, dataset_of_file

__all__ = ["DEFAULT_SPEC", "conformance"]

#: The trace compared when neither --spec nor --trace is given: small enough for seconds, and
#: with caches small enough to evict (4 workers × 64 samples, 2% of 338,700 rows each).
DEFAULT_SPEC: dict[str, Any] = {
    "name": "conformance",
    "dataset": {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 16_384,
                "scale": 0.01, "seed": 1},
    "cluster": {"workers": 4, "batch_size": 64},
    "cache": {"ratio": 0.02},
    # each system compares its own entry; BagPipe's oracle emits batches - lookahead of 64
    "schedulers": [{"kind": "herald"}, {"kind": "het"}, {"kind": "fae"},
                   {"kind": "bagpipe", "lookahead": 8}],
}  # fmt: skip
#: A trace file's format, by its name's suffix, where --kind does not say.
_SUFFIX_KINDS = {".txt": "criteo-tsv", ".tsv": "criteo-tsv", ".csv": "avazu-csv",
                 ".dat": "movielens"}  # fmt: skip


@app.command()
def conformance(
    system: Annotated[str, typer.Argument(help=f"the system: {', '.join(SYSTEMS)}")],
    reference: Annotated[Path, typer.Option(
        "--reference", help="a checkout of the system's released code")],
    spec_path: Annotated[Path | None, typer.Option(
        "--spec", help="the experiment spec whose trace, cluster, cache and scheduler entry "
        "are compared (default: a small built-in one)")] = None,
    trace_path: Annotated[Path | None, typer.Option(
        "--trace", help="a trace file (or prepared folder) to compare on, with the built-in "
        "spec's cluster and cache")] = None,
    kind: Annotated[str | None, typer.Option(
        "--kind", help=f"--trace's format: {', '.join(KINDS)} (default: by its suffix)")] = None,
    variant: Annotated[str, typer.Option(
        help=f"heraldbench's variant to compare: {' or '.join(VARIANTS)}")] = "released",
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="also write the report to DIR/conformance-SYSTEM.json")] = None,
) -> None:
    """Run SYSTEM's released code (from --reference) and heraldbench on one trace, and compare
    their decisions and counts iteration by iteration."""
    with _user_errors():
        module = system_module(system)
        if variant not in VARIANTS:
            raise SpecError(f"--variant {variant!r}: give one of {', '.join(VARIANTS)}")
        commit = module.check_reference(reference)
        spec = _spec(spec_path, trace_path, kind)
        trace = spec.dataset.open()
        cache_dir = cache_root() / f"{system}-{(commit or 'no-git')[:12]}"
        report = module.compare(reference, spec, trace, variant=variant, cache_dir=cache_dir)
        if out_dir is not None:
            _write(report, out_dir)
    if as_json:
        out.print_json(json.dumps(report.to_json(), default=str))
    else:
        _print(report)
    raise typer.Exit(0 if report.agrees else 1)


def _spec(spec_path: Path | None, trace_path: Path | None, kind: str | None) -> ExperimentSpec:
    if spec_path is not None and trace_path is not None:
        raise SpecError("give --spec or --trace, not both")
    if spec_path is not None:
        return load_spec(spec_path)
    if trace_path is None:
        return parse_spec(DEFAULT_SPEC)
    if not trace_path.exists():
        raise SpecError(f"--trace {trace_path}: no such file or folder")
    kind = kind or ("prepared" if trace_path.is_dir() else _SUFFIX_KINDS.get(trace_path.suffix))
    if kind is None:
        raise SpecError(f"--trace {trace_path}: say its format with --kind ({', '.join(KINDS)})")
    dataset = dataset_of_file(kind, trace_path, None, DEFAULT_MAX_SAMPLES)
    return parse_spec({**DEFAULT_SPEC, "dataset": dataset.model_dump(mode="json")})


def _write(report: SystemReport, out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"conformance-{report.system}.json"
        path.write_text(json.dumps(report.to_json(), indent=2, default=str) + "\n")
    except OSError as exc:
        raise ConformanceError(f"--out {out_dir}: cannot write the report ({exc})") from None


def _print(report: SystemReport) -> None:
    commit = report.commit[:12] if report.commit else "not a git checkout"
    s = report.setting
    shape = f"; {report.iterations} iterations" if report.iterations else ""
    if "workers" in s:
        shape += f", {s['workers']} workers × {s.get('batch_size')}"
    if "cache_rows" in s:
        shape += f", caches of {s['cache_rows']:,} rows"
    out.print(f"[bold]{report.system}[/]: {report.reference} ({commit}) against heraldbench's "
              f"{report.variant} variant{shape}", highlight=False)  # fmt: skip
    if not report.per_iteration:  # a decision taken once (FAE's hot set): totals only
        totals = Table("quantity", "heraldbench", "released", title="heraldbench / released")
        for name, (ours, theirs) in report.totals.items():
            totals.add_row(name, f"{ours:,}", f"{theirs:,}")
        out.print(totals)
        _print_verdict(report)
        return
    names = [k for k in report.per_iteration[0] if k != "iteration"]
    table = Table("iteration", *names, title="heraldbench / released (decisions: = when equal)")
    for row in report.per_iteration:
        table.add_row(str(row["iteration"]), *(_cell(row.get(name)) for name in names))
    table.add_row("total", *(_total(report, name) for name in names), style="bold")
    out.print(table)
    _print_verdict(report)


def _print_verdict(report: SystemReport) -> None:
    first = report.first_difference
    if first is None:
        out.print("[green]agrees[/]: every decision and count is equal", highlight=False)
        return
    where = "in total" if first.iteration is None else f"at iteration {first.iteration}"
    out.print(f"[red]differs[/] first {where}: {first.what}: heraldbench {first.ours}, "
              f"released {first.released}", highlight=False)
    out.print(f"explained by: {first.explanation or 'no known difference'}", highlight=False)
    others = sorted({d.what for d in report.differences} - {first.what})
    if others:
        out.print(f"also differ: {', '.join(others)}", highlight=False)


def _total(report: SystemReport, name: str) -> str:
    if name in report.totals:
        return _cell(report.totals[name])
    if f"{name} agrees" not in report.totals:
        return ""
    agree, of = report.totals[f"{name} agrees"]
    return f"{agree} of {of} equal"


def _cell(pair: Any) -> str:
    if pair is None:
        return ""
    ours, theirs = pair
    if isinstance(ours, str):  # decision digests
        return "=" if ours == theirs else f"{ours} / {theirs}"
    return f"{ours:,} / {theirs:,}"
