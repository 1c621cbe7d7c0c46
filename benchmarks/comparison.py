"""Every scheduler in Herald's Table 1 setting, under both co-writer rules: the README's table.

Run: ``python benchmarks/comparison.py [SPEC ...]`` (default ``examples/comparison.yaml`` and
``examples/comparison-independent.yaml``). Each spec is simulated twice, under
``consistency: strict`` (the default) and ``optimistic`` (Herald's released co-writer rule); the
record holds, per spec and scheduler, the relative pull, push and overall, the gap to the lower
bound, the modelled speedup over naive on ``tcp-100g`` and the simulator's speed. Writes
``benchmarks/results/comparison.json``; ``python benchmarks/render_docs.py`` puts it in the docs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from _records import write_record

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["examples/comparison.yaml", "examples/comparison-independent.yaml"]


def simulate(path: Path, consistency: str) -> tuple[dict[str, Any], float]:
    from heraldbench.platform.runner import simulate_experiment
    from heraldbench.platform.spec import load_spec

    spec = load_spec(path).model_copy(update={"consistency": consistency})
    start = time.perf_counter()
    result = simulate_experiment(spec)
    return result.to_json(), time.perf_counter() - start


def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    runs = document["runs"]
    naive = next(r for r in runs if r["scheduler"] == "naive")["time"]["tcp-100g"]
    out = []
    for run in runs:
        time_ = run["time"]["tcp-100g"]["mean_iteration_s"]
        gap = (run.get("bound") or {}).get("gap") or {}
        out.append({
            "scheduler": run["label"], "kind": run["scheduler"],
            **{k: round(run["relative"][k], 3) for k in ("pull", "push", "overall")},
            "gap_to_bound": round(gap["overall"], 3) if gap.get("overall") else None,
            "speedup_tcp_100g": round(naive["mean_iteration_s"] / time_, 3),
            "m_accesses_per_s": round((run["accesses_per_second"] or 0) / 1e6, 1),
        })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=DEFAULT)
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    for name in args.specs:
        path = ROOT / name
        entry: dict[str, Any] = {}
        for consistency in ("strict", "optimistic"):
            document, seconds = simulate(path, consistency)
            entry[consistency] = {"seconds": round(seconds, 1), "rows": rows(document)}
            print(f"{name} {consistency}: {seconds:.1f} s", flush=True)
        experiment = document["experiment"]
        entry["setting"] = {"spec": experiment["spec"], "cache_rows": experiment["cache_rows"],
                            "rows": experiment["dataset"].get("rows")}
        figures[Path(name).stem] = entry
    write_record("comparison", figures)


if __name__ == "__main__":
    main()
