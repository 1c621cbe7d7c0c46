"""The NCCL path: one rank per GPU, the same model as the emulated trainer (skipped without CUDA)."""

from __future__ import annotations

import pytest
import torch

from heraldbench.platform.spec import parse_spec
from heraldbench.platform.training import train_experiment
from tests.platform.distributed._specs import train_spec


@pytest.mark.gpu
def test_nccl_ranks_train_the_emulated_trainers_model():
    workers = min(2, torch.cuda.device_count())
    spec = train_spec(["naive", "herald", "bagpipe"], workers=workers, dtype="float64")
    spec["train"]["device"] = "cuda"
    distributed = train_experiment(parse_spec(spec))
    spec["train"]["backend"] = "emulated"
    emulated = train_experiment(parse_spec(spec))
    for a, b in zip(emulated.runs, distributed.runs, strict=True):
        assert b.measured["backend"] == "nccl"
        assert b.counts == a.counts
        difference = (a.outcome.table - b.outcome.table).abs().max()
        assert float(difference) < 1e-10, a.label
