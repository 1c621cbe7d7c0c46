"""The documents' figures, rendered from the benchmark records (benchmarks/results/*.json).

Run: ``python benchmarks/render_docs.py`` to write them, ``--check`` to fail (exit 1) where a
document differs from what its records render. It writes ``docs/benchmarks.md`` whole (every
record: its command, commit, date, machine and figures) and, in README.md and docs/*.md, each
block between ``<!-- rendered: NAME -->`` and ``<!-- /rendered -->`` with the renderer NAME.
A figure in a document is so always a record's, and each record says the run it came from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _records import RESULTS

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_DOC = ROOT / "docs" / "benchmarks.md"
_BLOCK = re.compile(r"(<!-- rendered: (?P<name>[\w:-]+) -->\n)(?P<body>.*?)(<!-- /rendered -->)",
                    re.DOTALL)  # fmt: skip
#: Herald's published Table 1 (slides; Criteo Kaggle, 8 LRU caches of 1.6 GB, dim 128).
PUBLISHED = {"herald": (0.52, 0.42, 0.46), "herald-sync-only": (1.00, 0.84, 0.91),
             "herald-partition-only": (0.52, 0.85, 0.69)}  # fmt: skip


def records() -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))}


def provenance(record: dict[str, Any]) -> str:
    machine = record.get("machine", {})
    where = f"{machine.get('cores', '?')} cores, {machine.get('memory_gib', '?')} GiB"
    commit = record.get("commit") or "?"
    dirty = " with uncommitted changes" if record.get("dirty") else ""
    if record.get("source"):
        dirty += f" ({record['source']})"
    return (f"`{record.get('command', '?')}` at commit {commit}{dirty}, "
            f"{record.get('date', '?')[:10]}, on {where}")  # fmt: skip


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)[:60]
    return str(value)


def table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    columns = columns or list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def generic(figures: Any, depth: int = 3) -> str:
    """Any record's figures: lists of rows as tables, mappings as sections, the rest as lines."""
    if isinstance(figures, list) and figures and all(isinstance(r, dict) for r in figures):
        scalar = [{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in figures]
        return table(scalar)
    if not isinstance(figures, dict):
        return _cell(figures)
    scalars = {k: v for k, v in figures.items() if not isinstance(v, (dict, list))}
    parts = [table([{"figure": k, "value": v} for k, v in scalars.items()])] if scalars else []
    for key, value in figures.items():
        if isinstance(value, (dict, list)) and key not in ("setting", "spec"):
            parts.append(f"{'#' * min(depth, 6)} {key}\n\n{generic(value, depth + 1)}")
    return "\n\n".join(parts)


def comparison_table(all_records: dict[str, dict[str, Any]]) -> str:
    """The README's table: every scheduler on the criteo-kaggle workload, Herald's in brackets."""
    entry = all_records["comparison"]["figures"]["comparison"]
    optimistic = {r["scheduler"]: r for r in entry["optimistic"]["rows"]}
    rows = []
    for row in entry["strict"]["rows"]:
        published = PUBLISHED.get(row["kind"])
        shown = [_cell(row[k]) + (f" [{published[i]:.2f}]" if published else "")
                 for i, k in enumerate(("pull", "push", "overall"))]  # fmt: skip
        rows.append({"scheduler": f"`{row['scheduler']}`", "pull": shown[0], "push": shown[1],
                     "overall": shown[2],
                     "overall, optimistic": _cell(optimistic[row["scheduler"]]["overall"]),
                     "× bound": _cell(row["gap_to_bound"]) if row["gap_to_bound"] else "–"})
    return table(rows) + "\n\nMeasured by " + provenance(all_records["comparison"]) + "."


def comparison_full(all_records: dict[str, dict[str, Any]]) -> str:
    """Both workloads, both co-writer rules, with the bound, the modelled speedup and speed."""
    parts = []
    for name, entry in all_records["comparison"]["figures"].items():
        for consistency in ("strict", "optimistic"):
            block = entry[consistency]
            parts.append(f"**`examples/{name}.yaml`, `consistency: {consistency}`** "
                         f"({block['seconds']} s for the file):\n\n"
                         f"{table(block['rows'], None)}")  # fmt: skip
    return "\n\n".join(parts) + "\n\nMeasured by " + provenance(all_records["comparison"]) + "."


def claims_table(all_records: dict[str, dict[str, Any]]) -> str:
    """docs/claims.md's table: each seed paper's headline claim, measured, with its verdict."""
    from heraldbench.platform.reproduce import markdown

    record = all_records["claims"]
    figures = record["figures"]
    return (f"{markdown(figures['claims'])}\nMeasured on {figures['samples']:,} samples in "
            f"{figures['seconds']} s by {provenance(record)}.")  # fmt: skip


def sequence_claims(all_records: dict[str, dict[str, Any]]) -> str:
    """FlexShard against each baseline at that baseline's memory per device, per workload and
    topology (bench_sequence.py)."""
    record = all_records["sequence"]
    rows = []
    logs = {"real": "MovieLens 100K", "synthetic": "movielens-100k profile",
            "ragged-real": "MovieLens 100K, ragged", "ragged-synthetic": "profile, ragged"}
    for key, entry in record["figures"].items():
        workload, _, topology = key.partition("_")
        if workload not in logs:
            continue
        for baseline in ("row-wise", "table-row-wise"):
            base, flex = entry[baseline], entry[f"flexshard_at_{baseline}_memory"]
            rows.append({
                "log": logs[workload],
                "hosts × devices": topology.replace("x", " × "), "baseline": f"`{baseline}`",
                "its inter-host all-to-all MB/it": base["inter_alltoall_MB_per_it"],
                "flexshard's": flex["inter_alltoall_MB_per_it"],
                "less traffic": f"{flex['alltoall_reduction']:.1%}",
                "its comm ms/it": base["comm_ms_per_it"], "flexshard's ms": flex["comm_ms_per_it"],
                "lower latency": f"{flex['comm_speedup']:.2f}×",
                "MiB a device (flexshard ≤)": base["max_device_MiB"]})
    figures = record["figures"]
    text = table(rows)
    for key, histories in (("fidelity", "with a full history"),
                           ("fidelity_ragged", "with ragged histories of 1 to 20 items")):
        fit = figures.get(key)
        if fit is not None:
            text += (f"\n\nEvery cache scheduler on the profile's sequence trace against "
                     f"MovieLens 100K's ({fit['samples']:,} samples {histories}): worst traffic "
                     f"difference {fit['worst_traffic_difference']} (the one-hot check's line: "
                     f"{fit['traffic_tolerance']}), worst miss-ratio-curve difference "
                     f"{fit['worst_mrc_difference']} (line: {fit['mrc_tolerance']})"
                     + "".join(f"; items a history holds, mean {r['real_mean']} real and "
                               f"{r['synthetic_mean']} profile, largest CDF difference "
                               f"{r['max_cdf_difference']}" for r in fit.get("ids_per_sample_law", []))
                     + ".")
    for key, histories in (("simulate_M_ids_per_s", "full"),
                           ("simulate_M_ids_per_s_ragged", "ragged")):
        if key in figures:
            text += (f"\n\nSimulating the sequence trace, {histories} histories (M ids/s, one "
                     "process): " + ", ".join(f"`{k}` {v}" for k, v in figures[key].items()) + ".")
    return text + "\n\nMeasured by " + provenance(record) + "."


def _verdict_rows(label: str, verdicts: list[dict], names: list[str], budget: float,
                  kinds: list[str] | None = None) -> list[dict[str, str]]:
    """bench_instructions.py's verdict rows of commits ``names`` (the first the base)."""
    rows, base = [], names[0]
    for name in names[1:]:
        for row in verdicts:
            if kinds is not None and row["scheduler"] not in kinds:
                continue
            ratio = row[f"{name}/{base}"]
            alone = row.get(f"{name}/{base} without generation")
            worst = max(r for r in (ratio, alone) if r is not None)
            rows.append({
                "part": label, "scheduler": f"`{row['scheduler']}`",
                f"{base} Ir/unit": f"{row[f'Ir/unit {base}']:,.1f}",
                f"{name} Ir/unit": f"{row[f'Ir/unit {name}']:,.1f}",
                f"{name}/{base}": f"{ratio:.4f}",
                "without generation": "–" if alone is None else f"{alone:.4f}",
                "N→2N, 2N→3N": row[f"{name}/{base} N→2N, 2N→3N"],
                "halves differ": f"{row['halves differ']:.2%}",
                f"≤ {1 + budget:g}": "pass" if worst <= 1 + budget else f"**{worst - 1:+.1%}**",
            })  # fmt: skip
    return rows


def instructions_verdict(all_records: dict[str, dict[str, Any]]) -> str:
    """Each part's marginal instructions per unit of work, commit against the first (base), the
    halves' spread and the verdict against the budget (bench_instructions.py)."""
    record = all_records["instructions"]
    figures = record["figures"]
    budget = figures["settings"]["budget"]
    rows, notes = [], []
    for part in ("simulator", "trainer"):
        entry = figures.get(part)
        if entry is None:
            continue
        names = list(entry["commits"])
        rows += _verdict_rows(part, entry["verdicts"], names, budget)
        repeat = ", ".join(f"{k} {v:+.4%}" for k, v in entry["repeat_difference"].items())
        repeat = f"a repeated case's count differed by {repeat}" if repeat else "not repeated"
        commits = ", ".join(f"{k} {v}" for k, v in entry["commits"].items())
        notes.append(f"{part}: commits {commits}; unit: {entry['unit']}; {repeat}")
        check = entry.get("layout_check")
        if check:
            many = check["spellings"]
            label = f"{part}, {'median' if many > 2 else 'mean'} of {many} layouts"
            rows += _verdict_rows(label, check["verdicts"], names, budget, check["kinds"])
            widest = max(check["count_range"].items(), key=lambda item: item[1])
            notes.append(f"{label}: {', '.join(check['kinds'])} at every size with the fraction "
                         f"written {many} ways (the same work); the counts of a case differed "
                         f"by up to {widest[1]:,} ({widest[0]})")
    missing = figures["settings"].get("not_measured")
    if missing:
        notes.append("**partial**: not measured: " + "; ".join(
            f"{part} {', '.join(kinds)}" for part, kinds in missing.items()))
    return (table(rows) + "\n\n" + ".\n".join(notes) + ".\n\nMeasured by "
            + provenance(record) + ".")


def benchmarks_doc(all_records: dict[str, dict[str, Any]]) -> str:
    head = ("# Benchmarks, as measured\n\nGenerated by `python benchmarks/render_docs.py` from "
            "the records in `benchmarks/results/` (one per benchmark script, the latest run); "
            "do not edit. Each section names the command, the commit, the date and the machine "
            "of its run; compare figures only within one run: this machine's speed varies by "
            "tens of percent from day to day.\n")  # fmt: skip
    sections = [head]
    for name, record in all_records.items():
        doc = (record.get("doc") or "").strip()
        sections.append(f"## {name}\n\n{doc + chr(10) + chr(10) if doc else ''}"
                        f"Measured by {provenance(record)}.\n\n{generic(record['figures'])}")
    return "\n\n".join(sections).rstrip() + "\n"


def trainer_cpu(all_records: dict[str, dict[str, Any]]) -> str:
    """The emulated trainer against plain PyTorch on the CPU, at each batch size measured: the
    host's bookkeeping per iteration is what a GPU run's overlap has to hide."""
    rows, runs = [], []
    for name in ("trainer_cpu", "trainer_cpu_4096"):
        record = all_records.get(name)
        if record is None:
            continue
        setup = record["figures"]["setup"]
        for run, row in record["figures"]["results"].items():
            per = row["ms_per_iteration"]
            rows.append({"samples per worker": setup["batch_size"], "run": run,
                         "samples/s": row["samples_per_second"],
                         "overhead vs plain": f"{row['overhead_vs_plain']:+.1%}",
                         "movement ms / iteration": per["movement"],
                         "compute ms / iteration": per["compute"]})  # fmt: skip
        runs.append(f"{setup['workers']} workers × {setup['batch_size']}: {provenance(record)}")
    return table(rows) + "\n\nMeasured by " + "; ".join(runs) + "."


def trainer_host(all_records: dict[str, dict[str, Any]]) -> str:
    """Each run's host time outside torch's operators per iteration (bench_host_time.py): what
    a GPU cannot take over, against plain PyTorch's."""
    rows, runs = [], []
    for name in ("host_time_256", "host_time_4096"):
        record = all_records.get(name)
        if record is None:
            continue
        setup, results = record["figures"]["setup"], record["figures"]["results"]
        plain = results["plain"]["host_own_ms_without_schedule"]
        for run, row in results.items():
            phases = row["phases"]
            move = phases.get("movement", {"host_own": 0.0, "total": 0.0})
            rows.append({
                "samples per worker": setup["batch_size"], "run": run,
                "host's own, ms / iteration": f"{row['host_own_ms_without_schedule']:.2f}",
                "beyond plain": f"{row['host_own_ms_without_schedule'] - plain:+.2f}",
                "of it, cache moves (of their total)":
                    f"{move['host_own']:.2f} ({move['total']:.2f})",
                "decision stream": f"{phases.get('schedule', {}).get('host_own', 0.0):.2f}",
            })  # fmt: skip
        runs.append(f"{setup['workers']} workers × {setup['batch_size']}: {provenance(record)}")
    return table(rows) + "\n\nMeasured by " + "; ".join(runs) + "."


def read_ahead(all_records: dict[str, dict[str, Any]]) -> str:
    """The decision stream read ahead beside a consumer, with CPython's switch interval and
    read_ahead's (bench_read_ahead.py), ms per iteration."""
    record = all_records["read_ahead"]
    intervals = record["figures"]["setup"]["switch_intervals_s"]
    rows = [{"scheduler": kind, "consumer": consumer, "stream alone": row["stream_alone"],
             "consumer alone": row["consumer_alone"],
             f"together, {intervals['default'] * 1e3:g} ms": row["together_default_switch"],
             f"together, {intervals['read_ahead'] * 1e3:g} ms": row["together_read_ahead_switch"]}
            for kind, consumers in record["figures"]["results"].items()
            for consumer, row in consumers.items()]  # fmt: skip
    return table(rows) + "\n\nMeasured by " + provenance(record) + "."


RENDERERS: dict[str, Callable[[dict[str, dict[str, Any]]], str]] = {
    "comparison-table": comparison_table,
    "comparison-full": comparison_full,
    "claims-table": claims_table,
    "sequence-claims": sequence_claims,
    "instructions-verdict": instructions_verdict,
    "trainer-cpu": trainer_cpu,
    "trainer-host": trainer_host,
    "read-ahead": read_ahead,
}


def render(name: str, all_records: dict[str, dict[str, Any]]) -> str:
    """Block ``name``: a renderer of :data:`RENDERERS`, or ``record:NAME``, a record's figures."""
    if name.startswith("record:"):
        record = all_records[name.split(":", 1)[1]]
        return f"{generic(record['figures'])}\n\nMeasured by {provenance(record)}."
    return RENDERERS[name](all_records)


def render_blocks(text: str, all_records: dict[str, dict[str, Any]]) -> str:
    def fill(match: re.Match[str]) -> str:
        body = render(match["name"], all_records).rstrip() + "\n"
        return f"{match.group(1)}{body}{match.group(4)}"

    return _BLOCK.sub(fill, text)


def outputs() -> dict[Path, str]:
    """Every rendered document and its text."""
    all_records = records()
    rendered = {BENCHMARKS_DOC: benchmarks_doc(all_records)}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if path != BENCHMARKS_DOC and _BLOCK.search(path.read_text()):
            rendered[path] = render_blocks(path.read_text(), all_records)
    return rendered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail where a document is stale")
    args = parser.parse_args()
    stale = []
    for path, text in outputs().items():
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"stale (run python benchmarks/render_docs.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
