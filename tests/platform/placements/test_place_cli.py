"""``heraldbench place`` run as a user runs it: a subprocess on a spec file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

SPEC = {
    "name": "place",
    "dataset": {"kind": "synthetic-criteo", "samples": 20000, "scale": 0.002, "seed": 1},
    "cluster": {"workers": 4, "batch_size": 64},
    "embedding_dim": 16,
    "schedulers": [{"kind": "naive"}],
}


def _place(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, "place", str(path), *args],
                          check=False, capture_output=True, text=True, timeout=300)


def test_place_reports_every_placement_asked(tmp_path: Path) -> None:
    done = _place(tmp_path, "--hosts", "2", "--devices-per-host", "2", "--json",
                  "--placement", "row-wise", "--placement", "data-parallel",
                  "--placement", "flexshard", "--knob", "flexshard.memory_headroom=0.5")
    assert done.returncode == 0, done.stderr
    rows = {r["placement"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"row-wise", "data-parallel", "flexshard"}
    assert rows["row-wise"]["sync_bytes_per_iteration"] == 0
    assert rows["data-parallel"]["inter_host_bytes_per_iteration"] > 0  # its all-reduce
    assert rows["flexshard"]["inter_host_bytes_per_iteration"] < \
        rows["row-wise"]["inter_host_bytes_per_iteration"]


def test_hosts_times_devices_must_match_the_workers(tmp_path: Path) -> None:
    done = _place(tmp_path, "--hosts", "3", "--devices-per-host", "2")
    assert done.returncode == 2
    assert "cluster.workers is 4" in done.stderr and "3 × 2 = 6" in done.stderr


def test_a_plan_over_device_memory_exits_2_naming_it(tmp_path: Path) -> None:
    done = _place(tmp_path, "--hosts", "2", "--placement", "table-wise", "--device-memory", "1KiB")
    assert done.returncode == 2
    assert "device_memory_bytes is 1,024" in done.stderr and "table 'C" in done.stderr


def test_an_unknown_placement_exits_2_listing_the_known(tmp_path: Path) -> None:
    done = _place(tmp_path, "--placement", "diagonal")
    assert done.returncode == 2 and "flexshard" in done.stderr
