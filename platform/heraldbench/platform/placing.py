"""A spec's placements run on its trace, beside its schedulers (docs/sharding.md).

The topology and its memory come from the spec's ``cluster`` section, the tables from the
trace's layout at the spec's ``embedding_dim``; each entry is placed and counted by
:func:`~heraldbench.platform.placements.runs.run_placements`, and its communication modelled
under every profile of the side-by-side comparison (:func:`comparison_profiles`).
"""

from __future__ import annotations

from typing import Any

from heraldbench.platform.cluster_spec import ClusterSpec
from heraldbench.platform.data import TraceSource
from heraldbench.platform.exceptions import CapacityError, SpecError
from heraldbench.platform.placement_spec import PlacementSpec, run_knobs
from heraldbench.platform.placements import Topology
from heraldbench.platform.placements.runs import PlacementRun, run_placements, tables_of
from heraldbench.platform.placements.timing import TierLinks, comm_seconds_per_iteration
from heraldbench.platform.timemodel import PROFILES, HardwareProfile
from heraldbench.platform.timeprofile import spec_profiles

__all__ = ["comparison_profiles", "place_entry", "place_spec", "topology_of"]


def topology_of(cluster: ClusterSpec) -> Topology:
    return Topology(cluster.hosts, cluster.devices_on_each_host, int(cluster.device_memory),
                    int(cluster.host_memory))


def comparison_profiles(spec: Any) -> tuple[HardwareProfile, ...]:
    """The profiles the side-by-side comparison models: the named ones without overlap (which
    changes no communication time), and the spec's measured ``time_profile``."""
    return tuple(p for p in (*PROFILES.values(), *spec_profiles(spec)) if not p.overlap)


def _links(cluster: ClusterSpec, profile: HardwareProfile) -> TierLinks:
    return TierLinks.from_profile(profile, cluster.intra_gbit_s, cluster.intra_latency_us)


def place_entry(spec: Any, index: int, trace: TraceSource | None = None) -> dict[str, Any]:
    """The result of ``spec.placements[index]`` on the spec's trace (JSON).

    Raises:
        SpecError: the plan does not fit the devices' or hosts' memory, naming the placement,
            ``cluster.device_memory`` and ``cluster.host_memory`` and their values.
    """
    entry: PlacementSpec = spec.placements[index]
    cluster: ClusterSpec = spec.cluster
    source = trace if trace is not None else spec.dataset.open()
    profiles = comparison_profiles(spec)
    knobs = run_knobs(entry.kind, entry.knobs(), cluster.batch_size)
    try:
        [run] = run_placements(source, tables_of(source, spec.embedding_dim),
                               topology_of(cluster), [entry.kind], cluster.batch_size,
                               _links(cluster, profiles[0]), {entry.kind: knobs})
    except CapacityError as exc:
        raise SpecError(f"placements.{index} ({entry.label()}) does not fit: {exc} "
                        f"(cluster.device_memory = {cluster.device_memory:,} bytes, "
                        f"cluster.host_memory = {cluster.host_memory:,} bytes)") from None
    return _result(entry, run, {p.name: comm_seconds_per_iteration(run.traffic, _links(cluster, p))
                                for p in profiles})


def _result(entry: PlacementSpec, run: PlacementRun, comm_s: dict[str, float]) -> dict[str, Any]:
    summary = run.summary()
    return {
        **summary,
        "label": entry.label(),
        "params": entry.knobs(),
        "bytes_per_iteration": {"intra_host": summary["intra_host_bytes_per_iteration"],
                                "inter_host": summary["inter_host_bytes_per_iteration"]},
        "comm_ms_per_iteration": {name: s * 1e3 for name, s in comm_s.items()},
    }


def place_spec(spec: Any, trace: TraceSource | None = None) -> list[dict[str, Any]]:
    """Every placement of ``spec``, in order, on one trace."""
    source = trace if trace is not None else spec.dataset.open()
    return [place_entry(spec, i, source) for i in range(len(spec.placements))]
