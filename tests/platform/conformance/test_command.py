"""``heraldbench conformance`` on bad input, run as a user runs it: a clear error naming the
path or field, exit status 2, and nothing half-written in the cache folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from heraldbench.platform.conformance import SYSTEMS as REGISTERED
from heraldbench.platform.conformance import ConformanceError, herald, system_module
from heraldbench.platform.data import SampleChunk, TableLayout, TraceSource
from heraldbench.platform.spec import parse_spec

#: The files a Herald checkout is recognised by, as stand-ins of our own (no released code):
#: enough to pass the checkout check and to reach the compiler.
HERALD_FILES = ("laia/src/laia_scheduler.cc", "laia/src/array.cc", "laia/src/thread_pool.cc",
                "laia/src/utils.cc", "laia/include/laia_scheduler.h",
                "laia/include/mini_lru_cache.h")  # fmt: skip


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    env = os.environ | {"HERALDBENCH_HOME": str(home), "COLUMNS": "1000"}  # no wrapped lines
    return subprocess.run([sys.executable, "-c", code, "conformance", *args],
                          capture_output=True, text=True, timeout=600, env=env)  # fmt: skip


def _fake_herald(root: Path, broken: bool = False) -> Path:
    for relative in HERALD_FILES:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("int this_does_not_compile(\n" if broken else "// empty\n")
    return root


def _cache_entries(home: Path) -> list[str]:
    folder = home / "conformance"
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_a_folder_that_is_not_the_checkout_is_refused_naming_the_file(tmp_path: Path) -> None:
    done = _cli(tmp_path / "home", "herald", "--reference", str(tmp_path))
    assert done.returncode == 2, done.stdout
    assert str(tmp_path) in done.stderr and "laia/src/laia_scheduler.cc" in done.stderr
    assert _cache_entries(tmp_path / "home") == []


def test_another_systems_checkout_is_refused(tmp_path: Path) -> None:
    done = _cli(tmp_path / "home", "het", "--reference", str(_fake_herald(tmp_path / "herald")))
    assert done.returncode == 2
    assert "not a checkout of HET" in done.stderr and "hetu_cache/src/cache.cc" in done.stderr


def test_a_reference_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    done = _cli(tmp_path / "home", "herald", "--reference", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "is not a folder" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("ghost",), "unknown system 'ghost'"),
        (("herald", "--variant", "newest"), "--variant 'newest'"),
        (("herald", "--spec", "a.yaml", "--trace", "b.txt"), "not both"),
        (("herald", "--trace", "missing.txt"), "no such file"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    reference = _fake_herald(tmp_path / "herald")
    system, *rest = args
    done = _cli(tmp_path / "home", system, "--reference", str(reference), *rest)
    assert done.returncode == 2 and message in done.stderr


def test_a_scheduler_the_released_code_cannot_run_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    spec = {"name": "far", "dataset": {"kind": "synthetic-criteo", "samples": 4096,
                                       "scale": 0.001},
            "cluster": {"workers": 2, "batch_size": 8}, "cache": {"rows": 1000},
            "schedulers": [{"kind": "naive"}, {"kind": "herald", "lookahead": 3}]}  # fmt: skip
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    done = _cli(tmp_path / "home", "herald", "--reference", str(_fake_herald(tmp_path / "h")),
                "--spec", str(path))  # fmt: skip
    assert done.returncode == 2 and "schedulers[1].lookahead" in done.stderr


@pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                    reason="no C++ compiler to fail with")  # fmt: skip
def test_a_failing_build_names_the_error_and_leaves_nothing_behind(tmp_path: Path) -> None:
    pytest.importorskip("pybind11", reason="the build needs pybind11 ('.[conformance]')")
    reference = _fake_herald(tmp_path / "herald", broken=True)
    home = tmp_path / "home"
    done = _cli(home, "herald", "--reference", str(reference))
    assert done.returncode == 2
    assert "building _herald_shim" in done.stderr and "failed" in done.stderr
    assert "laia_scheduler.cc" in done.stderr  # the compiler's own lines name the file
    assert _cache_entries(home) in ([], ["herald-no-git"])  # the folder, empty


class _WideIds(TraceSource):
    """A trace whose second field holds a row id beyond a C++ int (a heraldbench trace cannot:
    its ids are int32), to show how the released code's key type is guarded."""

    layout = TableLayout(("a", "wide"), (4, 8))
    num_samples = 64
    num_dense = 0

    def _blocks(self):
        ids = np.zeros((64, 2), np.int64)
        ids[:, 1] = 4
        ids[40, 1] = 2**31
        yield SampleChunk.ids_alone(ids, 0)


def test_ids_beyond_int_are_refused_naming_the_field_before_any_build(tmp_path: Path) -> None:
    spec = parse_spec({"name": "wide", "dataset": {"kind": "synthetic-criteo", "samples": 64},
                       "cluster": {"workers": 2, "batch_size": 4}, "cache": {"rows": 100},
                       "schedulers": [{"kind": "herald"}]})  # fmt: skip
    cache_dir = tmp_path / "cache"
    with pytest.raises(ConformanceError, match=r"field 'wide' \(sample 40\): row id 2,147,483,648"):
        herald.compare(_fake_herald(tmp_path / "herald"), spec, _WideIds(), variant="released",
                       cache_dir=cache_dir)  # fmt: skip
    assert not cache_dir.exists()


def test_a_system_without_its_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTERED, "ghost", "heraldbench.platform.conformance.ghost")
    with pytest.raises(ConformanceError, match="conformance check of 'ghost' is not installed"):
        system_module("ghost")
