"""A placement trained by one gloo process per rank, started by the distributed trainer's
launcher: the same model and bytes as the plain training and the accounting."""

from __future__ import annotations

import pytest
import torch

from heraldbench.platform.distributed.sharded import train_placement
from tests.platform.distributed.sharded._made import (
    BATCH,
    max_difference,
    placement,
    plain,
    split,
)
from tests.platform.distributed.sharded.test_training import assert_counted_bytes
from tests.platform.train._tiny import DIM, SETTINGS


@pytest.mark.parametrize("kind", [
    "row-wise", "flexshard",
    *(pytest.param(k, marks=pytest.mark.slow) for k in ("table-wise", "table-row-wise",
                                                         "column-wise", "data-parallel",
                                                         "recshard")),
])
def test_processes_on_two_hosts_of_two_ranks_train_the_plain_model(kind) -> None:
    train, held_out = split()
    outcome = train_placement(train, held_out, placement(kind), SETTINGS, batch_size=BATCH,
                              embedding_dim=DIM, dtype=torch.float64, backend="gloo",
                              timeout_s=120)
    assert outcome.iterations == plain().iterations
    assert max_difference(outcome, plain()) < 1e-12
    assert outcome.replicas_identical
    assert_counted_bytes(outcome, kind)
    assert (outcome.measured["dense_allreduce_bytes"] > 0).all()
