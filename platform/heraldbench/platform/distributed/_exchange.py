"""Rows moved between ranks, batched per iteration: one ``all_to_all_single`` per exchange.

Every rank replays the same decision stream, so for a planned exchange (the stream's pulls and
pushes) every rank knows who sends which rows to whom, and only the values travel: the plan is
the metadata (as Herald's scheduler hands its plan to workers and PS). Exchanges whose records
only the sender knows (a flush of pending deltas) send their counts and row ids first.

Bytes are measured as the payload handed to the collective for *other* ranks (a rank's records
to itself are a local copy and move nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist

__all__ = ["Exchange", "Received"]


@dataclass
class Received:
    """What one exchange delivered to this rank.

    Attributes:
        records: indices, into the exchange's records, of the rows received, grouped by sender.
        values: (len(records), D) their values.
    """

    records: np.ndarray
    values: torch.Tensor


class Exchange:
    """Planned and unplanned row exchanges among ``world`` ranks, with byte counters.

    Args:
        rank, world: this rank and the process group's size.
        dim: values per row; dtype, device: of every payload.
    """

    def __init__(self, rank: int, world: int, dim: int, dtype: torch.dtype,
                 device: torch.device) -> None:  # fmt: skip
        self.rank, self.world, self.dim = rank, world, dim
        self.dtype, self.device = dtype, device
        self.row_bytes = dim * torch.empty(0, dtype=dtype).element_size()
        self.sent_bytes = 0
        self.received_bytes = 0
        self.local_rows = 0  # rows a rank moved to itself (no network)

    def planned(self, src: np.ndarray, dst: np.ndarray,
                values_of: Callable[[np.ndarray], torch.Tensor]) -> Received:  # fmt: skip
        """Move row values from ``src[i]`` to ``dst[i]`` for every record i (known to all ranks).

        ``values_of(records)`` gives the (n, D) values this rank sends for ``records`` (indices
        into the records, in the order given). Every rank must call this with the same records.
        """
        mine = np.flatnonzero(src == self.rank)
        mine = mine[np.argsort(dst[mine], kind="stable")]
        theirs = np.flatnonzero(dst == self.rank)
        theirs = theirs[np.argsort(src[theirs], kind="stable")]
        payload = values_of(mine) if mine.size else self.empty(0)
        send = np.bincount(dst[mine], minlength=self.world)
        recv = np.bincount(src[theirs], minlength=self.world)
        if src.size == 0:  # the same on every rank: no collective at all
            return Received(theirs, self.empty(0))
        return Received(theirs, self._all_to_all(payload, send, recv))

    def unplanned(self, dst: np.ndarray, ids: np.ndarray,
                  values: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:  # fmt: skip
        """Send ``values[i]`` of row ``ids[i]`` to rank ``dst[i]``; receivers learn counts and ids
        first. Returns the (ids, values) this rank received. Every rank must call it."""
        order = np.argsort(dst, kind="stable")
        ids, dst = ids[order].astype(np.int64), dst[order]
        send = np.bincount(dst, minlength=self.world)
        counts = torch.from_numpy(send.astype(np.int64)).to(self.device)
        recv_counts = torch.empty_like(counts)
        if self.world > 1:
            dist.all_to_all_single(recv_counts, counts)
        else:
            recv_counts.copy_(counts)
        recv = recv_counts.cpu().numpy()
        got_ids = torch.empty(int(recv.sum()), dtype=torch.int64, device=self.device)
        sent_ids = torch.from_numpy(ids).to(self.device)
        if self.world > 1:
            dist.all_to_all_single(got_ids, sent_ids, recv.tolist(), send.tolist())
        else:
            got_ids.copy_(sent_ids)
        payload = values[torch.from_numpy(order).to(values.device)] if len(order) else values
        got = self._all_to_all(payload.to(self.device, self.dtype), send, recv)
        return got_ids.cpu().numpy(), got

    def _all_to_all(self, payload: torch.Tensor, send: np.ndarray,
                    recv: np.ndarray) -> torch.Tensor:  # fmt: skip
        out = self.empty(int(recv.sum()))
        if self.world == 1:
            out.copy_(payload)
        else:
            dist.all_to_all_single(out, payload.contiguous(), recv.tolist(), send.tolist())
        self.sent_bytes += int(send.sum() - send[self.rank]) * self.row_bytes
        self.received_bytes += int(recv.sum() - recv[self.rank]) * self.row_bytes
        self.local_rows += int(send[self.rank])
        return out

    def empty(self, rows: int) -> torch.Tensor:
        """An uninitialised (rows, D) payload."""
        return torch.empty(rows, self.dim, dtype=self.dtype, device=self.device)
