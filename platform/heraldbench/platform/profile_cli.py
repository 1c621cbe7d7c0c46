"""``heraldbench profile-cluster``: measure the cluster and write a hardware profile (YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from heraldbench.platform.cli import _user_errors, app, err, out
from heraldbench.platform.exceptions import SpecError

__all__ = ["links_of", "profile_cluster_command"]


def links_of(link: str | None, ranks_per_host: int, inside_link: str | None, spec=None):
    """The shaped links the options ask for, else the spec's, else None (loopback)."""
    from heraldbench.platform.distributed.links import Links, parse_link

    if link is None:
        if inside_link is not None or ranks_per_host != 1:
            raise SpecError("--ranks-per-host and --inside-link need --link (between hosts)")
        return Links.from_spec(spec.train.distributed.links) if spec and spec.train else None
    inside = parse_link(inside_link) if inside_link is not None else None
    return Links(parse_link(link), ranks_per_host, inside)


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
    link: Annotated[str | None, typer.Option(
        help="shaped links RATE[,LATENCY] (e.g. 200mbit): each rank in a network namespace "
             "(root); with --ranks-per-host, the link between hosts")] = None,
    ranks_per_host: Annotated[int, typer.Option(
        help="with --link: group ranks as hosts of this many", min=1)] = 1,
    inside_link: Annotated[str | None, typer.Option(
        help="with --ranks-per-host: the links inside a host, RATE[,LATENCY]")] = None,
) -> None:
    """Measure bandwidth, latency, all-reduce and compute inside a process group; write --out.

    Without --link the links measured are the spec's ``train.distributed.links``, if any, else
    loopback."""
    from heraldbench.platform.distributed.profiling import options_for, profile_cluster
    from heraldbench.platform.spec import load_spec
    from heraldbench.platform.timeprofile import load_time_profile, save_time_profile

    with _user_errors():
        parsed = load_spec(spec) if spec is not None else None
        count = ranks or (parsed.cluster.workers if parsed is not None else 2)
        links = links_of(link, ranks_per_host, inside_link, parsed)
        document = profile_cluster(options_for(parsed), count, scheduler_address, links=links)
        if name:
            document["name"] = name
        save_time_profile(out_path, document)
        profile = load_time_profile(out_path)  # what a spec's time_profile will read
    c = profile.collectives
    out.print(f"{out_path}: {profile.name}; all_to_all {c.all_to_all_latency_us:.1f} us + "
              f"{c.all_to_all_gbit_s:.2f} Gbit/s, all_reduce {c.allreduce_latency_us:.1f} us + "
              f"{c.allreduce_gbit_s:.2f} Gbit/s, compute {profile.compute.us_per_sample:.2f} "
              "us/sample", highlight=False)  # type: ignore[union-attr]  # fmt: skip
    if document.get("intra_host"):
        out.print(f"  inside a host (rank 0 and a rank of its host): "
                  f"{profile.intra_host_latency_us:.1f} us + {profile.intra_host_gbit_s:.2f} "
                  "Gbit/s, the tier placements use within a host", highlight=False)  # fmt: skip
    if links is not None:
        err.print(f"measured on shaped links ({links.describe()})")
    err.print(f"use it with `time_profile: {out_path}` in a spec")
