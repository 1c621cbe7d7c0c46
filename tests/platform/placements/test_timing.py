"""The two tiers a placement's communication time is priced on come from a hardware profile."""

from __future__ import annotations

import pytest

from heraldbench.platform.exceptions import UnknownNameError
from heraldbench.platform.placements.timing import TierLinks


def test_a_two_tier_profile_gives_both_tiers() -> None:
    links = TierLinks.from_profile("dgx1-v100")
    assert (links.intra_gbit_s, links.intra_latency_us) == (1200.0, 5.0)
    assert links.inter_gbit_s == pytest.approx(47.5)  # 4 x 100 Gb/s EDR for 8 GPUs, x0.95
    assert links.inter_gbit_s < TierLinks.from_profile("rdma-100g").inter_gbit_s


def test_an_intra_host_figure_given_overrides_the_profiles() -> None:
    links = TierLinks.from_profile("tcp-100g", intra_gbit_s=2400.0)
    assert links.intra_gbit_s == 2400.0 and links.inter_gbit_s == 50.0


def test_an_unknown_profile_is_named() -> None:
    with pytest.raises(UnknownNameError, match="nvlink9"):
        TierLinks.from_profile("nvlink9")


def test_the_least_a_device_holds_bounds_every_plan() -> None:
    from heraldbench.platform.placements import TableInfo, Topology, create
    from heraldbench.platform.placements.memory import least_device_bytes, memory_use

    tables = (TableInfo("a", 1_000, 8), TableInfo("b", 333, 8))
    total = sum(t.rows * t.row_bytes(t.dim) for t in tables)
    topology = Topology(2, 2)
    for kind in ("table-wise", "row-wise", "table-row-wise", "column-wise", "data-parallel"):
        held = int(memory_use(create(kind).place(tables, topology)).device.max())
        assert least_device_bytes(kind, total, topology) <= held, kind
    assert least_device_bytes("data-parallel", total, topology) == total
    assert least_device_bytes("row-wise", total, topology) == -(-total // 4)
    assert least_device_bytes("recshard", total, Topology(2, 2, host_memory_bytes=total)) == 0
