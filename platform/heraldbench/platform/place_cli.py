"""``heraldbench place``: the sharded paradigm's placements over a spec's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from heraldbench.platform.cli import SpecPath, _user_errors, app, out
from heraldbench.platform.exceptions import SpecError


def _knobs(pairs: list[str], batch_size: int) -> dict[str, dict[str, Any]]:
    """``kind.name=value`` pairs (values read as JSON, else as text); flexshard's batch size
    is the spec's unless given."""
    knobs: dict[str, dict[str, Any]] = {"flexshard": {"batch_size": batch_size}}
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
    return knobs


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
    hosts: Annotated[int, typer.Option(help="hosts H")] = 1,
    devices_per_host: Annotated[int, typer.Option(help="devices per host D")] = 0,
    placement: Annotated[list[str] | None, typer.Option(help="a placement (repeat); all")] = None,
    knob: Annotated[list[str] | None, typer.Option(help="KIND.NAME=VALUE (repeat)")] = None,
    device_memory: Annotated[str, typer.Option(help="memory per device")] = "16GiB",
    host_memory: Annotated[str, typer.Option(help="memory per host for host-held rows")] = "256GiB",
    profile: Annotated[str, typer.Option(help="hardware profile of the inter-host tier")] = "tcp-100g",
    intra_gbit_s: Annotated[float | None, typer.Option(
        help="intra-host bandwidth, Gbit/s (default: the profile's)")] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="first iterations only")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Place the spec's tables with each placement and count its traffic over the trace."""
    from heraldbench.platform.placements import Topology, registered
    from heraldbench.platform.placements.runs import check_workers, run_placements, tables_of
    from heraldbench.platform.placements.timing import TierLinks
    from heraldbench.platform.spec import load_spec
    from heraldbench.platform.units import parse_bytes

    with _user_errors():
        spec = load_spec(Path(spec_path))
        workers = spec.cluster.workers
        topology = Topology(hosts, devices_per_host or max(workers // max(hosts, 1), 1),
                            parse_bytes(device_memory), parse_bytes(host_memory))
        check_workers(topology, workers)
        source = spec.dataset.open()
        tables = tables_of(source, spec.embedding_dim)
        runs = run_placements(source, tables, topology, placement or sorted(registered()),
                              spec.cluster.batch_size, TierLinks.from_profile(profile, intra_gbit_s),
                              _knobs(knob or [], spec.cluster.batch_size), iterations)
        rows = [run.summary() for run in runs]
    if as_json:
        out.print_json(json.dumps(rows))
    else:
        out.print(_table(rows))
