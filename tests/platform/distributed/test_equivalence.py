"""The distributed trainer trains the emulated trainer's model, moving the stream's rows.

Real ``torch.distributed`` process groups (gloo, one process per rank) on loopback.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from heraldbench.platform.spec import parse_spec
from heraldbench.platform.training import train_experiment
from tests.platform.distributed._specs import train_spec

KINDS = ["naive", "herald", "herald-plus", "bagpipe"]


def _both(kinds: list[str], **train):
    emulated = train_experiment(parse_spec(train_spec(kinds, backend="emulated", **train)))
    distributed = train_experiment(parse_spec(train_spec(kinds, **train)))
    return emulated.runs, distributed.runs


def _max_difference(a, b) -> float:
    left, right = a.outcome.model.state_dict(), b.outcome.model.state_dict()
    dense = max(float((left[k] - right[k]).abs().max()) for k in left)
    return max(dense, float((a.outcome.table - b.outcome.table).abs().max()))


@pytest.fixture(scope="module")
def float64_runs():
    return _both(KINDS, dtype="float64", eval_interval=25)


def test_parameters_equal_the_emulated_trainers_in_float64(float64_runs):
    for emulated, distributed in zip(*float64_runs, strict=True):
        assert distributed.outcome.table.dtype == torch.float64
        assert _max_difference(emulated, distributed) < 1e-12, emulated.label
        assert distributed.series["loss"] == pytest.approx(emulated.series["loss"], abs=1e-12)
        assert [e["auc"] for e in distributed.evaluations] == pytest.approx(
            [e["auc"] for e in emulated.evaluations], abs=1e-12
        )


def test_counts_equal_the_emulated_trainers(float64_runs):
    for emulated, distributed in zip(*float64_runs, strict=True):
        assert distributed.counts == emulated.counts, emulated.label
        for name in ("miss_pull", "update_pull", "evict_push", "update_push", "hits"):
            np.testing.assert_array_equal(distributed.series[name], emulated.series[name])


def test_bytes_moved_are_the_streams_rows(float64_runs):
    """Every row the stream moves crosses the network or stays on its owner; nothing else."""
    for run in float64_runs[1]:
        moved = run.measured["bytes"]
        assert moved["row_bytes"] == 8 * 8  # dim 8, float64
        assert moved["network"] > 0
        assert moved["network"] + moved["local"] == moved["stream"], run.label


def test_measured_time_per_phase_and_rank(float64_runs):
    for run in float64_runs[1]:
        measured = run.measured
        assert measured["ranks"] == 2 and [r["rank"] for r in measured["per_rank"]] == [0, 1]
        assert measured["seconds"]["compute"] > 0 and measured["seconds"]["pull"] > 0
        assert measured["samples_per_second"] > 0
        per_iteration = run.series["measured_compute_s"]
        assert len(per_iteration) == run.iterations and (per_iteration > 0).all()
        assert sum(measured["seconds"].values()) <= run.timing["train"] * 1.05


@pytest.mark.slow
def test_every_scheduler_on_three_workers_and_a_dedicated_ps_rank():
    kinds = ["naive", "herald", "herald-plus", "het", "fae", "bagpipe"]
    spec = train_spec(kinds, workers=3, dtype="float64", distributed={"ps_ranks": 1})
    emulated = train_experiment(parse_spec({**spec, "train": {**spec["train"],
                                                              "backend": "emulated"}}))
    distributed = train_experiment(parse_spec(spec))
    for a, b in zip(emulated.runs, distributed.runs, strict=True):
        assert b.counts == a.counts, a.label
        assert _max_difference(a, b) < 1e-12, a.label
        assert b.measured["ranks"] == 4
        assert [r["role"] for r in b.measured["per_rank"]] == ["worker"] * 3 + ["ps"]


def test_the_scheduler_replayed_inline_trains_the_same_model_as_ahead(float64_runs):
    """``schedule: ahead`` (the default here: a small stream) only moves the replay before the
    clock; ``inline`` replays during training. Same decisions, same model, bit for bit."""
    kinds = ["naive", "bagpipe"]
    inline = train_experiment(parse_spec(train_spec(
        kinds, dtype="float64", eval_interval=25, distributed={"schedule": "inline"}))).runs
    ahead = [run for run in float64_runs[1] if run.scheduler in kinds]
    for a, b in zip(ahead, inline, strict=True):
        assert (a.measured["schedule_mode"], b.measured["schedule_mode"]) == ("ahead", "inline")
        assert _max_difference(a, b) == 0.0 and a.counts == b.counts, a.label
        # Ahead, the training loop only hands the decisions out.
        assert a.measured["seconds"]["schedule"] < b.measured["seconds"]["schedule"]


def test_auto_replays_ahead_only_when_the_stream_fits_the_budget(monkeypatch):
    from heraldbench.platform.distributed import _driver
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.sim import decisions

    trace = parse_spec(train_spec(["naive"])).dataset.open()
    one = next(decisions(trace, create("naive", workers=2, batch_size=32, seed=0), cache_rows=1024))
    size = _driver.decision_bytes(one)
    assert size > one.batch.ids.nbytes + one.touched_ids.nbytes
    monkeypatch.setattr(_driver, "AHEAD_BUDGET_BYTES", size * 10)
    assert _driver.schedule_mode("auto", one, 10) == "ahead"
    assert _driver.schedule_mode("auto", one, 11) == "inline"
    assert _driver.schedule_mode("ahead", one, 10**9) == "ahead"
    assert _driver.schedule_mode("inline", one, 1) == "inline"


def test_direct_transfers_go_worker_to_worker_not_through_the_ps():
    """herald-plus parks a dirty row at its writer and hands it to its next reader: with a
    dedicated PS rank, the PS receives exactly the pushes and the flush (a direct transfer that
    went through the owner would add its rows there), and the model is the emulated one."""
    spec = train_spec(["herald-plus"], dtype="float64", distributed={"ps_ranks": 1})
    emulated = _plus(train_experiment(parse_spec({**spec, "train": {**spec["train"],
                                                                    "backend": "emulated"}})))
    run = _plus(train_experiment(parse_spec(spec)))
    counts, moved = run.counts, run.measured["bytes"]
    assert run.series["direct"].sum() > 0
    ps = next(r for r in run.measured["per_rank"] if r["role"] == "ps")
    pushed = counts.evict_push + counts.update_push + counts.flush_push
    assert ps["received_bytes"] == pushed * moved["row_bytes"]
    assert moved["network"] + moved["local"] == moved["stream"]
    assert moved["stream"] == _counted_rows(run) * moved["row_bytes"]
    assert run.counts == emulated.counts
    assert _max_difference(emulated, run) < 1e-12


def test_optimistic_consistency_hands_over_only_a_rows_only_dirty_copy():
    """Under optimistic consistency co-writers' copies go to the PS (each lacks the others'
    updates); a row with one dirty copy is handed over as under strict consistency. Each delta
    travels once: the bytes are the counted rows plus one per direct transfer, and both
    trainers train the same model."""
    specs = ({**train_spec(["herald-plus"], backend=backend, workers=3, dtype="float64"),
              "consistency": "optimistic"} for backend in ("emulated", "distributed"))
    emulated, distributed = (_plus(train_experiment(parse_spec(spec))) for spec in specs)
    assert emulated.series["direct"].sum() > 0
    moved = distributed.measured["bytes"]
    assert moved["network"] + moved["local"] == moved["stream"]
    assert moved["stream"] == _counted_rows(distributed) * moved["row_bytes"]
    assert _max_difference(emulated, distributed) < 1e-12


def _counted_rows(run) -> int:
    """Rows the counts price: pulls, pushes, the flush, and one per direct transfer (its delta;
    its value is the reader's pull)."""
    c = run.counts
    moved = c.miss_pull + c.update_pull + c.evict_push + c.update_push + c.flush_push
    return int(moved + run.series["direct"].sum())


def _plus(experiment):
    """The herald-plus run of an experiment (naive runs beside it as the baseline)."""
    return next(run for run in experiment.runs if run.scheduler == "herald-plus")


@pytest.mark.parametrize("lengths", ["fixed", "ragged"])
def test_many_ids_a_table_train_the_emulated_trainers_model_in_float64(lengths):
    """Multi-hot and sequence tables, of fixed or ragged lengths: every id's row crosses the
    process group, and the model pools them, as the emulated trainer does."""
    ragged = lengths == "ragged"

    def spec(backend: str):
        data = train_spec(["naive", "herald"], backend=backend, dtype="float64")
        data["dataset"]["features"] = {
            "multi_hot": {"sizes": {"C1": 3, "C21": 5}, "pooling": "mean",
                          "lengths": "uniform" if ragged else "fixed"},
            "sequence": {"user": "C3", "item": "C4", "length": 3, "min_length": 1 if ragged else 3}}
        data["cache"] = {"ratio": 0.2}
        return parse_spec(data)

    emulated = train_experiment(spec("emulated")).runs
    distributed = train_experiment(spec("distributed")).runs
    for e, d in zip(emulated, distributed, strict=True):
        assert d.outcome.iterations == e.outcome.iterations > 0
        assert _max_difference(e, d) < 1e-12, e.label
        assert d.outcome.counts == e.outcome.counts, e.label  # accesses: the ids read, no pad


@pytest.mark.parametrize(("workers", "lookahead"), [(2, 4), (3, 1)])
def test_bagpipe_s_no_sync_rows_are_written_back_by_their_one_writer(workers, lookahead):
    """A row read once in its batch and not again in the window is not all-reduced: its one
    reader's replica alone is current, and that reader writes it back at its eviction (a short
    window evicts thousands, many by workers other than 0; with a window of 1, rows are evicted
    and read again as no-sync in one iteration, and staged rows are released) and at the
    flush."""
    from heraldbench.platform.contract import Send
    from heraldbench.platform.schedulers import create
    from heraldbench.platform.sim import decisions

    def spec(backend: str):
        data = train_spec(["bagpipe"], backend=backend, dtype="float64", workers=workers)
        data["schedulers"] = [{"kind": "bagpipe", "lookahead": lookahead}]
        return parse_spec(data)

    parsed = spec("emulated")
    trace = parsed.dataset.open()
    stream = decisions(trace, create("bagpipe", workers=workers, batch_size=32, seed=0,
                                     lookahead=lookahead),
                       cache_rows=int(0.05 * trace.layout.total_rows))
    senders = np.concatenate([d.sent_w[d.sent_how == Send.EVICT] for d in stream])
    assert (senders > 0).sum() > 1_000  # the case this test is for: not replica 0's

    def bagpipe(backend: str):
        return next(r for r in train_experiment(spec(backend)).runs if r.scheduler == "bagpipe")

    emulated, distributed = bagpipe("emulated"), bagpipe("distributed")
    assert _max_difference(emulated, distributed) < 1e-12
    assert distributed.counts == emulated.counts
    # all-reduced: each iteration's dense gradients and loss, and the stream's synced rows only
    dense = sum(p.numel() for p in distributed.outcome.model.parameters()) + 1
    rows = distributed.measured["bytes"]["allreduce_payload"] \
        - distributed.outcome.iterations * dense * 8
    ring = 2 * (workers - 1)  # ``allreduce`` counts each synced row 2(W-1) times
    assert ring * rows == distributed.counts.allreduce * distributed.measured["bytes"]["row_bytes"]
