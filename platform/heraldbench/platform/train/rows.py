"""The rows themselves: the PS table, the cache slots and their pending deltas, and the bulk moves
between them.

Two implementations of each move, same arithmetic: torch index kernels when the caches are on a
GPU, and one numba pass each when they are host memory too (device ``cpu``), where a chain of
gathers, adds and scatters would cost several passes and the model's threads.

The PS table sits beside the caches: in host memory with them, on the GPU with them. Where it
lives changes no count and no value (the emulation prices no transfer: the time model does); on
a GPU it spares every iteration a host gather, a copy each way and the synchronisation of reading
deltas back, which cost more than the model's own compute at large batches.

Public: the distributed trainer (:mod:`heraldbench.platform.distributed`) sums its rows'
gradients with :func:`reduce_rows` as the emulated one does.
"""

from __future__ import annotations

import numpy as np
import torch

from heraldbench.platform.train._kernels import load_rows, scatter_add_rows, sgd_rows, write_back
from heraldbench.platform.train.runtime import to_device

__all__ = ["RowStore", "index_tensor"]


def index_tensor(values: np.ndarray, device: torch.device) -> torch.Tensor:
    """int64 index tensor on ``device`` (copied to a GPU without waiting: :func:`to_device`)."""
    return to_device(np.asarray(values, dtype=np.int64), device)


class RowStore:
    """The PS table, (R, D), and S cache slots with their deltas, (S, D), all on ``device``.

    Args:
        table: the initial table; its dtype is every row's.
        slots: S, cache slots of all workers together.
        device: where the slots live.
        host_kernels: use the numba kernels (default: when ``device`` is the CPU); False runs
            the torch path on any device (tests use it to check the GPU path on a CPU).
    """

    def __init__(self, table: torch.Tensor, slots: int, device: torch.device,
                 host_kernels: bool | None = None):  # fmt: skip
        self.device = device
        #: the PS, (R, D): updated in place, never replaced
        self.table = table.detach().to(device, copy=True).contiguous()
        dim = self.table.shape[1]
        self.cache = torch.zeros(slots, dim, device=device, dtype=table.dtype)
        self.delta = torch.zeros_like(self.cache)
        self.host = device.type == "cpu" if host_kernels is None else host_kernels
        if self.host:  # numpy views of the same memory, for the numba kernels
            self._ps = self.table.numpy()
            self._cache, self._delta = self.cache.numpy(), self.delta.numpy()
            self._buffer = np.zeros((0, dim), self._ps.dtype)

    def load(self, slots: np.ndarray, rows: np.ndarray, keep_delta: bool) -> None:
        """Pull: ``cache[slots] = PS[rows] (+ delta[slots])``."""
        if self.host:
            load_rows(self._cache, self._delta, slots, self._ps, rows, keep_delta)
            return
        index = index_tensor(slots, self.device)
        fresh = self.table.index_select(0, index_tensor(rows, self.device))
        if keep_delta:
            fresh += self.delta.index_select(0, index)
        self.cache.index_copy_(0, index, fresh)

    def write_back(self, slots: np.ndarray, rows: np.ndarray) -> None:
        """Push: ``PS[rows] += delta[slots]`` (repeated rows add up), then ``delta[slots] = 0``."""
        if self.host:
            write_back(self._ps, rows, self._delta, slots)
            return
        index = index_tensor(slots, self.device)
        self.add_rows(rows, self.delta.index_select(0, index))
        self.delta.index_fill_(0, index, 0.0)

    def add_rows(self, rows: np.ndarray, values: torch.Tensor,
                 table: torch.Tensor | None = None) -> None:  # fmt: skip
        """``table[rows] += values``, repeated rows adding up; ``table`` is the PS by default."""
        table = self.table if table is None else table
        if self.host:
            scatter_add_rows(table.numpy(), rows, values.cpu().numpy())
            return
        table.index_add_(0, index_tensor(rows, table.device), values.to(table.device))

    def ps_rows(self, rows: np.ndarray) -> torch.Tensor:
        """(len(rows), D) values the PS holds for ``rows``."""
        return self.table.index_select(0, index_tensor(rows, self.device))

    def set_ps_rows(self, rows: np.ndarray, values: torch.Tensor) -> None:
        """``PS[rows] = values`` (distinct rows)."""
        self.table.index_copy_(0, index_tensor(rows, self.device), values.to(self.device))

    def read(self, slots: np.ndarray) -> torch.Tensor:
        """(U, D) values of ``slots``."""
        return self.cache.index_select(0, index_tensor(slots, self.device))

    def sgd(self, slots: np.ndarray, inverse: torch.Tensor, sample_grad: torch.Tensor,
            lr: float) -> None:  # fmt: skip
        """``cache -= lr·g`` and ``delta -= lr·g`` for each read slot, g summed over the batch.

        Args:
            slots: (U,) the slots read.
            inverse: (B, F) position of each sample's field in ``slots``.
            sample_grad: (B, F, D) gradient with respect to each sample's embeddings.
        """
        dim = sample_grad.shape[-1]
        flat = sample_grad.reshape(-1, dim)
        if self.host:
            if self._buffer.shape[0] < slots.size:
                self._buffer = np.zeros((2 * slots.size, dim), self._ps.dtype)
            grad = flat.detach().contiguous().numpy()
            buffer = self._buffer[: slots.size]
            sgd_rows(self._cache, self._delta, slots, inverse.view(-1).numpy(), grad, lr, buffer)
            return
        grad = reduce_rows(inverse, flat, slots.size)
        index = index_tensor(slots, self.device)
        self.cache.index_add_(0, index, grad, alpha=-lr)
        self.delta.index_add_(0, index, grad, alpha=-lr)

    def with_pending(self, slots: np.ndarray, rows: np.ndarray) -> torch.Tensor:
        """A copy of the PS with ``delta[slots]`` added at ``rows`` (what a flush would leave)."""
        table = self.table.clone()
        if slots.size:
            self.add_rows(rows, self.delta.index_select(0, index_tensor(slots, self.device)), table)
        return table


def reduce_rows(inverse: torch.Tensor, flat_grad: torch.Tensor, count: int) -> torch.Tensor:
    """(count, D) sums of the (B·F, D) per-sample gradients over equal ``inverse`` entries."""
    grad = torch.zeros(count, flat_grad.shape[1], dtype=flat_grad.dtype, device=flat_grad.device)
    return grad.index_add_(0, inverse.view(-1), flat_grad)
