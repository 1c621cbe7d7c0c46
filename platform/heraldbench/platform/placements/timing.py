"""Modelled communication time of a placement per iteration, from two tiers of links.

Both tiers come from a hardware profile of ``timemodel``: its link (a worker's network link) is
the inter-host tier, its ``intra_host_*`` figures the intra-host one (NVLink-class; V100's
NVLink 2 unless the profile says otherwise). An iteration's time is three rounds (forward
all-to-all, backward all-to-all, replicas' all-reduce), each costing the busiest device's
bytes over each tier's bandwidth, summed over tiers, plus each used tier's latency: tiers are
not assumed to overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placements.accounting import Traffic
from heraldbench.platform.timemodel import HardwareProfile, get_profile

__all__ = ["TierLinks", "comm_seconds_per_iteration"]


@dataclass(frozen=True)
class TierLinks:
    """Bandwidth (Gbit/s) and latency (us) per device of each tier."""

    name: str
    intra_gbit_s: float
    intra_latency_us: float
    inter_gbit_s: float
    inter_latency_us: float

    def __post_init__(self) -> None:
        for field in ("intra_gbit_s", "inter_gbit_s"):
            if not getattr(self, field) > 0:
                raise SpecError(f"links {field} must be > 0, got {getattr(self, field)!r}")

    @classmethod
    def from_profile(cls, profile: str | HardwareProfile, intra_gbit_s: float | None = None,
                     intra_latency_us: float | None = None) -> TierLinks:
        """The profile's two tiers; ``intra_*`` given override its intra-host tier."""
        hw = get_profile(profile)
        return cls(hw.name,
                   hw.intra_host_gbit_s if intra_gbit_s is None else intra_gbit_s,
                   hw.intra_host_latency_us if intra_latency_us is None else intra_latency_us,
                   hw.bandwidth_gbit_s, hw.latency_us)


def comm_seconds_per_iteration(traffic: Traffic, links: TierLinks) -> float:
    if traffic.iterations == 0:
        return 0.0
    rate = np.array([links.intra_gbit_s, links.inter_gbit_s]) * 1e9 / 8
    latency = np.array([links.intra_latency_us, links.inter_latency_us]) * 1e-6
    total = 0.0
    for sent in (traffic.forward, traffic.backward, traffic.sync):
        per_device = sent / traffic.iterations
        total += float((per_device / rate).sum(1).max())
        total += float(latency[per_device.max(0) > 0].sum())
    return total
