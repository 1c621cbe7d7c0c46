"""Workload profiles: traces that behave like real click logs for cache scheduling (docs/workloads.md).

``heraldbench calibrate`` fits a :class:`WorkloadProfile` from any trace a reader can open
(:func:`fit_profile`); ``dataset: {kind: synthetic, profile: ...}`` generates from one
(:class:`SyntheticProfileSpec`); :func:`heraldbench.platform.workload_check.check_round_trip`
measures how faithfully (above this layer: it runs the schedulers). The model is
described in :mod:`heraldbench.platform.data.workload.model`.
"""

from heraldbench.platform.data.workload.schema import (
    WorkloadProfile,
    load_profile,
    save_profile,
)
from heraldbench.platform.data.workload.trace import (
    BUILTIN_PROFILES,
    ProfileTrace,
    SyntheticProfileSpec,
    profile_trace,
    resolve_profile,
)

__all__ = [
    "BUILTIN_PROFILES",
    "ProfileTrace",
    "SyntheticProfileSpec",
    "WorkloadProfile",
    "load_profile",
    "profile_trace",
    "resolve_profile",
    "save_profile",
]
