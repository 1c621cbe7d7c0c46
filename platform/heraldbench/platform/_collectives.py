"""Communication of the distributed trainer, on a measured profile (``heraldbench profile-cluster``).

A named profile models a worker talking to a remote parameter server; a measured profile
(:class:`Collectives`) models what :mod:`heraldbench.platform.distributed` actually does each
iteration, with the costs ``profile-cluster`` fitted on the same collectives. Its assumptions:

* **Rounds.** One ``all_to_all_single`` for the evict pushes (when the iteration evicts), one for
  the pulls (when it pulls), one for the update pushes (when it sends any), and one all-reduce
  **every** iteration: the dense gradients and the loss travel even when no row does (the named
  profiles charge no dense all-reduce). Each round costs its fitted latency. A direct transfer
  sends nothing when it is decided; its delta is handed over, writer to reader, in the reader's
  pull round (charged in the iteration that decides it, and always remote).
* **Bytes.** Each worker carries an even 1/W share of the rows moved (as the named profiles).
  With the PS sharded over the workers (``ps_colocated``) a worker owns 1/W of the rows, so only
  (W−1)/W of its share crosses the network; the rest is a local copy, charged nothing. A row is
  dim × ``bytes_per_value`` bytes (the trainer's dtype: 4 for float32, 8 for float64).
* **All-reduce payload** = the model's dense gradients + loss (``dense_allreduce_bytes``,
  measured on the model) + the replicated rows' gradients. The simulator counts the latter as
  ring-weighted row-transfers, 2(W−1) × rows summed over workers; the payload is those rows.
  Its time is the all-reduce fit at that payload (the ring's steps are inside the fit).
* **Replicated rows cost compute**: every replica scatters its gradients of the rows whose
  gradients are all-reduced into the payload and applies the update to every such row it holds
  (BagPipe's replicated cache, FAE's hot batches): ``replicated_us`` per iteration with such rows
  plus ``replicated_us_per_row`` per distinct row, measured by ``profile-cluster``.
* **HET's version checks** ride in the pull round, :data:`VERSION_CHECK_BYTES` each (the trainer
  replays the stream and sends none; kept so the model stays the one of the named profiles).

The rule for version checks (their bytes, their round) lives here for both models; the named
profiles' model (:mod:`~heraldbench.platform.timemodel`) uses :func:`version_check_bytes` and
:func:`pull_rounds` too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from heraldbench.platform.metrics import ring_rows

__all__ = [
    "VERSION_CHECK_BYTES",
    "Collectives",
    "collective_comm",
    "pull_rounds",
    "replicated_compute",
    "version_check_bytes",
]

#: One int64 clock per row HET checks (assumed).
VERSION_CHECK_BYTES = 8


def version_check_bytes(metadata: np.ndarray, workers: int) -> np.ndarray:
    """Bytes of HET's version checks per worker and iteration: an even 1/W share of them."""
    return metadata / workers * VERSION_CHECK_BYTES


def pull_rounds(pulls: np.ndarray, metadata: np.ndarray) -> np.ndarray:
    """1.0 for each iteration with a pull round: it pulls, or HET checks versions (the checks
    ride in the pull round), else 0.0."""
    return ((pulls > 0) | (metadata > 0)).astype(np.float64)


@dataclass(frozen=True)
class Collectives:
    """Fitted costs of the trainer's transfers (``latency + bytes / bandwidth`` each).

    Attributes:
        all_to_all_latency_us, all_to_all_gbit_s: one ``all_to_all_single`` round, against the
            bytes one rank sends to the others.
        allreduce_latency_us, allreduce_gbit_s: one all-reduce, against its payload bytes.
        dense_allreduce_bytes: the dense gradients and the loss, all-reduced every iteration.
        bytes_per_value: bytes of one embedding value in the trainer (its dtype).
        ps_colocated: the PS is sharded over the workers (a worker's own rows move nothing).
        replicated_us, replicated_us_per_row: a replica's compute for replicated rows, per
            iteration that has them and per distinct row.
    """

    all_to_all_latency_us: float
    all_to_all_gbit_s: float
    allreduce_latency_us: float
    allreduce_gbit_s: float
    dense_allreduce_bytes: int
    bytes_per_value: int = 4
    ps_colocated: bool = True
    replicated_us: float = 0.0
    replicated_us_per_row: float = 0.0


def _replicated_rows(column: Callable[[str], np.ndarray], workers: int) -> np.ndarray:
    """Distinct rows whose gradients are all-reduced, per iteration: the simulator counts them
    ring-weighted (:func:`~heraldbench.platform.metrics.ring_allreduce`)."""
    return ring_rows(column("allreduce"), workers)


def replicated_compute(column: Callable[[str], np.ndarray], workers: int,
                       c: Collectives) -> np.ndarray:  # fmt: skip
    """Seconds per iteration a replica spends on replicated rows (0 where there are none)."""
    rows = _replicated_rows(column, workers)
    return ((rows > 0) * c.replicated_us + rows * c.replicated_us_per_row) * 1e-6


def collective_comm(column: Callable[[str], np.ndarray], workers: int, embedding_dim: int,
                    c: Collectives) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(transfer seconds, latency seconds) per iteration and worker; ``column(name)`` gives a
    series (zeros where the run lacks it)."""
    pulls = column("miss_pull") + column("update_pull")
    evicts = column("evict_push")
    after = column("update_push")
    handed = column("direct")  # each direct transfer's delta, in a later pull round
    metadata = column("metadata")
    if workers == 1:  # one rank: every row is its own, no collective runs
        zero = np.zeros_like(pulls)
        return zero, zero
    row_bytes = embedding_dim * c.bytes_per_value
    remote = (workers - 1) / workers if c.ps_colocated else 1.0
    moved = ((pulls + evicts + after) * remote + handed) / workers * row_bytes
    moved = moved + version_check_bytes(metadata, workers)
    a2a_bytes_per_s = c.all_to_all_gbit_s * 1e9 / 8
    replicated_rows = _replicated_rows(column, workers)
    payload = c.dense_allreduce_bytes + replicated_rows * row_bytes
    reduce_s = payload / (c.allreduce_gbit_s * 1e9 / 8)
    transfer = moved / a2a_bytes_per_s + reduce_s
    rounds = (evicts > 0).astype(np.float64) + pull_rounds(pulls, metadata) + (after > 0)
    latency = rounds * c.all_to_all_latency_us * 1e-6 + c.allreduce_latency_us * 1e-6
    return transfer, latency
