"""Ready-made specs the web UI offers (``GET /api/presets``); every one passes validation."""

from __future__ import annotations

from typing import Any

from heraldbench.platform.placements import registered as placement_kinds
from heraldbench.platform.schedulers import registered

__all__ = ["presets"]

# The default workload: the criteo-kaggle profile (docs/workloads.md), at Herald's Table 1 scale.
_CRITEO = {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 2_000_000, "scale": 0.05,
           "seed": 1}
_SMALL = {"kind": "synthetic", "profile": "criteo-kaggle", "samples": 200_000, "scale": 0.01,
          "seed": 1}


def _movielens(samples: int, **features: Any) -> dict[str, Any]:
    """The movielens-100k workload with each user's last 20 items as a sequence feature."""
    sequence = {"sequence": {"user": "user", "item": "item", "length": 20}}
    return {"kind": "synthetic", "profile": "movielens-100k", "samples": samples, "scale": 1.0,
            "seed": 1, "features": {**features, **sequence}}


def _table1() -> dict[str, Any]:
    # Same as examples/table1.yaml: Herald's Table 1 on the criteo-kaggle workload.
    return {
        "name": "herald-table1",
        "mode": "simulate",
        "dataset": dict(_CRITEO),
        "cluster": {"workers": 8, "batch_size": 256},
        "cache": {"ratio": 0.1, "policy": "lru"},
        "embedding_dim": 128,
        "schedulers": [
            {"kind": "naive"},
            {"kind": "herald", "lookahead": 1},
            {"kind": "herald-sync-only"},
            {"kind": "herald-partition-only"},
        ],
        "seed": 0,
    }


def _every_scheduler() -> dict[str, Any]:
    return {
        "name": "every-scheduler",
        "dataset": dict(_SMALL),
        "cluster": {"workers": 4, "batch_size": 128},
        "cache": {"ratio": 0.1},
        "schedulers": [{"kind": kind} for kind in registered()],
    }


def _lookahead_cache_grid() -> dict[str, Any]:
    return {
        "name": "lookahead-cache-grid",
        "dataset": dict(_SMALL),
        "cluster": {"workers": 4, "batch_size": 128},
        "cache": {"ratio": [0.02, 0.05, 0.1]},
        "schedulers": [{"kind": "naive"}, {"kind": "herald", "lookahead": [1, 2, 4, 8]}],
    }


def _tune_herald() -> dict[str, Any]:
    """examples/tune.yaml, smaller: Herald's lookahead and cache size, traffic against memory."""
    return {
        "name": "tune-herald",
        "dataset": dict(_SMALL),
        "cluster": {"workers": 4, "batch_size": 128},
        "cache": {"ratio": 0.1},
        "schedulers": [{"kind": "herald"}],
        "tuning": {
            "space": {
                "scheduler.lookahead": {"low": 1, "high": 16, "log": True},
                "cache.ratio": {"low": 0.01, "high": 0.5, "log": True},
            },
            "objectives": ["traffic", "cache_memory"],
            "constraints": [{"metric": "cache_memory", "max": "64MiB"}],
            "trials": 12,
            "sampler": {"kind": "tpe", "seed": 0},
        },
    }


def _sequence_and_placements() -> dict[str, Any]:
    """examples/sequence.yaml, smaller: multi-hot and sequence features, every scheduler and
    every placement in one comparison."""
    return {
        "name": "sequence-and-placements",
        "dataset": _movielens(200_000, multi_hot={"sizes": {"item": 3}, "pooling": "mean"}),
        "cluster": {"workers": 4, "batch_size": 128, "hosts": 2, "devices_per_host": 2},
        "cache": {"ratio": 0.5},
        "embedding_dim": 64,
        "schedulers": [{"kind": kind} for kind in registered()],
        "placements": [{"kind": kind} for kind in placement_kinds()],
        "baseline": "row-wise",
    }


def _tune_flexshard() -> dict[str, Any]:
    """examples/tune-placement.yaml, smaller: FlexShard's replicas, comm time against device
    memory on a sequence workload."""
    return {
        "name": "tune-flexshard",
        "dataset": _movielens(100_000),
        "cluster": {"workers": 8, "batch_size": 64, "hosts": 2, "devices_per_host": 4},
        "cache": {"ratio": 0.5},
        "schedulers": [{"kind": "naive"}],
        "placements": [{"kind": "flexshard"}],
        "tuning": {
            "space": {"placement.memory_headroom": {"low": 0.0, "high": 1.0},
                      "placement.hot_share": {"low": 0.1, "high": 0.9}},
            "objectives": [{"metric": "comm_time", "profile": "tcp-100g"}, "device_memory"],
            "trials": 12,
            "sampler": {"kind": "tpe", "seed": 0},
        },
    }


def presets() -> list[dict[str, Any]]:
    """The presets, each ``{"id", "title", "description", "spec"}``."""
    return [
        {
            "id": "herald-table1",
            "title": "Herald, Table 1",
            "description": "naive, Herald and its two ablations on the criteo-kaggle workload "
            "(2M samples, 8 workers, cache 10% of rows): the paper's comparison",
            "spec": _table1(),
        },
        {
            "id": "every-scheduler",
            "title": "Every scheduler, small trace",
            "description": "all registered schedulers at their defaults on a 200k-sample trace "
            "(seconds per run)",
            "spec": _every_scheduler(),
        },
        {
            "id": "lookahead-cache-grid",
            "title": "Lookahead x cache size",
            "description": "Herald's lookahead 1, 2, 4, 8 at caches of 2%, 5% and 10% of rows: "
            "a grid of 3 points x 5 schedulers",
            "spec": _lookahead_cache_grid(),
        },
        {
            "id": "tune-herald",
            "title": "Tune Herald (a study)",
            "description": "an Optuna study of Herald's lookahead and cache size: traffic against "
            "cache memory, under a 64 MiB cap; submitting it starts a study",
            "spec": _tune_herald(),
        },
        {
            "id": "tune-flexshard",
            "title": "Tune FlexShard (a study)",
            "description": "an Optuna study of FlexShard's memory headroom and hot share on a "
            "sequence workload: modelled comm time against device memory; submitting it starts "
            "a study",
            "spec": _tune_flexshard(),
        },
        {
            "id": "sequence-and-placements",
            "title": "Sequence features, caches and placements",
            "description": "MovieLens-like users with a 20-item history and a 3-id item: every "
            "scheduler and every sharded placement (TorchRec's plans, RecShard, FlexShard) on "
            "2 hosts x 2 devices, relative to row-wise",
            "spec": _sequence_and_placements(),
        },
    ]
