"""Fidelity of workload profiles on real traces (the figures of docs/workloads.md).

    python benchmarks/workload_fidelity.py KIND:PATH [KIND:PATH ...] [--out DIR] [--shape W:F ...]

For each real trace R (``criteo-tsv:train_head.txt``, ``avazu-csv:train.csv``,
``movielens:u.data``): fit a profile on R, generate S with as many samples, and run every
scheduler on both at each shape (``heraldbench calibrate --check``). For Criteo-layout traces the
independent-fields generator (``synthetic-criteo`` at full Kaggle cardinalities, as many samples)
is run at the same shapes, for comparison. Writes DIR/NAME.json and DIR/NAME/ (the check report)
per trace and DIR/fidelity.md (every figure, met or not). Traces whose file does not exist are
skipped with a message: real data is never part of the repository (its licences forbid it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from heraldbench.platform.data.workload.fit import fit_profile, read_trace
from heraldbench.platform.workload_check import (
    DEFAULT_SHAPES,
    TRAFFIC_TOLERANCE,
    CheckResult,
    check_round_trip,
    compare_traces,
    parse_shape,
)
from heraldbench.platform.workload_check_report import check_markdown, write_check_report


def _reader(kind: str, path: Path):
    from pydantic import TypeAdapter

    from heraldbench.platform.spec import DatasetSpec

    return TypeAdapter(DatasetSpec).validate_python({"kind": kind, "path": str(path)})


def real_traces(items: list[str]) -> Iterator[tuple[str, Path, Any]]:
    """(kind, path, trace in memory) of each ``KIND:PATH`` whose file exists; the others are
    skipped with a message (real data is never part of the repository)."""
    for item in items:
        kind, _, name = item.partition(":")
        path = Path(name)
        if not path.exists():
            print(f"skipped {item}: {path} does not exist", file=sys.stderr)
            continue
        yield kind, path, _reader(kind, path).open().materialize()


def _independent(real, shapes, seed: int) -> CheckResult | None:
    """The independent-fields generator against the same real trace (Criteo layout only)."""
    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec

    if real.layout.num_tables != 26:
        return None
    independent = SyntheticCriteoSpec(samples=real.num_samples, scale=1.0, seed=seed).open()
    return compare_traces(real, independent, shapes=shapes)


def _summary(name: str, kind: str, result: CheckResult, independent: CheckResult | None) -> str:
    lines = [f"### {name} ({kind}, {result.samples:,} samples, {result.distinct_rows:,} rows)", "",
             f"Worst difference: traffic {result.worst_traffic:.3f}, miss-ratio curve "
             f"{result.worst_mrc:.3f}.", ""]  # fmt: skip
    header = "| shape | scheduler | overall: real | profile | independent fields |"
    lines += [header, "|---|---|---|---|---|"]
    other = {(r["workers"], r["cache_fraction"], r["scheduler"]): r["synthetic"]
             for r in (independent.rows if independent else []) if r["total"] == "overall"}
    for r in result.rows:
        if r["total"] != "overall":
            continue
        mark = "" if abs(r["difference"]) <= TRAFFIC_TOLERANCE else " ✗"
        ind = other.get((r["workers"], r["cache_fraction"], r["scheduler"]))
        lines.append(f"| W={r['workers']} m={r['batch_size']} {r['cache_fraction']:.0%} | "
                     f"{r['scheduler']} | {r['real']:.3f} | {r['synthetic']:.3f}{mark} | "
                     f"{'-' if ind is None else f'{ind:.3f}'} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", help="KIND:PATH")
    parser.add_argument("--out", type=Path, default=Path("fidelity"))
    parser.add_argument("--shape", action="append", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shapes = tuple(parse_shape(s) for s in args.shape) if args.shape else DEFAULT_SHAPES
    args.out.mkdir(parents=True, exist_ok=True)
    sections = []
    for kind, path, real in real_traces(args.traces):
        started = time.perf_counter()
        profile = fit_profile(read_trace(real), name=path.stem, source=path.name, source_kind=kind,
                              seed=args.seed)  # fmt: skip
        result = check_round_trip(real, profile, shapes=shapes, seed=args.seed)
        independent = _independent(real, shapes, args.seed)
        write_check_report(result, profile, args.out / path.stem)
        document = {"trace": f"{kind}:{path}", "seconds": round(time.perf_counter() - started, 1),
                    "check": result.to_json(),
                    "independent_fields": independent.to_json() if independent else None}  # fmt: skip
        (args.out / f"{path.stem}.json").write_text(json.dumps(document, indent=2))
        sections.append(_summary(path.stem, kind, result, independent))
        print(check_markdown(result, profile))
    (args.out / "fidelity.md").write_text("\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
