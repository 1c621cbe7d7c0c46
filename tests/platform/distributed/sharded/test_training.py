"""Every placement, carried out by ranks emulated as threads, trains the plain model (float64,
within 1e-12), keeps its replicas identical, and moves exactly the bytes the accounting counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from heraldbench.platform.distributed.sharded import train_placement
from heraldbench.platform.placements import Scope, account
from heraldbench.platform.placements.stats import jagged_batches
from heraldbench.platform.spec import TrainSpec
from tests.platform.distributed.sharded._made import (
    BATCH,
    KINDS,
    TOPOLOGY,
    max_difference,
    placement,
    plain,
    split,
)
from tests.platform.train._tiny import DIM, SETTINGS


def _train(kind: str, settings: TrainSpec = SETTINGS):
    train, held_out = split()
    return train_placement(train, held_out, placement(kind), settings, batch_size=BATCH,
                           embedding_dim=DIM, dtype=torch.float64)


def _counted(kind: str, iterations: int):
    train, _ = split()
    first = itertools.islice(jagged_batches(train, BATCH * TOPOLOGY.devices * iterations), 1)
    return account(placement(kind), first, BATCH)


def assert_counted_bytes(outcome, kind: str) -> None:
    """Forward and backward bytes per device and tier, and ids sent, equal the accounting's;
    the replicas' all-reduce per tier over all devices (a ring's chunks split a payload into
    whole values, so one device's share may differ from the model's even split)."""
    counted = _counted(kind, outcome.iterations)
    assert counted.iterations == outcome.iterations
    for phase in ("forward", "backward"):
        np.testing.assert_array_equal(outcome.measured[phase], getattr(counted, phase))
    np.testing.assert_allclose(outcome.measured["sync"].sum(0), counted.sync.sum(0), rtol=1e-12)
    np.testing.assert_array_equal(outcome.measured["ids_sent"], counted.ids_sent)


@pytest.mark.parametrize("kind", KINDS)
def test_every_placement_trains_the_plain_model_and_moves_the_counted_bytes(kind) -> None:
    outcome = _train(kind)
    reference = plain()
    assert outcome.iterations == reference.iterations >= 30
    assert max_difference(outcome, reference) < 1e-12
    np.testing.assert_allclose(outcome.losses, reference.losses, rtol=0, atol=1e-12)
    assert outcome.replicas_identical
    assert not outcome.table.isnan().any()  # every row gathered from a holder
    assert abs(outcome.final.auc - reference.final.auc) < 1e-9
    assert_counted_bytes(outcome, kind)


def test_the_made_placements_exercise_every_path() -> None:
    """Replicas on every host and every device (flexshard), column shards of two widths on
    different devices (column-wise), partial sums across hosts (row-wise): the equalities
    above are not vacuous."""
    scopes = np.concatenate([s.scope for t in placement("flexshard").tables for s in t.shards])
    assert {Scope.DEVICE, Scope.PER_HOST, Scope.EVERY_DEVICE} <= set(scopes.tolist())
    shards = placement("column-wise").tables[0].shards
    assert [s.width for s in shards] == [3, 1] and shards[0].owner[0] != shards[1].owner[0]
    outcome = _train("flexshard")
    assert (outcome.measured["sync"] > 0).all() and (outcome.measured["forward"][:, 1] > 0).any()


def test_a_rank_holds_only_its_rows() -> None:
    """Row-wise: each device's rows are its block; a rank asked for another's fails loudly."""
    from heraldbench.platform.distributed.sharded._routes import shard_slots
    from heraldbench.platform.distributed.sharded._rows import HeldRows

    plan = placement("row-wise")
    table = torch.zeros(sum(t.table.rows for t in plan.tables), DIM)
    offsets = np.concatenate([[0], np.cumsum([t.table.rows for t in plan.tables])[:-1]])
    held = HeldRows(plan, 1, shard_slots(plan), table, offsets)
    rows = plan.tables[0].table.rows
    block = -(-rows // TOPOLOGY.devices)
    assert held.rows[0].tolist() == list(range(block, min(2 * block, rows)))
    with pytest.raises(AssertionError, match="does not hold"):
        held.positions(0, np.asarray([0]))


def test_max_iterations_stops_early_and_counts_alike() -> None:
    outcome = _train("table-row-wise", SETTINGS.model_copy(update={"max_iterations": 5}))
    assert outcome.iterations == 5 and outcome.samples_trained == 5 * BATCH * TOPOLOGY.devices
    assert_counted_bytes(outcome, "table-row-wise")
