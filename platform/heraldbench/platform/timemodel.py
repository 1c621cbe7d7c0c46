"""Modelled iteration time (docs/time-model.md): compute + communication on named hardware.

The simulator counts rows; this module turns its per-iteration series into seconds on a named
:class:`HardwareProfile`, so that a communication saving can be read as a speedup. It is a
first-order model, not a measurement. Its assumptions, each stated where it is used:

* **Workers run in lock step (BSP)** and are interchangeable: the series are cluster totals, and
  each worker is charged an even 1/W share of them. Load imbalance (the straggler a real BSP
  iteration waits for) is ignored, so the modelled time is optimistic for skewed partitions.
* **Communication** per iteration and worker = rows moved × dim × 4 bytes / effective bandwidth
  + latency × message rounds. Rows moved = miss + update pulls, evict + update pushes and the
  all-reduce row-transfers (already ring-weighted by the simulator). Rounds: one pull round if
  the iteration pulls or checks versions, one push round if it pushes, 2(W−1) ring steps if it
  all-reduces. HET's version checks (``metadata``) ride in the pull round, 8 bytes each (an int64
  clock per checked row; assumed): one rule for both models, in
  :mod:`~heraldbench.platform._collectives`.
  Flush pushes happen once at the end and are not in the per-iteration series.
* **Compute** per iteration = m samples × a per-sample cost at the embedding dim
  (:class:`ComputeModel`); workers compute in parallel.
* **Overlap**: with ``overlap=True`` communication hides behind compute (a prefetching pipeline:
  iteration = max(compute, comm)); otherwise pulls block the forward pass and pushes follow the
  backward pass (iteration = compute + comm), as in HET's and Herald's BSP trainers.

Example:
    >>> import numpy as np
    >>> series = {"miss_pull": np.array([8.0]), "evict_push": np.array([0.0])}
    >>> est = model_time(series, workers=2, batch_size=4, embedding_dim=128, profile="rdma-100g")
    >>> est.iterations, est.profile
    (1, 'rdma-100g')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from heraldbench.platform._collectives import (
    Collectives,
    collective_comm,
    pull_rounds,
    replicated_compute,
    version_check_bytes,
)
from heraldbench.platform.exceptions import SpecError, UnknownNameError
from heraldbench.platform.metrics import ring_steps
from heraldbench.platform.units import BYTES_PER_VALUE

__all__ = [
    "COMPUTE_MODELS",
    "DEFAULT_PROFILE",
    "PROFILES",
    "Collectives",
    "ComputeModel",
    "HardwareProfile",
    "TimeEstimate",
    "get_profile",
    "model_time",
    "model_times",
    "speedups",
]

_PULLS = ("miss_pull", "update_pull")
_PUSHES = ("evict_push", "update_push")


@dataclass(frozen=True)
class ComputeModel:
    """Forward + backward + optimizer time of one training sample on one worker.

    The cost is anchored at ``reference_dim`` and scaled as ``(dim / reference_dim) **
    dim_exponent``: embedding work grows with the dim, the MLPs (most of DLRM's FLOPs) much less.

    Attributes:
        name: registry key.
        us_per_sample: microseconds per sample at ``reference_dim``.
        reference_dim: embedding dim of the anchoring measurement.
        dim_exponent: how the cost scales with the dim (1 = linear, 0 = not at all).
        source: where ``us_per_sample`` comes from.
    """

    name: str
    us_per_sample: float
    reference_dim: int
    dim_exponent: float
    source: str

    def us_per_sample_at(self, embedding_dim: int) -> float:
        """Microseconds per sample at ``embedding_dim``."""
        return self.us_per_sample * (embedding_dim / self.reference_dim) ** self.dim_exponent


#: dim_exponent 0.63: dim 16 -> 128 (8x) made a CPU EmbeddingBag train step 3.7x slower
#: (17.2 -> 63.5 ms per 4096 samples; DLRM's published Criteo Kaggle runs); ln 3.7 / ln 8 = 0.63. A rough,
#: embedding-only figure, used for lack of a GPU DLRM sweep over the dim.
_DIM_EXPONENT = 0.63

#: NVIDIA DeepLearningExamples PyTorch DLRM README (2020): Criteo Terabyte, dim 128, batch 32k,
#: one V100-32GB, FP32: 494k samples/s (NVIDIA's published DLRM training figures) -> 1e6 / 494e3 = 2.02 us.
V100_DLRM_FP32 = ComputeModel(
    name="v100-dlrm-fp32",
    us_per_sample=1e6 / 494_000,
    reference_dim=128,
    dim_exponent=_DIM_EXPONENT,
    source="NVIDIA DeepLearningExamples PyTorch DLRM README: 1x V100-32GB FP32, 494k samples/s",
)
#: Same README, AMP: 875k samples/s -> 1.14 us per sample.
V100_DLRM_AMP = ComputeModel(
    name="v100-dlrm-amp",
    us_per_sample=1e6 / 875_000,
    reference_dim=128,
    dim_exponent=_DIM_EXPONENT,
    source="NVIDIA DeepLearningExamples PyTorch DLRM README: 1x V100-32GB AMP, 875k samples/s",
)
COMPUTE_MODELS: dict[str, ComputeModel] = {m.name: m for m in (V100_DLRM_FP32, V100_DLRM_AMP)}


@dataclass(frozen=True)
class HardwareProfile:
    """A worker's link to the parameter server, and its compute speed.

    Attributes:
        name: registry key; every modelled figure names the profile it used.
        bandwidth_gbit_s: effective bandwidth per worker in Gbit/s (line rate × efficiency).
        latency_us: fixed cost of one message round in microseconds.
        overlap: whether communication may hide behind compute (max instead of sum).
        compute: per-sample compute model.
        source: where the numbers come from.
        collectives: a measured profile's costs of the distributed trainer's transfers
            (``heraldbench profile-cluster``); when set, communication is modelled as the
            trainer's rounds (:mod:`heraldbench.platform._collectives`), not as a remote PS.
        intra_host_gbit_s, intra_host_latency_us: the tier between the devices of one host,
            which placements' all-to-alls use (the link above is the tier between hosts).
            Default: V100's NVLink 2, 6 links × 25 GB/s a direction = 150 GB/s (1200 Gbit/s)
            per device, and 5 us a round (assumed).
    """

    name: str
    bandwidth_gbit_s: float
    latency_us: float
    overlap: bool
    compute: ComputeModel
    source: str
    collectives: Collectives | None = None
    intra_host_gbit_s: float = 1200.0
    intra_host_latency_us: float = 5.0

    @property
    def bytes_per_second(self) -> float:
        return self.bandwidth_gbit_s * 1e9 / 8


#: 100 Gb/s Ethernet with kernel TCP, at an assumed 50% efficiency (50 Gbit/s). A PS worker talks
#: TCP over few streams; one TCP stream is CPU-bound well below 100 Gb/s and reaches line rate only
#: with tuned hosts and parallel streams (ESnet fasterdata "100G tuning"), and the PS RPC layer adds
#: copies and serialisation. 50 us per round: a kernel-TCP RTT (tens of us) plus request handling.
#: Both are assumptions; Herald's NSDI'24 speedups (2.11x TCP vs 1.61x RDMA) say TCP is slower.
TCP_100G = HardwareProfile(
    name="tcp-100g",
    bandwidth_gbit_s=100 * 0.5,
    latency_us=50.0,
    overlap=False,
    compute=V100_DLRM_FP32,
    source="100 GbE line rate x 0.5 assumed TCP efficiency; 50 us per round assumed",
)
#: 100 Gb/s RDMA (RoCE / EDR InfiniBand): perftest ib_write_bw / ib_send_bw peak at 96-97 Gbit/s
#: on ConnectX-4/5 (NVIDIA/Mellanox forums), so 95% efficiency; one-way latency a few us, so
#: 5 us per round including the PS's request handling (assumed).
RDMA_100G = HardwareProfile(
    name="rdma-100g",
    bandwidth_gbit_s=100 * 0.95,
    latency_us=5.0,
    overlap=False,
    compute=V100_DLRM_FP32,
    source="100 Gb/s RDMA, perftest ~96 Gbit/s -> 0.95 efficiency; 5 us per round assumed",
)
#: Host-memory PS, GPU-memory cache on one machine: PCIe Gen4 x16 is 31.5 GB/s per direction;
#: pinned cudaMemcpy reaches ~25 GB/s (200 Gbit/s, ~80%). 10 us per round: copy + kernel launch.
PCIE4_X16 = HardwareProfile(
    name="pcie4-x16",
    bandwidth_gbit_s=25.0 * 8,
    latency_us=10.0,
    overlap=False,
    compute=V100_DLRM_FP32,
    source="PCIe Gen4 x16 host-to-GPU, ~25 GB/s effective of 31.5 GB/s; 10 us per round assumed",
)


#: DGX-1 (V100): 8 GPUs joined by NVLink 2 (150 GB/s a direction per GPU) and 4 × 100 Gb/s EDR
#: InfiniBand for the 8 (NVIDIA DGX-1 datasheet), so 50 Gbit/s a device between hosts at the 95%
#: RDMA efficiency of ``rdma-100g``; 5 us a round on either tier (assumed). The two-tier profile
#: placements are compared under; a cache scheduler's PS link is the inter-host one.
DGX1_V100 = HardwareProfile(
    name="dgx1-v100",
    bandwidth_gbit_s=100 * 4 / 8 * 0.95,
    latency_us=5.0,
    overlap=False,
    compute=V100_DLRM_FP32,
    source="DGX-1 datasheet: NVLink 2 within a host, 4 x 100 Gb/s EDR IB per 8 GPUs, x0.95",
)


def _overlapped(profile: HardwareProfile) -> HardwareProfile:
    return replace(profile, name=f"{profile.name}-overlap", overlap=True)


_BASE = (TCP_100G, RDMA_100G, PCIE4_X16, DGX1_V100)
PROFILES: dict[str, HardwareProfile] = {
    p.name: p for p in (*_BASE, *(_overlapped(p) for p in _BASE))
}
#: Herald's headline end-to-end figure (2.11x) is over TCP on 100 Gb/s Ethernet, without overlap.
DEFAULT_PROFILE = TCP_100G.name


def get_profile(name: str | HardwareProfile) -> HardwareProfile:
    """The profile called ``name``; a profile is returned as is, and a name ending in
    ``.yaml``/``.yml``/``.json`` is read as a measured profile file (``profile-cluster``).

    Raises:
        UnknownNameError: no such profile; the message lists the known names.
        ProfileError: a profile file that cannot be read or is malformed.
    """
    if isinstance(name, HardwareProfile):
        return name
    if str(name).endswith((".yaml", ".yml", ".json")):
        from heraldbench.platform.timeprofile import load_time_profile

        return load_time_profile(name)
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownNameError("hardware profile", name, list(PROFILES)) from None


@dataclass(frozen=True)
class TimeEstimate:
    """Modelled time of one run on one profile; every figure is in seconds.

    Attributes:
        profile: the profile's name.
        overlap: whether the profile overlapped communication with compute.
        iterations: iterations modelled.
        compute_s: compute summed over iterations.
        transfer_s: bytes / bandwidth summed over iterations.
        latency_s: latency × rounds summed over iterations.
        total_s: modelled training time (sum of iteration times).
        iteration_s: per-iteration modelled time (not serialised).
    """

    profile: str
    overlap: bool
    iterations: int
    compute_s: float
    transfer_s: float
    latency_s: float
    total_s: float
    iteration_s: np.ndarray = field(repr=False, compare=False)

    @property
    def comm_s(self) -> float:
        """Communication time, hidden or not."""
        return self.transfer_s + self.latency_s

    @property
    def exposed_comm_s(self) -> float:
        """Communication the iterations wait for (all of it without overlap)."""
        return self.total_s - self.compute_s

    @property
    def mean_iteration_s(self) -> float:
        return self.total_s / self.iterations if self.iterations else 0.0

    @property
    def steady_iteration_s(self) -> float:
        """Mean over the iterations after the first (the first: a cold cache's pulls)."""
        rest = self.iteration_s[1:] if self.iterations > 1 else self.iteration_s
        return float(rest.mean()) if rest.size else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "overlap": self.overlap,
            "iterations": self.iterations,
            "total_s": self.total_s,
            "mean_iteration_s": self.mean_iteration_s,
            "compute_s": self.compute_s,
            "comm_s": self.comm_s,
            "transfer_s": self.transfer_s,
            "latency_s": self.latency_s,
            "exposed_comm_s": self.exposed_comm_s,
        }


def _column(series: Mapping[str, np.ndarray], name: str, iterations: int) -> np.ndarray:
    """A series as float64, zeros where the run did not record it."""
    values = series.get(name)
    if values is None:
        return np.zeros(iterations)
    return np.asarray(values, dtype=np.float64)


def _iterations(series: Mapping[str, np.ndarray]) -> int:
    lengths = {len(np.asarray(v)) for v in series.values()}
    if len(lengths) > 1:
        raise SpecError(f"series of unequal lengths: {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def _rounds(pulls, pushes, allreduce, metadata, workers: int) -> np.ndarray:
    """Message rounds per iteration (see the module docstring)."""
    # reduce-scatter + all-gather, each W−1 latency-bound steps
    return pull_rounds(pulls, metadata) + (pushes > 0) + ring_steps(workers) * (allreduce > 0)


def model_time(
    series: Mapping[str, np.ndarray],
    *,
    workers: int,
    batch_size: int,
    embedding_dim: int,
    profile: str | HardwareProfile,
) -> TimeEstimate:
    """Modelled time of a run from its per-iteration series (``RunResult.series``).

    Args:
        series: per-iteration cluster totals: ``miss_pull``, ``update_pull``, ``evict_push``,
            ``update_push``, ``allreduce`` (ring-weighted row-transfers), ``metadata``; a
            missing key counts as zero.
        workers: W; each worker carries 1/W of every series.
        batch_size: m, samples per worker per iteration.
        embedding_dim: values per row (fp32).
        profile: a name in :data:`PROFILES` or a profile.

    Raises:
        UnknownNameError: unknown profile name.
        SpecError: a non-positive size, or series of unequal lengths.
    """
    hw = get_profile(profile)
    if min(workers, batch_size, embedding_dim) < 1:
        raise SpecError("workers, batch_size and embedding_dim must be positive")
    n = _iterations(series)
    pulls = sum(_column(series, k, n) for k in _PULLS)
    pushes = sum(_column(series, k, n) for k in _PUSHES)
    allreduce = _column(series, "allreduce", n)
    metadata = _column(series, "metadata", n)
    if hw.collectives is not None:  # a measured profile: the distributed trainer's rounds
        transfer, latency = collective_comm(lambda k: _column(series, k, n), workers,
                                            embedding_dim, hw.collectives)  # fmt: skip
    else:
        # The series are cluster totals; each worker carries an even share (imbalance ignored).
        rows_per_worker = (pulls + pushes + allreduce) / workers
        bytes_per_worker = (
            rows_per_worker * embedding_dim * BYTES_PER_VALUE
            + version_check_bytes(metadata, workers)
        )
        transfer = bytes_per_worker / hw.bytes_per_second
        latency = _rounds(pulls, pushes, allreduce, metadata, workers) * hw.latency_us * 1e-6
    compute = np.full(n, batch_size * hw.compute.us_per_sample_at(embedding_dim) * 1e-6)
    if hw.collectives is not None:
        compute = compute + replicated_compute(lambda k: _column(series, k, n), workers,
                                               hw.collectives)  # fmt: skip
    comm = transfer + latency
    per_iteration = np.maximum(compute, comm) if hw.overlap else compute + comm
    return TimeEstimate(
        profile=hw.name,
        overlap=hw.overlap,
        iterations=n,
        compute_s=float(compute.sum()),
        transfer_s=float(transfer.sum()),
        latency_s=float(latency.sum()),
        total_s=float(per_iteration.sum()),
        iteration_s=np.asarray(per_iteration, dtype=np.float64),
    )


def model_times(
    series: Mapping[str, np.ndarray],
    *,
    workers: int,
    batch_size: int,
    embedding_dim: int,
    profiles: tuple[str | HardwareProfile, ...] | None = None,
    extra: tuple[HardwareProfile, ...] = (),
) -> dict[str, dict[str, Any]]:
    """``{profile: TimeEstimate.to_json()}`` for several profiles (all named ones by default),
    plus ``extra`` profiles (a spec's measured ``time_profile``), keyed by their names.

    This is the shape :func:`heraldbench.platform.report.write_report` reads from a run's
    ``time`` field.
    """
    chosen = profiles if profiles is not None else tuple(PROFILES)
    out = {}
    for p in (*chosen, *extra):
        hw = get_profile(p)
        est = model_time(series, workers=workers, batch_size=batch_size,
                         embedding_dim=embedding_dim, profile=hw)  # fmt: skip
        out[hw.name] = est.to_json()
        if hw.collectives is not None:  # measured: compared with the trainer's steady iterations
            out[hw.name]["steady_iteration_s"] = est.steady_iteration_s
    return out


def speedups(times: Mapping[str, TimeEstimate], baseline_label: str) -> dict[str, float | None]:
    """Baseline time over each run's time (> 1: faster than the baseline; None if it took 0 s).

    Raises:
        UnknownNameError: ``baseline_label`` is not in ``times``.
        SpecError: the estimates were made on different profiles.
    """
    if baseline_label not in times:
        raise UnknownNameError("baseline", baseline_label, list(times))
    used = {t.profile for t in times.values()}
    if len(used) > 1:
        raise SpecError(f"speedups need one profile, got {sorted(used)}")
    base = times[baseline_label].total_s
    return {label: (base / t.total_s if t.total_s > 0 else None) for label, t in times.items()}
