"""The accounting's numba kernel: one pass over a chunk of whole iterations (docs/sharding.md).

A read of a row by a sample on device ``req`` is served by ``server``: the row's owner for
``DEVICE`` and ``HOST_MEMORY`` rows, the device of local index ``owner`` on ``req``'s host for
``PER_HOST`` rows, ``req`` itself for ``EVERY_DEVICE`` rows. A pooled feature sends one vector
(a pooled vector or a partial sum) per distinct serving device other than ``req``; a sequence
feature sends every id's row. Gradients flow back the same way. Replicated rows touched in an
iteration are counted once for their all-reduce.
"""

from __future__ import annotations

import numba

from heraldbench.platform.placements.types import Scope

__all__ = ["account_chunk", "servers_of"]

_DEVICE = int(Scope.DEVICE)
_HOST_MEMORY = int(Scope.HOST_MEMORY)
_PER_HOST = int(Scope.PER_HOST)


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def _server(code, own, req, per_host):  # pragma: no cover - numba
    if code == _DEVICE or code == _HOST_MEMORY:
        return own
    if code == _PER_HOST:
        return (req // per_host) * per_host + own
    return req


@numba.njit(cache=True, nogil=True)
def account_chunk(lengths, values, table_starts, pooled, shard_lo, shard_hi, shard_base,
                  shard_value_bytes, scope, owner, touched, iteration_base, batch_size,
                  devices, per_host, lookups, forward, backward, ids_sent, host_memory_reads,
                  sync_every, sync_per_host, marker, stamp):  # pragma: no cover - numba
    """Add one chunk's counts to the accumulators; returns the marker stamp reached."""
    tables, samples = lengths.shape
    iteration_samples = batch_size * devices
    for t in range(tables):
        for k in range(shard_lo[t], shard_hi[t]):
            base = shard_base[k]
            vector = shard_value_bytes[k]
            at = table_starts[t]
            for j in range(samples):
                req = (j % iteration_samples) // batch_size
                local_iteration = j // iteration_samples
                iteration = iteration_base + local_iteration
                req_host = req // per_host
                stamp += 1
                for _ in range(lengths[t, j]):
                    row = base + values[at]
                    at += 1
                    code = scope[row]
                    server = _server(code, owner[row], req, per_host)
                    lookups[local_iteration, server] += 1
                    if code == _HOST_MEMORY:
                        host_memory_reads[server] += 1
                    if code >= _PER_HOST and touched[row] != iteration:
                        touched[row] = iteration
                        if code == _PER_HOST:
                            sync_per_host[owner[row]] += vector
                        else:
                            sync_every[0] += vector
                    if server == req:
                        continue
                    tier = 0 if server // per_host == req_host else 1
                    ids_sent[req, tier] += 1
                    if pooled[t] and marker[server] == stamp:
                        continue
                    marker[server] = stamp
                    forward[server, tier] += vector
                    backward[req, tier] += vector
    return stamp


@numba.njit(cache=True, nogil=True)
def servers_of(scope, owner, rows, readers, per_host):  # pragma: no cover - numba
    """The device serving each read ``rows[i]`` of ``readers[i]``: :func:`_server`, the
    accounting's own rule, for the trainers that carry a placement out."""
    out = readers.copy()
    for i in range(rows.shape[0]):
        row = rows[i]
        out[i] = _server(scope[row], owner[row], readers[i], per_host)
    return out
