"""``heraldbench place``: the sharded paradigm's placements over a spec's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from heraldbench.platform.cli import SpecPath, _user_errors, app, out
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.placement_spec import run_knobs
from heraldbench.platform.placements import Topology, registered
from heraldbench.platform.placements.runs import check_workers, run_placements
from heraldbench.platform.placements.timing import TierLinks
from heraldbench.platform.units import parse_bytes


def _knobs(pairs: list[str], spec: Any) -> dict[str, dict[str, Any]]:
    """The spec's placements' knobs, then ``kind.name=value`` pairs (values read as JSON, else
    as text); a batch-size knob is the spec's unless given (``placement_spec.run_knobs``)."""
    knobs: dict[str, dict[str, Any]] = {e.kind: e.knobs() for e in spec.placements}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        kind, dot, name = key.partition(".")
        if not (eq and dot and kind and name):
            raise SpecError(f"--knob must read KIND.NAME=VALUE, got {pair!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        knobs.setdefault(kind, {})[name] = value
    return {kind: run_knobs(kind, given, spec.cluster.batch_size) if kind in registered() else given
            for kind, given in knobs.items()}


def _topology(cluster: Any, hosts: int | None, devices_per_host: int | None,
              device_memory: str | None, host_memory: str | None) -> Topology:
    """The spec's cluster, with the options given in its place."""
    if hosts is not None and devices_per_host is None:
        devices_per_host = max(cluster.workers // hosts, 1)
    topology = Topology(
        cluster.hosts if hosts is None else hosts,
        devices_per_host or cluster.devices_on_each_host,
        parse_bytes(device_memory) if device_memory else int(cluster.device_memory),
        parse_bytes(host_memory) if host_memory else int(cluster.host_memory))
    check_workers(topology, cluster.workers)
    return topology


def _table(rows: list[dict[str, Any]]) -> Table:
    table = Table("placement", "intra-host MB/it", "inter-host MB/it", "sync MB/it",
                  "max device memory MiB", "load balance", "comm ms/it")
    for r in rows:
        table.add_row(r["placement"], f"{r['intra_host_bytes_per_iteration'] / 1e6:.3f}",
                      f"{r['inter_host_bytes_per_iteration'] / 1e6:.3f}",
                      f"{r['sync_bytes_per_iteration'] / 1e6:.3f}",
                      f"{r['device_memory_max_bytes'] / 2**20:.1f}", f"{r['load_balance']:.3f}",
                      f"{r['comm_ms_per_iteration']:.3f}")
    return table


@app.command()
def place(
    spec_path: SpecPath,
    hosts: Annotated[int | None, typer.Option(help="hosts H (default: cluster.hosts)")] = None,
    devices_per_host: Annotated[
        int | None, typer.Option(help="devices per host D (default: cluster.devices_per_host)")
    ] = None,
    placement: Annotated[
        list[str] | None, typer.Option(help="a placement (repeat); the spec's, else all")
    ] = None,
    knob: Annotated[list[str] | None, typer.Option(help="KIND.NAME=VALUE (repeat)")] = None,
    device_memory: Annotated[
        str | None, typer.Option(help="memory per device (default: cluster.device_memory)")
    ] = None,
    host_memory: Annotated[
        str | None, typer.Option(help="memory per host for host-held rows (cluster.host_memory)")
    ] = None,
    profile: Annotated[str, typer.Option(help="hardware profile of the inter-host tier")] = "tcp-100g",
    intra_gbit_s: Annotated[
        float | None, typer.Option(help="intra-host Gbit/s (default: cluster.intra_gbit_s, "
                                   "else the profile's)")
    ] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="first iterations only")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Place the spec's tables with each placement and count its traffic over the trace; the
    cluster is the spec's (``cluster.hosts``, ``devices_per_host``, memory), the options win."""
    from heraldbench.platform.placements.runs import tables_of
    from heraldbench.platform.spec import load_spec

    with _user_errors():
        spec = load_spec(Path(spec_path))
        cluster = spec.cluster
        topology = _topology(cluster, hosts, devices_per_host, device_memory, host_memory)
        source = spec.dataset.open()
        kinds = placement or list(dict.fromkeys(e.kind for e in spec.placements)) \
            or sorted(registered())
        links = TierLinks.from_profile(profile, intra_gbit_s or cluster.intra_gbit_s,
                                       cluster.intra_latency_us)
        runs = run_placements(source, tables_of(source, spec.embedding_dim), topology, kinds,
                              cluster.batch_size, links, _knobs(knob or [], spec), iterations)
        rows = [run.summary() for run in runs]
    if as_json:
        out.print_json(json.dumps(rows))
    else:
        out.print(_table(rows))
        for row in rows:
            if row["fallback"]:
                out.print(f"{row['placement']}: {row['fallback']}")
