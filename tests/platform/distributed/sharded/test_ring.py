"""The replicas' all-reduce over emulated ranks: every holder ends with the same sum, and the
bytes summed over devices are the accounting's model's (`allreduce_bytes`), chunks uneven."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from heraldbench.platform.distributed.sharded._comm import Meter, ThreadComm, ThreadHub
from heraldbench.platform.distributed.sharded._ring import (
    cross_host_allreduce,
    hierarchical_allreduce,
)
from heraldbench.platform.placements import Topology
from heraldbench.platform.placements.accounting import allreduce_bytes


def _run(topology: Topology, reduce, values: list[torch.Tensor]):
    hub = ThreadHub(topology.devices)
    meters = [Meter(ThreadComm(hub, r), topology) for r in range(topology.devices)]
    out: list = [None] * topology.devices

    def one(rank: int) -> None:
        out[rank] = reduce(meters[rank], values[rank], topology)

    threads = [threading.Thread(target=one, args=(r,)) for r in range(topology.devices)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, np.stack([m.sent["sync"] for m in meters])


@pytest.mark.parametrize(("hosts", "per_host"), [(2, 2), (3, 2), (2, 3), (1, 4), (4, 1)])
def test_rows_on_every_device_sum_hierarchically(hosts, per_host) -> None:
    topo = Topology(hosts, per_host)
    values = [torch.rand(7, dtype=torch.float64) for _ in range(topo.devices)]
    out, sent = _run(topo, hierarchical_allreduce, values)
    torch.testing.assert_close(out[0], sum(values), rtol=0, atol=1e-15)
    assert all(torch.equal(o, out[0]) for o in out)  # replicas stay bitwise identical
    model = allreduce_bytes(7 * 8, np.zeros(per_host), hosts, per_host)
    np.testing.assert_allclose(sent.sum(0), model.sum(0), rtol=1e-12)


def test_rows_on_every_host_sum_across_hosts_per_local_index() -> None:
    topo = Topology(3, 2)
    values = [torch.rand(5 + r % 2, dtype=torch.float64) for r in range(topo.devices)]
    out, sent = _run(topo, cross_host_allreduce, values)
    for local in range(2):
        group = [h * 2 + local for h in range(3)]
        total = sum(values[r] for r in group)
        assert all(torch.equal(out[r], out[group[0]]) for r in group)
        torch.testing.assert_close(out[group[0]], total, rtol=0, atol=1e-15)
    model = allreduce_bytes(0.0, np.asarray([5 * 8, 6 * 8]), 3, 2)
    np.testing.assert_allclose(sent.sum(0), model.sum(0), rtol=1e-12)
    assert sent[:, 0].sum() == 0  # nothing within a host
