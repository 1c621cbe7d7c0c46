"""The ``cluster:`` section of a spec: the workers, and the two-tier cluster under them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from heraldbench.platform.units import parse_bytes

__all__ = ["ClusterSpec"]


class ClusterSpec(BaseModel):
    """The workers, and the two-tier cluster a spec's placements are placed on: ``hosts`` ×
    ``devices_per_host`` devices (one per worker), their memory and the intra-host links (the
    inter-host tier is each hardware profile's network; docs/sharding.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workers: int = Field(8, ge=1, le=64, description="number of workers W")
    batch_size: int = Field(256, ge=1, description="samples per worker per iteration m")
    hosts: int = Field(1, ge=1, le=64, description="hosts H the workers are on")
    devices_per_host: int | None = Field(
        None, ge=1, le=64, description="devices D per host; hosts × D must equal workers "
        "(default: workers / hosts)",
    )  # fmt: skip
    device_memory: int | str = Field(
        16 << 30, description="memory per device for a placement's rows and optimizer state"
    )
    host_memory: int | str = Field(
        256 << 30, description="memory per host for rows a placement keeps in host memory"
    )
    intra_gbit_s: float | None = Field(
        None, gt=0, le=1e6, description="intra-host Gbit/s (default: each profile's)")
    intra_latency_us: float | None = Field(
        None, ge=0, le=1e6, description="intra-host latency per round, us (default: each profile's)")

    @field_validator("device_memory", "host_memory")
    @classmethod
    def _parse_memory(cls, value: int | str) -> int:
        return parse_bytes(value)

    @model_validator(mode="after")
    def _hosts_hold_the_workers(self) -> ClusterSpec:
        h, d, w = self.hosts, self.devices_per_host, self.workers
        if d is None and w % h:
            raise ValueError(f"cluster.hosts = {h} does not divide cluster.workers = {w}; "
                             "give cluster.devices_per_host")
        if d is not None and h * d != w:
            raise ValueError(f"cluster.hosts × cluster.devices_per_host = {h} × {d} = {h * d}, "
                             f"but cluster.workers is {w}: they must be equal")
        return self

    @property
    def devices_on_each_host(self) -> int:
        return self.devices_per_host or self.workers // self.hosts
