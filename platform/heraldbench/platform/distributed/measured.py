"""The measured side of a distributed training: time per phase and rank, bytes, throughput.

``measured`` in a run's JSON (every figure measured on the ranks, none modelled):

* ``seconds``: per phase (:data:`PHASES`), the mean over training ranks of each rank's total;
  ``per_rank``: the same per rank, with its bytes and ``cpu_s`` (CPU seconds of the rank's
  process, all its threads, while it trained: what the rank cost the machine, steadier than
  wall time where ranks share cores);
* ``schedule_mode``: ``ahead`` (each rank replayed the scheduler before training, so the
  ``schedule`` phase is only the hand-over) or ``inline`` (replayed during training);
* ``iteration_s``: training wall time over iterations (rank 0; evaluation excluded);
* ``steady``: ``seconds`` over the iterations after the first (``iterations`` of them);
* ``bytes``: the row payload the ranks handed to other ranks (``network``), what stayed on a
  rank (``local``: a worker pulling a row it owns), next to the stream's rows × dim × bytes per
  value (``stream``: pulls, pushes, the flush, and the deltas of direct transfers' hand-overs,
  whose values are their readers' pulls), and the all-reduce payload;
* series ``measured_<phase>_s``: per iteration, the mean over training ranks (MLflow steps).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from heraldbench.platform.counters import TALLY
from heraldbench.platform.distributed._clock import PHASES

__all__ = ["measured_summary"]

_MOVED = ("miss_pull", "update_pull", "evict_push", "update_push")


def measured_summary(reports: list[dict[str, Any]], run, trained: float, samples: int,
                     iterations: int, flushed: int) -> dict[str, Any]:  # fmt: skip
    """Rank 0's summary of every rank's report (see the module docstring)."""
    workers = [r for r in reports if r["role"] == "worker"]
    per_iteration = np.mean([r["phases"] for r in workers], axis=0).reshape(-1, len(PHASES))
    row_bytes = run.exchange.row_bytes
    tallies = run.tally_table()

    stream_rows = flushed + run.handed_delta_rows + sum(
        float(tallies[:, TALLY.index(name)].sum()) for name in _MOVED
    )
    return {
        "backend": "nccl" if run.device.type == "cuda" else "gloo",
        "ranks": len(reports),
        "workers": len(workers),
        "hosts": sorted({r["host"] for r in reports}),
        "schedule_mode": run.schedule_mode,
        "seconds": {p: float(per_iteration[:, i].sum()) for i, p in enumerate(PHASES)},
        "steady": _steady(per_iteration),
        "iteration_s": trained / iterations if iterations else 0.0,
        "samples_per_second": samples / trained if trained > 0 else 0.0,
        "per_rank": [_rank_row(r) for r in reports],
        "bytes": {
            "network": int(sum(r["sent_bytes"] for r in reports)),
            "local": int(sum(r["local_rows"] for r in reports)) * row_bytes,
            "stream": int(stream_rows) * row_bytes,
            "allreduce_payload": int(run.allreduce_bytes),
            "row_bytes": row_bytes,
        },
        "series": {f"measured_{p}_s": per_iteration[:, i] for i, p in enumerate(PHASES)},
    }


def _steady(per_iteration: np.ndarray) -> dict[str, Any]:
    """Seconds per phase over the iterations after the first (the first pays the ranks' start
    skew, first-touch allocations and the collectives' first use)."""
    rest = per_iteration[1:] if len(per_iteration) > 1 else per_iteration
    return {"iterations": len(rest),
            "seconds": {p: float(rest[:, i].sum()) for i, p in enumerate(PHASES)}}  # fmt: skip


def _rank_row(report: dict[str, Any]) -> dict[str, Any]:
    phases = np.asarray(report["phases"]).reshape(-1, len(PHASES))
    return {
        "rank": report["rank"],
        "role": report["role"],
        "host": report["host"],
        **{p: round(float(phases[:, i].sum()), 6) for i, p in enumerate(PHASES)},
        "sent_bytes": report["sent_bytes"],
        "received_bytes": report["received_bytes"],
        "cpu_s": round(float(report.get("cpu_s", 0.0)), 6),
    }
