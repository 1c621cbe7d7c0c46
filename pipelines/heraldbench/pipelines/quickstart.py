"""``heraldbench quickstart``: the Herald comparison on the criteo-kaggle workload, end to end.

Every registered scheduler runs on one trace of the built-in ``criteo-kaggle`` workload profile
(fitted on real Criteo Kaggle lines, held at full scale to the published dataset: docs/workloads.md)
in Herald's Table 1 setting (8 workers, LRU caches of 10% of the rows, dim 128), as Dask tasks,
logged to the embedded MLflow store; the report (Table 1, comparison, charts) is written under
``$HERALDBENCH_HOME``.

The trace is sized to finish in a few minutes on 2 cores: 1,000,000 samples at scale 0.05 (a
miniature of the full dataset: tables at 5% of their size, sample t standing for sample t / 0.05
of the whole file), i.e. 488 iterations of 2,048 samples. The scale keeps the cache-to-working-set
ratio of a full Kaggle epoch, so the relative figures keep the full trace's shape; absolute counts
scale with the trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from heraldbench.pipelines.cluster import ClusterOptions, dask_client
from heraldbench.pipelines.console import (
    print_submission,
    progress_bar,
    run_counter,
    warm_up_here,
)
from heraldbench.pipelines.experiment import run_experiment
from heraldbench.pipelines.tracking import home, tracking_uri, ui_hint
from heraldbench.platform.schedulers import registered
from heraldbench.platform.spec import ExperimentSpec, parse_spec

__all__ = ["DEFAULT_SAMPLES", "PROFILE", "SCALE", "quickstart_spec", "run_quickstart"]

DEFAULT_SAMPLES = 1_000_000
PROFILE = "criteo-kaggle"
SCALE = 0.05
WORKERS, BATCH = 8, 256
#: Herald's Table 1 rows first, then everything else registered, in name order.
_FIRST = ("naive", "herald", "herald-sync-only", "herald-partition-only", "het", "herald-plus")


def quickstart_spec(samples: int = DEFAULT_SAMPLES) -> dict[str, Any]:
    """The quickstart's spec: every registered scheduler at its defaults."""
    kinds = [k for k in _FIRST if k in registered()]
    kinds += sorted(k for k in registered() if k not in kinds)
    return {
        "name": "quickstart",
        "mode": "simulate",
        "dataset": {"kind": "synthetic", "profile": PROFILE, "samples": samples, "scale": SCALE,
                    "seed": 1},
        "cluster": {"workers": WORKERS, "batch_size": BATCH},
        "cache": {"ratio": 0.1, "policy": "lru"},
        "embedding_dim": 128,
        "schedulers": [{"kind": kind} for kind in kinds],
        "seed": 0,
    }


def run_quickstart(*, samples: int | None, cluster: ClusterOptions, out: Any, err: Any) -> None:
    """Run the quickstart, printing to the CLI's consoles (``out``, ``err``)."""
    document = quickstart_spec(samples or DEFAULT_SAMPLES)
    folder = home() / "quickstart"
    folder.mkdir(parents=True, exist_ok=True)
    spec_path = folder / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(document, sort_keys=False))
    uri = tracking_uri()
    spec = _describe(document, out, spec_path)
    warm_up_here(err, [spec], cluster)
    with dask_client(cluster) as client, progress_bar(err, "runs") as bar:
        on_done = run_counter(bar, len(document["schedulers"]))
        submission = run_experiment(
            document, client=client, uri=uri, on_done=on_done, report_dir=folder
        )
    print_submission(out, err, submission, ui_hint(uri))
    out.print(
        f"report: {folder / 'report'} (table1.md, comparison.md and their charts), "
        f"all runs: {folder / 'results.json'}"
    )
    out.print(f"run it again, or edit it: heraldbench run {spec_path}")


def _describe(document: dict[str, Any], out: Any, spec_path: Path) -> ExperimentSpec:
    spec = parse_spec(document)
    trace = spec.dataset.open()
    rows = trace.layout.total_rows
    per_iteration = spec.cluster.workers * spec.cluster.batch_size
    out.print(
        f"quickstart: {trace.num_samples:,} samples of the {PROFILE} workload (scale {SCALE}: "
        f"{trace.layout.num_tables} tables, {rows:,} rows), {spec.cluster.workers} workers × "
        f"{spec.cluster.batch_size} = {trace.num_samples // per_iteration:,} iterations, "
        "LRU caches of "
        f"{spec.cache.resolve_rows(rows, spec.embedding_dim):,} rows (10%); "
        f"{len(spec.schedulers)} schedulers: {', '.join(s.kind for s in spec.schedulers)}"
    )
    out.print(f"spec: {spec_path}")
    return spec
