"""DLRM's dense parts, split as TorchRec splits them (``DenseArch``, ``InteractionArch``, ``OverArch``).

The embedding rows are *not* in the module: the executor owns them (a PS table in host memory and
every worker's cache on the device) and feeds the looked-up vectors in. The module holds the
bottom MLP (:class:`DenseArch`), the pairwise dot interaction (:class:`InteractionArch`) and the
top MLP (:class:`OverArch`). Shape symbols: B samples, F sparse fields, D embedding dim, N dense
features.

Presets (DLRM's published configurations): ``reference`` is the DLRM Criteo Kaggle configuration,
bottom N-512-256-64-D and top 512-256-1 (D = 16 in the reference: set ``embedding_dim: 16``);
``small`` is a few-thousand-parameter model for tests.

Example::

    config = model_config("small", embedding_dim=8, num_dense=13, num_sparse=26)
    model = DLRM(config, seed=0)
    logits = model(torch.rand(4, 13), torch.rand(4, 26, 8))  # (B,) = (4,)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.train.runtime import to_device

__all__ = [
    "DLRM",
    "PRESETS",
    "DenseArch",
    "InteractionArch",
    "ModelConfig",
    "OverArch",
    "init_embedding_table",
    "model_config",
    "trace_model_config",
]

#: Hidden widths (bottom, top) per preset; the bottom MLP ends at D, the top MLP at 1 logit.
PRESETS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "reference": ((512, 256, 64), (512, 256)),
    "small": ((32, 16), (32, 16)),
}


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of a DLRM.

    Attributes:
        embedding_dim: D, the width of every embedding row and of the bottom MLP's output.
        num_dense: N, dense features of a sample. A trace without dense features feeds one
            constant feature, so the bottom MLP learns a bias vector that the interaction pairs
            with every embedding (first-order terms).
        num_sparse: F, categorical fields (one pooled embedding vector each).
        bottom: hidden widths of the bottom MLP (its output is D).
        top: hidden widths of the top MLP (its output is one logit).
        column_tables: with multi-hot or sequence features, the field of each of a sample's
            ids (their rows are pooled into F vectors); () when every field has one id.
        field_scales: per field, the factor of its pooled sum: 1 (sum) or 1 / ids (mean).
    """

    embedding_dim: int
    num_dense: int
    num_sparse: int
    bottom: tuple[int, ...]
    top: tuple[int, ...]
    column_tables: tuple[int, ...] = ()
    field_scales: tuple[float, ...] = ()

    @property
    def dense_inputs(self) -> int:
        return max(1, self.num_dense)

    @property
    def interaction_width(self) -> int:
        """D + (F+1)F/2: the dense vector plus the dot of every distinct pair of F+1 vectors."""
        vectors = self.num_sparse + 1
        return self.embedding_dim + vectors * (vectors - 1) // 2


def model_config(preset: str, *, embedding_dim: int, num_dense: int,
                 num_sparse: int) -> ModelConfig:  # fmt: skip
    """The :class:`ModelConfig` of a named preset for a dataset's shape."""
    if preset not in PRESETS:
        raise SpecError(f"unknown model preset {preset!r}; known: {', '.join(sorted(PRESETS))}")
    bottom, top = PRESETS[preset]
    return ModelConfig(embedding_dim, num_dense, num_sparse, bottom, top)


def trace_model_config(preset: str, *, embedding_dim: int, trace) -> ModelConfig:
    """The preset's :class:`ModelConfig` for ``trace``: one field per table, a table's ids pooled
    by its layout's rule. A sequence is pooled by the mean of its items' rows (this project's
    choice: the simplest history encoder; attention over the history is not modelled)."""
    config = model_config(preset, embedding_dim=embedding_dim, num_dense=trace.num_dense,
                          num_sparse=trace.layout.num_tables)
    layout = trace.layout
    if layout.one_hot:
        return config
    scales = tuple(1.0 if pooling == "sum" else 1.0 / width
                   for pooling, width in zip(layout.table_poolings, layout.table_widths,
                                             strict=True))
    return replace(config, column_tables=tuple(int(t) for t in layout.column_tables),
                   field_scales=scales)


class FieldPooling(nn.Module):
    """A sample's ids' rows, (B, C, D), pooled into one vector per field, (B, F, D).

    With a ragged layout's lengths, (B, F), a sample's pads (the columns past a field's length)
    add nothing, and a mean is over the ids the sample reads."""

    def __init__(self, column_tables: tuple[int, ...], field_scales: tuple[float, ...]):
        super().__init__()
        columns = torch.tensor(column_tables)
        starts = torch.searchsorted(columns, columns)  # each column's table's first column
        self.register_buffer("columns", columns, persistent=False)
        self.register_buffer("slots", torch.arange(len(column_tables)) - starts,
                             persistent=False)
        # float64, so that a float64 mean divides by the exact width (as by a ragged length)
        self.register_buffer("scales", torch.tensor(field_scales, dtype=torch.float64)
                             .view(1, -1, 1), persistent=False)

    def forward(self, rows: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        fields = self.scales.shape[1]
        if lengths is not None:
            real = self.slots.unsqueeze(0) < lengths[:, self.columns]  # (B, C)
            rows = rows * real.unsqueeze(2).to(rows.dtype)
        pooled = rows.new_zeros(rows.shape[0], fields, rows.shape[2])
        return self.scale(pooled.index_add(1, self.columns, rows), lengths)

    def scale(self, sums: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, F, D) sums of each field's rows to its pooled vectors (sum or mean): the one
        pooling rule, for a placement's reader too, which receives partial sums already added.
        A mean divides by the field's width, or by the sample's length where ``lengths`` say."""
        scales = self.scales.to(sums.dtype)
        if lengths is None:
            return sums * scales
        means = scales != 1
        per_sample = torch.where(means[..., 0], 1.0 / lengths.to(sums.dtype), 1.0)
        return sums * per_sample.unsqueeze(2)


def _mlp(widths: list[int], relu_last: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
        layers.append(nn.Linear(fan_in, fan_out))
        if relu_last or i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DenseArch(nn.Module):
    """The bottom MLP: dense features to one D-vector, ReLU after every layer (as DLRM's).

    Args:
        in_features: N.
        hidden: hidden widths.
        out_features: D.

    Example::

        DenseArch(13, (512, 256, 64), 16)(torch.rand(B, 13))  # (B, 16)
    """

    def __init__(self, in_features: int, hidden: tuple[int, ...], out_features: int):
        super().__init__()
        self.mlp = _mlp([in_features, *hidden, out_features], relu_last=True)

    def forward(self, dense: torch.Tensor) -> torch.Tensor:
        """(B, N) -> (B, D)."""
        return self.mlp(dense)


class InteractionArch(nn.Module):
    """DLRM's dot interaction: the dense vector and every pairwise dot of the F+1 vectors.

    Args:
        num_sparse: F.

    Example::

        InteractionArch(26)(torch.rand(B, 16), torch.rand(B, 26, 16))  # (B, 16 + 351)
    """

    def __init__(self, num_sparse: int):
        super().__init__()
        rows, cols = torch.tril_indices(num_sparse + 1, num_sparse + 1, offset=-1)
        self.register_buffer("rows", rows, persistent=False)
        self.register_buffer("cols", cols, persistent=False)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        """(B, D) and (B, F, D) -> (B, D + (F+1)F/2)."""
        vectors = torch.cat([dense.unsqueeze(1), sparse], dim=1)  # (B, F+1, D)
        dots = torch.bmm(vectors, vectors.transpose(1, 2))  # (B, F+1, F+1)
        return torch.cat([dense, dots[:, self.rows, self.cols]], dim=1)


class OverArch(nn.Module):
    """The top MLP: interaction features to one click logit (the sigmoid is in the loss).

    Args:
        in_features: D + (F+1)F/2.
        hidden: hidden widths.

    Example::

        OverArch(367, (512, 256))(torch.rand(B, 367))  # (B,)
    """

    def __init__(self, in_features: int, hidden: tuple[int, ...]):
        super().__init__()
        self.mlp = _mlp([in_features, *hidden, 1], relu_last=False)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """(B, D + (F+1)F/2) -> (B,)."""
        return self.mlp(features).squeeze(1)


class DLRM(nn.Module):
    """Bottom MLP, dot interaction, top MLP; embeddings come in already looked up.

    Args:
        config: the sizes.
        seed: seed of the initial weights (DLRM's: normal with std sqrt(2 / (fan_in + fan_out))
            for weights, sqrt(1 / fan_out) for biases), independent of the global RNG.

    Example::

        DLRM(config)(torch.rand(B, N), torch.rand(B, F, D))  # (B,) logits
    """

    def __init__(self, config: ModelConfig, seed: int = 0):
        super().__init__()
        self.config = config
        self.dense_arch = DenseArch(config.dense_inputs, config.bottom, config.embedding_dim)
        self.interaction = InteractionArch(config.num_sparse)
        self.over_arch = OverArch(config.interaction_width, config.top)
        self.pooling = (FieldPooling(config.column_tables, config.field_scales)
                        if config.column_tables else None)
        self._init_weights(seed)

    def _init_weights(self, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for layer in self.modules():
                if isinstance(layer, nn.Linear):
                    fan_out, fan_in = layer.weight.shape
                    std = math.sqrt(2.0 / (fan_in + fan_out))
                    layer.weight.normal_(0.0, std, generator=generator)
                    layer.bias.normal_(0.0, math.sqrt(1.0 / fan_out), generator=generator)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor,
                lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, N) dense features and (B, F, D) embeddings -> (B,) logits (with multi-hot or
        sequence fields, (B, C, D): every id's row, pooled here; with ragged fields, their (B, F)
        ``lengths`` too).

        With N = 0 pass a (B, 0) tensor: it is replaced by a constant feature of ones.
        """
        if self.pooling is not None:
            sparse = self.pooling(sparse, lengths)
        return self.forward_pooled(dense, sparse)

    def forward_pooled(self, dense: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        """(B, N) dense features and (B, F, D) pooled vectors, one per field -> (B,) logits."""
        if dense.shape[1] == 0:
            dense = torch.ones(dense.shape[0], 1, dtype=pooled.dtype, device=pooled.device)
        return self.over_arch(self.interaction(self.dense_arch(dense), pooled))

    def pool_sums(self, sums: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, F, D) sums of each field's rows, pooled by the fields' rule (:class:`FieldPooling`)."""
        return sums if self.pooling is None else self.pooling.scale(sums, lengths)


def batch_lengths(lengths: np.ndarray | None, device: torch.device | str) -> torch.Tensor | None:
    """A ragged batch's (B, F) lengths (``SampleChunk.lengths``) as :meth:`DLRM.forward` takes
    them; None for any other batch."""
    if lengths is None:
        return None
    return to_device(np.asarray(lengths, np.int64), torch.device(device))


def init_embedding_table(sizes: tuple[int, ...], dim: int, seed: int = 0) -> torch.Tensor:
    """The initial global table, (sum of sizes, D) float32 on the CPU.

    DLRM's initialisation: table f uniform in ±sqrt(1 / rows_f), tables stacked in field order
    (global row id = table offset + local id). Seeded independently of the model's weights.
    """
    generator = torch.Generator().manual_seed(seed + 0x5EED)
    parts = []
    for rows in sizes:
        bound = math.sqrt(1.0 / rows)
        part = torch.empty(rows, dim)
        part.uniform_(-bound, bound, generator=generator)
        parts.append(part)
    return torch.cat(parts)
