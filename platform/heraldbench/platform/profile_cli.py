"""``heraldbench profile-cluster``: measure the cluster and write a hardware profile (YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from heraldbench.platform.cli import _user_errors, app, err, out

__all__ = ["profile_cluster_command"]


@app.command("profile-cluster")
def profile_cluster_command(
    out_path: Annotated[Path, typer.Option("--out", help="where to write the profile (YAML)")],
    ranks: Annotated[int | None, typer.Option(
        help="ranks to measure (default: the spec's cluster.workers, else 2)", min=2)] = None,
    scheduler_address: Annotated[str | None, typer.Option(
        help="measure one rank per worker of this Dask cluster (tcp://host:8786)")] = None,
    spec: Annotated[Path | None, typer.Option(
        help="measure this spec's model, embedding dim, per-worker batch and dtype")] = None,
    name: Annotated[str | None, typer.Option(help="the profile's name")] = None,
) -> None:
    """Measure bandwidth, latency, all-reduce and compute inside a process group; write --out."""
    from heraldbench.platform.distributed.profiling import options_for, profile_cluster
    from heraldbench.platform.spec import load_spec
    from heraldbench.platform.timeprofile import load_time_profile, save_time_profile

    with _user_errors():
        parsed = load_spec(spec) if spec is not None else None
        count = ranks or (parsed.cluster.workers if parsed is not None else 2)
        document = profile_cluster(options_for(parsed), count, scheduler_address)
        if name:
            document["name"] = name
        save_time_profile(out_path, document)
        profile = load_time_profile(out_path)  # what a spec's time_profile will read
    c = profile.collectives
    out.print(f"{out_path}: {profile.name}; all_to_all {c.all_to_all_latency_us:.1f} us + "
              f"{c.all_to_all_gbit_s:.2f} Gbit/s, all_reduce {c.allreduce_latency_us:.1f} us + "
              f"{c.allreduce_gbit_s:.2f} Gbit/s, compute {profile.compute.us_per_sample:.2f} "
              "us/sample", highlight=False)  # type: ignore[union-attr]  # fmt: skip
    err.print(f"use it with `time_profile: {out_path}` in a spec")
