"""Measured hardware profiles: the YAML ``heraldbench profile-cluster`` writes, read back as a
:class:`~heraldbench.platform.timemodel.HardwareProfile` (``time_profile: PATH`` in a spec).

The file (``format: heraldbench-time-profile``, ``version: 1``)::

    name: measured-vm-2r
    provenance: {host, ranks, backend, torch, date, threads_per_rank, ...}
    point_to_point: {latency_us, bandwidth_gbit_s}   # send/recv, rank 0 <-> another host's
    intra_host: {latency_us, bandwidth_gbit_s}       # send/recv within rank 0's host (if two)
    all_to_all: {latency_us, bandwidth_gbit_s}       # all_to_all_single, vs bytes a rank sends
    exchange: {latency_us, bandwidth_gbit_s}         # a round inside the trainer's loop, same x
    all_reduce: {latency_us, bandwidth_gbit_s}       # vs payload; latency inside the loop
    compute: {us_per_sample, embedding_dim, batch_size, model, dim_exponent,  # inside the loop
              replicated_us, replicated_us_per_row}  # a replica's work on replicated rows
    trainer: {dense_allreduce_bytes, bytes_per_value, ps_colocated}
    overlap: false
    sweep: {send_recv: [[bytes, seconds], ...], all_to_all: ..., all_reduce: ..., round: ...,
            iteration_allreduce: ..., iteration_compute: ..., replicated: [[rows, seconds]]}

Each link is a least-squares fit of ``seconds = latency + bytes / bandwidth`` over the sweep
(:func:`fit_link`); the raw sweep is kept so that the fit can be redone or checked.
"""

from __future__ import annotations

import stat
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from heraldbench.platform.documents import read_problem
from heraldbench.platform.exceptions import ProfileError, SpecError
from heraldbench.platform.timemodel import Collectives, ComputeModel, HardwareProfile

__all__ = [
    "FORMAT",
    "VERSION",
    "LinkFit",
    "fit_link",
    "load_time_profile",
    "save_time_profile",
    "spec_profiles",
    "to_hardware_profile",
]

FORMAT = "heraldbench-time-profile"
VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkFit(_Strict):
    """``seconds = latency_us·1e-6 + bytes / (bandwidth_gbit_s·1e9/8)``."""

    latency_us: float = Field(ge=0)
    bandwidth_gbit_s: float = Field(gt=0)


class _Compute(_Strict):
    us_per_sample: float = Field(gt=0)
    embedding_dim: int = Field(ge=1)
    batch_size: int = Field(ge=1)
    model: str
    #: How the cost scales off the measured dim; the named profiles' exponent (timemodel.py).
    dim_exponent: float = Field(0.63, ge=0)
    #: Compute every replica adds per iteration with replicated rows (their gradients scattered
    #: into the all-reduce, the update of every row it holds): fixed, and per distinct row.
    replicated_us: float = Field(0.0, ge=0)
    replicated_us_per_row: float = Field(0.0, ge=0)


class _Trainer(_Strict):
    dense_allreduce_bytes: int = Field(ge=0)
    bytes_per_value: Literal[2, 4, 8] = 4
    ps_colocated: bool = True


class _Document(_Strict):
    format: Literal["heraldbench-time-profile"]
    version: int = Field(ge=1)
    name: str = Field(min_length=1)
    provenance: dict[str, Any] = {}
    point_to_point: LinkFit
    all_to_all: LinkFit
    all_reduce: LinkFit
    #: A round of the trainer's row exchange (plan, shard reads, all_to_all_single, install, or
    #: the push's deltas), timed inside its loop; the model's rounds use it when present, else
    #: the bare all_to_all.
    exchange: LinkFit | None = None
    #: Send/recv between two ranks of rank 0's host, where it has two: the tier placements'
    #: all-to-alls use within a host (absent: the time model's default inside a host).
    intra_host: LinkFit | None = None
    compute: _Compute
    trainer: _Trainer
    overlap: bool = False
    sweep: dict[str, list[list[float]]] = {}


def fit_link(sizes: Any, seconds: Any) -> LinkFit:
    """Least-squares ``seconds = latency + bytes / bandwidth`` over a sweep of message sizes.

    A negative intercept (noise at small sizes) is clipped: the line is refitted through the
    origin, latency 0.

    Raises:
        SpecError: fewer than two distinct sizes, or times that do not grow with size.
    """
    x, y = np.asarray(sizes, np.float64), np.asarray(seconds, np.float64)
    if x.shape != y.shape or np.unique(x).size < 2:
        raise SpecError(f"a link fit needs two or more distinct sizes, got {x.tolist()}")
    slope, intercept = np.polyfit(x, y, 1)
    if intercept < 0:
        slope, intercept = float(x @ y / (x @ x)), 0.0
    if slope <= 0:
        raise SpecError(
            f"time does not grow with message size (slope {slope:.3g} s/byte over sizes "
            f"{x.min():.0f}..{x.max():.0f}); measure larger messages"
        )
    return LinkFit(latency_us=float(intercept) * 1e6, bandwidth_gbit_s=8.0 / float(slope) / 1e9)


def save_time_profile(path: str | Path, document: dict[str, Any]) -> Path:
    """Validate ``document`` and write it as YAML; returns the path."""
    path = Path(path)
    _validated(path, document)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False, default_flow_style=None))
    return path


def load_time_profile(path: str | Path) -> HardwareProfile:
    """The hardware profile in the file at ``path``.

    Raises:
        ProfileError: the file is missing, not YAML, of another format or a newer version, or a
            field is missing or out of range (the message names the file and the field).
    """
    path = Path(path)
    try:
        info = path.stat()
    except (OSError, ValueError) as exc:
        raise ProfileError(path, None, f"cannot read it: {read_problem(exc)}") from None
    if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
        raise ProfileError(path, None, "is not a regular file")
    return _load(str(path.resolve()), info.st_mtime_ns)


@lru_cache(maxsize=16)
def _load(path: str, stamp: int) -> HardwareProfile:  # stamp: re-read a rewritten file
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProfileError(path, None, f"not a readable YAML file: {read_problem(exc)}") from None
    return to_hardware_profile(_validated(Path(path), data), path)


def _validated(path: Path, data: Any) -> _Document:
    if not isinstance(data, dict):
        raise ProfileError(path, None, f"a profile is a mapping, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ProfileError(path, "format", f"not a hardware profile (format {FORMAT!r})")
    if isinstance(data.get("version"), int) and data["version"] > VERSION:
        raise ProfileError(path, "version", f"{data['version']} is newer than {VERSION}; "
                           "upgrade heraldbench")  # fmt: skip
    try:
        return _Document.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProfileError(path, where, first["msg"]) from None  # the file's text is not echoed


def to_hardware_profile(doc: _Document, source: str) -> HardwareProfile:
    """The time model's view of a measured profile."""
    c = doc.compute
    compute = ComputeModel(
        name=f"{doc.name}-compute", us_per_sample=c.us_per_sample, reference_dim=c.embedding_dim,
        dim_exponent=c.dim_exponent,
        source=f"measured: {c.model} DLRM, dim {c.embedding_dim}, batch {c.batch_size}",
    )  # fmt: skip
    rounds = doc.exchange or doc.all_to_all
    collectives = Collectives(
        all_to_all_latency_us=rounds.latency_us,
        all_to_all_gbit_s=rounds.bandwidth_gbit_s,
        allreduce_latency_us=doc.all_reduce.latency_us,
        allreduce_gbit_s=doc.all_reduce.bandwidth_gbit_s,
        dense_allreduce_bytes=doc.trainer.dense_allreduce_bytes,
        bytes_per_value=doc.trainer.bytes_per_value,
        ps_colocated=doc.trainer.ps_colocated,
        replicated_us=c.replicated_us,
        replicated_us_per_row=c.replicated_us_per_row,
    )
    inside = {} if doc.intra_host is None else {
        "intra_host_gbit_s": doc.intra_host.bandwidth_gbit_s,
        "intra_host_latency_us": doc.intra_host.latency_us}  # fmt: skip
    return HardwareProfile(
        name=doc.name, bandwidth_gbit_s=doc.all_to_all.bandwidth_gbit_s,
        latency_us=doc.all_to_all.latency_us, overlap=doc.overlap, compute=compute,
        source=f"measured by heraldbench profile-cluster ({source})", collectives=collectives,
        **inside,
    )  # fmt: skip


def spec_profiles(spec: Any) -> tuple[HardwareProfile, ...]:
    """The spec's measured ``time_profile``, if it names one (modelled next to the named)."""
    path = getattr(spec, "time_profile", None)
    return () if path is None else (load_time_profile(path),)
