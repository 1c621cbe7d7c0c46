"""Scheduler plugins: a package installed beside heraldbench, with its own metadata, declaring
an entry point of ``heraldbench.schedulers``, is discovered at start-up and runs end to end; a
broken one is reported by name without taking the built-ins down (docs/extending.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Literal

import pytest
import yaml

PLUGIN = '''
"""contiguous: sample i of a global batch goes to worker i // m; write-through sync."""

from typing import Literal

import numpy as np

from heraldbench.platform.schedulers import SchedulerSpecBase
from heraldbench.platform.schedulers._composed import WRITE_THROUGH, Composed, PartitionRule

BLOCKS = PartitionRule("blocks", lambda s, ids, view, it: np.arange(s.global_batch) // s.batch_size)


class ContiguousSpec(SchedulerSpecBase):
    kind: Literal["contiguous"] = "contiguous"


class Contiguous(Composed):
    """Each worker trains one contiguous block of the global batch, written through."""

    kind = "contiguous"
    spec_cls = ContiguousSpec
    partition_rule = BLOCKS
    sync_rule = WRITE_THROUGH
'''

ENTRY_POINTS = """
[heraldbench.schedulers]
contiguous = hb_demo_plugin:Contiguous
broken = hb_demo_plugin_missing:Nothing
"""

SPEC = {
    "name": "plugin-demo",
    "dataset": {"kind": "synthetic-criteo", "samples": 3000, "scale": 0.001, "seed": 2},
    "cluster": {"workers": 2, "batch_size": 32},
    "cache": {"ratio": 0.3},
    "embedding_dim": 4,
    "schedulers": [{"kind": "contiguous"}, {"kind": "naive"}],
    "train": {"model": "small", "device": "cpu", "eval_fraction": 0.2, "max_iterations": 6},
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory laid out as an installed distribution: the package and its dist-info."""
    root = tmp_path_factory.mktemp("site")
    (root / "hb_demo_plugin").mkdir()
    (root / "hb_demo_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = root / "hb_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hb-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (root / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    return root


def _heraldbench(site: Path, *args: str) -> subprocess.CompletedProcess:
    """The ``heraldbench`` command in a fresh interpreter that sees the plugin's directory."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=site, timeout=300)  # fmt: skip


def test_the_plugin_is_listed_and_the_broken_one_reported_by_name(site: Path) -> None:
    done = _heraldbench(site, "schedulers")
    assert done.returncode == 0, done.stderr
    assert "contiguous" in done.stdout and "herald" in done.stdout and "naive" in done.stdout
    assert "'broken'" in done.stderr and "hb_demo_plugin_missing" in done.stderr


def test_the_plugin_simulates_and_trains_end_to_end(site: Path) -> None:
    simulated = _heraldbench(site, "simulate", "spec.yaml", "--json")
    assert simulated.returncode == 0, simulated.stderr
    runs = {run["scheduler"]: run for run in json.loads(simulated.stdout)["runs"]}
    plugin, naive = runs["contiguous"], runs["naive"]
    assert plugin["counts"]["lookups"] > 0 and plugin["counts"]["flush_push"] == 0
    assert plugin["counts"] != naive["counts"]  # its own partition, not naive's
    trained = _heraldbench(site, "train", "spec.yaml", "--json")
    assert trained.returncode == 0, trained.stderr
    runs = {run["scheduler"]: run for run in json.loads(trained.stdout)["runs"]}
    assert runs["contiguous"]["iterations"] == 6
    assert set(runs["contiguous"]["metrics"]) >= {"auc", "logloss"}


def test_the_plugin_runs_on_dask_workers(site: Path) -> None:
    """``heraldbench run``: the cluster's worker processes discover the plugin themselves."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path]),
           "HERALDBENCH_HOME": str(site / "home")}  # fmt: skip
    code = "from heraldbench.api.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "run", "spec.yaml", "--no-mlflow",
                           "--json", "--workers", "1"], capture_output=True, text=True,
                          env=env, cwd=site, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"contiguous"' in done.stdout


def test_a_registered_kind_validates_without_reimporting_the_spec(monkeypatch) -> None:
    """The spec's scheduler union is the registry at validation time, not at import."""
    from heraldbench.platform.schedulers import _base
    from heraldbench.platform.spec import parse_spec

    from heraldbench.platform.schedulers._composed import RANDOM, WRITE_THROUGH, Composed

    class LateSpec(_base.SchedulerSpecBase):
        kind: Literal["contiguous-late"] = "contiguous-late"

    class Late(Composed):
        kind, spec_cls = "contiguous-late", LateSpec
        partition_rule, sync_rule = RANDOM, WRITE_THROUGH

    monkeypatch.setitem(_base._REGISTRY, "contiguous-late", Late)  # undone after the test
    spec = parse_spec({**SPEC, "schedulers": [{"kind": "contiguous-late"}]})
    assert type(spec.schedulers[0]) is LateSpec


def test_a_spec_naming_an_unknown_kind_still_lists_the_plugin(site: Path) -> None:
    (site / "bad.yaml").write_text(yaml.safe_dump({**SPEC, "schedulers": [{"kind": "contigous"}]}))
    done = _heraldbench(site, "simulate", "bad.yaml")
    assert done.returncode == 2
    assert "contigous" in done.stderr and "'contiguous'" in done.stderr


def test_the_plugin_validates_in_the_service_and_its_editor(site: Path) -> None:
    code = textwrap.dedent("""
        import json, yaml
        from fastapi.testclient import TestClient
        from heraldbench.api.core.config import Settings
        from heraldbench.api.main import create_app
        from heraldbench.api.routes.health import _knob_defaults
        from heraldbench.platform.schedulers import registered
        spec = yaml.safe_load(open("spec.yaml"))
        app = create_app(Settings(home="home", track=False, web_dir="no-web"))
        client = TestClient(app, base_url="http://127.0.0.1")  # a trusted host; no lifespan:
        # validation needs no database or cluster
        ok = client.post("/api/specs/validate", json=spec)
        bad = client.post("/api/specs/validate",
                          json={**spec, "schedulers": [{"kind": "contiguous", "x": 1}]})
        editor = {kind: _knob_defaults(cls.spec_cls) for kind, cls in registered().items()}
        print(json.dumps([ok.status_code, bad.status_code, bad.json(), "contiguous" in editor]))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path]),
           "HERALDBENCH_HOME": str(site / "home")}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=site, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    ok, bad, problems, listed = json.loads(done.stdout.strip().splitlines()[-1])
    assert (ok, bad, listed) == (200, 422, True)
    assert "schedulers.0.x" in json.dumps(problems)
