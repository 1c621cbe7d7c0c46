"""DLRM's dense parts: shapes, presets, seeded initialisation."""

from __future__ import annotations

import math

import pytest
import torch

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.train import (
    DLRM,
    DenseArch,
    InteractionArch,
    OverArch,
    init_embedding_table,
    model_config,
)


def test_arches_have_the_documented_shapes() -> None:
    b, f, d, n = 5, 26, 16, 13
    assert DenseArch(n, (512, 256, 64), d)(torch.rand(b, n)).shape == (b, d)
    features = InteractionArch(f)(torch.rand(b, d), torch.rand(b, f, d))
    assert features.shape == (b, d + (f + 1) * f // 2) == (b, 367)
    assert OverArch(367, (512, 256))(features).shape == (b,)


def test_reference_preset_is_the_dlrm_kaggle_configuration() -> None:
    config = model_config("reference", embedding_dim=16, num_dense=13, num_sparse=26)
    widths = [m.out_features for m in DLRM(config).modules() if isinstance(m, torch.nn.Linear)]
    assert widths == [512, 256, 64, 16, 512, 256, 1]
    assert config.interaction_width == 367


def test_interaction_holds_each_distinct_pair_once() -> None:
    dense, sparse = torch.tensor([[1.0, 0.0]]), torch.tensor([[[2.0, 0.0], [0.0, 3.0]]])
    out = InteractionArch(2)(dense, sparse)
    # dense vector, then <s0,d>, <s1,d>, <s1,s0>
    assert out.tolist() == [[1.0, 0.0, 2.0, 0.0, 0.0]]


def test_model_without_dense_features_uses_a_constant_input() -> None:
    model = DLRM(model_config("small", embedding_dim=4, num_dense=0, num_sparse=3))
    assert model(torch.zeros(6, 0), torch.rand(6, 3, 4)).shape == (6,)


def test_initialisation_is_a_function_of_the_seed() -> None:
    config = model_config("small", embedding_dim=4, num_dense=3, num_sparse=2)
    a, b, c = DLRM(config, seed=1), DLRM(config, seed=1), DLRM(config, seed=2)
    for (_, x), (_, y), (_, z) in zip(a.state_dict().items(), b.state_dict().items(),
                                      c.state_dict().items(), strict=True):  # fmt: skip
        assert torch.equal(x, y) and not torch.equal(x, z)


def test_embedding_table_is_dlrm_uniform_per_table() -> None:
    table = init_embedding_table((4, 100), 8, seed=0)
    assert table.shape == (104, 8)
    assert table[:4].abs().max() <= math.sqrt(1 / 4)
    assert table[4:].abs().max() <= math.sqrt(1 / 100)
    assert torch.equal(table, init_embedding_table((4, 100), 8, seed=0))


def test_unknown_preset_names_the_known_ones() -> None:
    with pytest.raises(SpecError, match="reference, small"):
        model_config("huge", embedding_dim=4, num_dense=1, num_sparse=1)
