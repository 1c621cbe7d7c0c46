"""A spec's placements trained beside its schedulers (``heraldbench train``).

Each placement is made from the training trace's access statistics, refused where it does not
fit the cluster's memory, and trained by :func:`~heraldbench.platform.distributed.sharded.
train_placement` (ranks as threads with ``train.backend: emulated``, gloo processes with
``distributed``) on the schedulers' training split; what its ranks moved is then counted by the
accounting over the same iterations, so a run says whether the two agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.table import Table

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.placement_spec import run_knobs
from heraldbench.platform.placements import account
from heraldbench.platform.placements.runs import (
    iteration_batches,
    place_checked,
    tables_of,
)
from heraldbench.platform.placements.stats import stats_of_batches
from heraldbench.platform.placing import topology_of
from heraldbench.platform.spec import ExperimentSpec, TrainSpec

__all__ = ["placements_table", "train_placement_entry", "train_placements"]

_PHASES = ("forward", "backward", "sync")


def train_placement_entry(spec: ExperimentSpec, index: int = 0) -> dict[str, Any]:
    """``spec.placements[index]`` trained on the spec's training split, as one run of a
    submission: the placement's counted figures on that split (``placing.place_entry``: bytes
    per tier, modelled comm time, memory, load balance) with the training's (held-out metrics,
    bytes its ranks moved, whether they equal the counted ones) under ``trained``; its
    ``metrics`` at the top, as a trained scheduler's are."""
    from heraldbench.platform.placing import place_entry
    from heraldbench.platform.train import training_split

    trace = spec.dataset.open()
    split = training_split(spec, trace)
    # Placed twice on purpose: the side-by-side row counts float32 rows, as a deployment
    # trains, and the training places for its own dtype, whose rows (float64: twice the bytes)
    # can change a plan bound by cluster.device_memory (RecShard's) or whether one fits at all.
    counted = place_entry(spec, index, split[0])
    [trained] = train_placements(spec.model_copy(update={"placements": [spec.placements[index]]}),
                                 split)  # fmt: skip
    return {**counted, "metrics": trained["metrics"], "trained": trained}


def train_placements(spec: ExperimentSpec, split: tuple[TraceSource, SampleChunk],
                     baseline_metrics: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Every placement of ``spec`` trained on ``split``; metrics against ``baseline_metrics``
    (naive's) where given."""
    from heraldbench.platform.distributed.sharded import train_placement
    from heraldbench.platform.training import torch_dtype

    settings = spec.train or TrainSpec()
    dtype = torch_dtype(settings)
    trace, held_out = split
    cluster = spec.cluster
    tables = tables_of(trace, spec.embedding_dim, bytes_per_value=dtype.itemsize)
    topology = topology_of(cluster)
    samples = cluster.batch_size * topology.devices
    stats = stats_of_batches(iteration_batches(trace, samples, None), tuple(t.rows for t in tables))
    backend = "gloo" if settings.backend == "distributed" else "emulated"
    out = []
    for index, entry in enumerate(spec.placements):
        knobs = run_knobs(entry.kind, entry.knobs(), cluster.batch_size)
        try:
            placement, _ = place_checked(entry.kind, knobs, tables, topology, stats)
        except CapacityError as exc:
            raise SpecError(f"placements.{index} ({entry.label()}) does not fit: {exc}") from None
        outcome = train_placement(trace, held_out, placement, settings, dtype=dtype,
                                  batch_size=cluster.batch_size, embedding_dim=spec.embedding_dim,
                                  backend=backend)
        counted = account(placement, iteration_batches(trace, samples, outcome.iterations),
                          cluster.batch_size)
        out.append(_row(entry.label(), outcome, counted, baseline_metrics, placement.fallback))
    return out


def _row(label: str, outcome, counted, baseline: dict[str, float] | None,
         fallback: str | None) -> dict[str, Any]:  # fmt: skip
    metrics = outcome.final.metrics()
    iterations = max(outcome.iterations, 1)
    moved = {p: np.asarray(outcome.measured[p]).sum(0) / iterations for p in _PHASES}
    expected = {p: getattr(counted, p).sum(0) / iterations for p in _PHASES}
    return {
        "placement": label,
        "metrics": metrics,
        "metrics_vs_naive": {k: metrics[k] - baseline[k] for k in metrics} if baseline else {},
        "iterations": outcome.iterations,
        "samples_per_second": round(outcome.samples_per_second, 1),
        "measured_bytes_per_iteration": {p: {"intra_host": float(v[0]), "inter_host": float(v[1])}
                                         for p, v in moved.items()},
        "measured_equals_counted": all(np.allclose(moved[p], expected[p], rtol=0, atol=1e-6)
                                       for p in _PHASES),
        "replicas_identical": outcome.replicas_identical,
        "fallback": fallback,  # Placement.fallback
    }


def placements_table(rows: list[dict[str, Any]], name: str) -> Table:
    """The trained placements: quality against naive's, throughput, bytes moved per tier."""
    table = Table("placement", "AUC", "ΔAUC", "log loss", "samples/s", "intra MB/it",
                  "inter MB/it", "moved = counted", title=f"{name}: placements trained")
    for row in rows:
        moved = row["measured_bytes_per_iteration"]
        intra = sum(v["intra_host"] for v in moved.values()) / 1e6
        inter = sum(v["inter_host"] for v in moved.values()) / 1e6
        delta = row["metrics_vs_naive"].get("auc")
        table.add_row(row["placement"], f"{row['metrics']['auc']:.4f}",
                      "-" if delta is None else f"{delta:+.4f}",
                      f"{row['metrics']['logloss']:.4f}", f"{row['samples_per_second']:,.0f}",
                      f"{intra:.3f}", f"{inter:.3f}",
                      "yes" if row["measured_equals_counted"] else "NO")
    return table
