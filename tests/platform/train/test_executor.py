"""The executor moves exactly the rows the simulator counts, and refuses to read outdated rows."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest
import torch

from heraldbench.platform.contract import Read, Send
from heraldbench.platform.exceptions import InvariantViolation, SpecError
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import decisions, simulate
from heraldbench.platform.train import EmulatedCluster, executor, init_embedding_table
from heraldbench.platform.train.loop import _Run
from heraldbench.platform.train.rows import RowStore
from tests.platform.train._tiny import (
    BATCH,
    CACHE_ROWS,
    DIM,
    SETTINGS,
    WORKERS,
    tiny_split,
    train_tiny,
)

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("naive", {}, {}),
    ("herald", {}, {}),
    ("herald", {"lookahead": 2}, {}),
    ("herald-sync-only", {"lookahead": 3}, {}),
    ("herald-partition-only", {}, {}),
    ("herald-plus", {}, {}),
    ("herald-plus", {"replacement_window": 0}, {}),
    ("herald-plus", {"direct_transfer": False, "lookahead": 2}, {}),
    ("het", {"bound": 0}, {}),
    ("het", {"bound": 3, "clock_unit": "iteration"}, {}),
    ("het", {"bound": 100, "policy": "lfuopt"}, {}),
    ("fae", {"hot_ratio": 0.2}, {}),
    ("fae", {"hot_ratio": 0.2, "switch_period": 2, "allreduce": "sparse"}, {}),
    ("naive", {}, {"policy": "lfu"}),
    ("herald", {}, {"policy": "lfu", "cache_rows": 33}),
    ("herald", {}, {"consistency": "optimistic"}),
    ("herald", {"variant": "released"}, {"cache_rows": 36}),
    ("herald-sync-only", {"variant": "released", "lookahead": 2}, {"policy": "lfu"}),
    ("herald-partition-only", {"variant": "released"}, {}),
    ("het", {"bound": 1, "variant": "released"}, {}),
    ("bagpipe", {"lookahead": 4}, {"cache_rows": 80}),
    ("bagpipe", {"lookahead": 1}, {"cache_rows": 70}),
    ("bagpipe", {"lookahead": 20, "cleanup_proportion": 0.5}, {"cache_rows": 98}),
]


@pytest.mark.parametrize(("kind", "knobs", "run"), CASES, ids=lambda v: str(v))
def test_executor_counts_equal_the_simulator(kind: str, knobs: dict, run: dict) -> None:
    train, held_out = tiny_split()
    outcome = train_tiny(kind, (train, held_out), **knobs, **run)
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH, **knobs)
    expected = simulate(
        train, scheduler, cache_rows=run.get("cache_rows", CACHE_ROWS),
        policy=run.get("policy", "lru"), consistency=run.get("consistency", "strict"),
    ).counts  # fmt: skip
    assert outcome.counts == expected
    assert outcome.iterations == len(outcome.series["loss"])
    assert np.isfinite(outcome.series["loss"]).all()


def test_the_tiny_trace_exercises_every_kind_of_move() -> None:
    naive, herald = train_tiny("naive"), train_tiny("herald")
    assert naive.counts.update_pull and naive.counts.update_push and naive.counts.miss_pull
    assert herald.counts.evict_push and herald.counts.flush_push
    assert train_tiny("herald-plus").direct_transfers > 0
    fae = train_tiny("fae", hot_ratio=0.2)
    assert fae.counts.allreduce > 0


def test_hets_released_lfu_is_simulated_but_not_trained() -> None:
    """HET's released LFU holds rows beyond its cache between their read and their update;
    the trainers' caches cannot, and say so rather than move other rows."""
    with pytest.raises(SpecError, match="the lfu policy keeps rows beyond its cache's rows"):
        train_tiny("het", bound=1, policy="lfu", variant="released")


def test_het_reads_stale_rows_only_beyond_bound_zero() -> None:
    assert train_tiny("het", bound=0).stale_reads == 0
    relaxed = train_tiny("het", bound=100)
    assert relaxed.stale_reads > 0 and relaxed.max_staleness > 0


def test_strict_schedulers_never_read_an_outdated_copy() -> None:
    for kind in ("naive", "herald", "herald-sync-only", "herald-partition-only", "herald-plus"):
        assert train_tiny(kind).stale_reads == 0


def _corrupted(stream, flip_at: int):
    """The decision stream with one update pull turned into a hit (a read of an outdated copy)."""
    for dec in stream:
        kinds = dec.touched_kind
        if dec.iteration >= flip_at and (kinds == Read.UPDATE).any():
            kinds = kinds.copy()
            kinds[np.flatnonzero(kinds == Read.UPDATE)[0]] = Read.HIT
            dec = dataclasses.replace(dec, touched_kind=kinds)
            flip_at = 1 << 30
        yield dec


def test_a_read_of_an_outdated_copy_is_refused() -> None:
    train, held_out = tiny_split()
    scheduler = create("naive", workers=WORKERS, batch_size=BATCH)
    run = _Run(train, held_out, scheduler, CACHE_ROWS, DIM, SETTINGS, "strict")
    stream = decisions(train, scheduler, cache_rows=CACHE_ROWS)
    with pytest.raises(InvariantViolation, match="outdated"):
        run.execute(_corrupted(stream, flip_at=3), None)


def test_evicting_unsent_updates_is_refused() -> None:
    train, _ = tiny_split()
    scheduler = create("herald", workers=WORKERS, batch_size=BATCH)
    cluster = EmulatedCluster(init_embedding_table(train.layout.sizes, DIM), workers=WORKERS,
                              cache_rows=CACHE_ROWS, device=_cpu(), lr=0.1)  # fmt: skip
    with pytest.raises(InvariantViolation):
        for dec in decisions(train, scheduler, cache_rows=CACHE_ROWS):
            dec = dataclasses.replace(dec, sent_how=dec.sent_how[:0], sent_ids=dec.sent_ids[:0],
                                      sent_w=dec.sent_w[:0])  # fmt: skip
            rows, inverse = cluster.prepare(dec)
            cluster.apply_gradient(torch.ones(*inverse.shape, DIM))
            cluster.finish(dec)


def _first_iteration(kind: str = "naive"):
    train, _ = tiny_split()
    cluster = EmulatedCluster(init_embedding_table(train.layout.sizes, DIM), workers=WORKERS,
                              cache_rows=CACHE_ROWS, device=_cpu(), lr=0.1)  # fmt: skip
    scheduler = create(kind, workers=WORKERS, batch_size=BATCH)
    return cluster, next(iter(decisions(train, scheduler, cache_rows=CACHE_ROWS)))


def test_a_read_of_a_row_its_worker_does_not_hold_is_refused_naming_both() -> None:
    """The first iteration's misses, told as hits: no copy was ever pulled."""
    cluster, dec = _first_iteration()
    hits = dataclasses.replace(dec, touched_kind=np.full_like(dec.touched_kind, Read.HIT))
    row, worker = int(dec.touched_ids[0]), int(dec.touched_w[0])
    with pytest.raises(InvariantViolation,
                       match=f"row {row} read by worker {worker}, which holds no copy"):
        cluster.prepare(hits)


def test_a_direct_transfer_of_a_copy_its_sender_does_not_hold_is_refused() -> None:
    cluster, dec = _first_iteration()
    _, inverse = cluster.prepare(dec)
    cluster.apply_gradient(torch.ones(*inverse.shape, DIM))
    held = set(zip(dec.touched_ids.tolist(), dec.touched_w.tolist()))
    row = next(k for k in range(1000) if (k, 0) not in held)
    direct = dataclasses.replace(dec, sent_ids=np.array([row], np.int32),
                                 sent_w=np.zeros(1, np.int8),
                                 sent_how=np.array([Send.DIRECT], np.int8))  # fmt: skip
    with pytest.raises(InvariantViolation, match=f"row {row} parked by worker 0, which holds"):
        cluster.finish(direct)


def test_bagpipe_prefetches_writes_back_and_all_reduces() -> None:
    outcome = train_tiny("bagpipe", cache_rows=80, lookahead=4)
    c = outcome.counts
    assert outcome.series["prefetch"].sum() > 0 and c.evict_push and c.allreduce and c.flush_push
    assert c.lookups == c.hits + c.miss_pull - int(outcome.series["prefetch"].sum())
    assert outcome.stale_reads == 0


def test_bagpipe_refuses_a_stream_that_skips_a_write_back() -> None:
    train, held_out = tiny_split()
    scheduler = create("bagpipe", workers=WORKERS, batch_size=BATCH, lookahead=4)
    run = _Run(train, held_out, scheduler, 80, DIM, SETTINGS, "strict", replicated_cache=True)
    stream = (dataclasses.replace(dec, sent_how=dec.sent_how[:0], sent_ids=dec.sent_ids[:0],
                                  sent_w=dec.sent_w[:0])
              for dec in decisions(train, scheduler, cache_rows=80))  # fmt: skip
    with pytest.raises(InvariantViolation, match="never sent|missing its latest"):
        run.execute(stream, None)


def _cpu() -> torch.device:
    return torch.device("cpu")


@pytest.mark.parametrize(("kind", "knobs"), [("herald", {}), ("het", {"bound": 5}),
                                             ("fae", {"hot_ratio": 0.2})])  # fmt: skip
def test_torch_row_moves_equal_the_host_kernels(monkeypatch, kind: str, knobs: dict) -> None:
    """The GPU code path (torch index kernels), run on the CPU, trains what the numba one does."""
    from tests.platform.train.test_accuracy import max_difference

    split = tiny_split()
    host = train_tiny(kind, split, **knobs)
    monkeypatch.setattr(executor, "RowStore", functools.partial(RowStore, host_kernels=False))
    torch_path = train_tiny(kind, split, **knobs)
    assert torch_path.counts == host.counts
    assert max_difference(torch_path, host) < 1e-5
