"""Modelled communication time of a placement per iteration, from two tiers of links.

The inter-host tier takes a hardware profile's bandwidth and latency (``timemodel``'s named
profiles model a worker's network link). The intra-host tier is NVLink-class: 150 GB/s per
device and 5 us per round by default, both assumptions (V100's NVLink 2 gives 300 GB/s both
directions; A100's NVLink 3, 600 GB/s). An iteration's time is three rounds (forward
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

__all__ = ["INTRA_GBIT_S", "INTRA_LATENCY_US", "TierLinks", "comm_seconds_per_iteration"]

#: The intra-host tier's assumed bandwidth (Gbit/s) and latency per round (us): NVLink-class.
INTRA_GBIT_S = 1200.0
INTRA_LATENCY_US = 5.0


@dataclass(frozen=True)
class TierLinks:
    """Bandwidth (Gbit/s) and latency (us) per device of each tier."""

    name: str
    intra_gbit_s: float = INTRA_GBIT_S
    intra_latency_us: float = INTRA_LATENCY_US
    inter_gbit_s: float = 50.0
    inter_latency_us: float = 50.0

    def __post_init__(self) -> None:
        for field in ("intra_gbit_s", "inter_gbit_s"):
            if not getattr(self, field) > 0:
                raise SpecError(f"links {field} must be > 0, got {getattr(self, field)!r}")

    @classmethod
    def from_profile(cls, profile: str | HardwareProfile, intra_gbit_s: float = INTRA_GBIT_S,
                     intra_latency_us: float = INTRA_LATENCY_US) -> TierLinks:
        hw = get_profile(profile)
        return cls(hw.name, intra_gbit_s, intra_latency_us, hw.bandwidth_gbit_s, hw.latency_us)


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
