"""The C++ build helper: built once per source digest, reused, and never half-written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from heraldbench.platform.conformance import ConformanceError
from heraldbench.platform.conformance._build import Extension, build_extension

pytestmark = pytest.mark.skipif(
    shutil.which("c++") is None and shutil.which("g++") is None, reason="no C++ compiler"
)

_SOURCE = """
#include <pybind11/pybind11.h>
PYBIND11_MODULE(_probe_ext, m) { m.def("answer", [] { return %d; }); }
"""


def _extension(tmp_path: Path, body: str) -> Extension:
    source = tmp_path / "src" / "probe.cc"
    source.parent.mkdir(exist_ok=True)
    source.write_text(body)
    return Extension("_probe_ext", (source,), (tmp_path / "src",))


def test_a_build_is_made_once_and_reused_until_a_source_changes(tmp_path: Path) -> None:
    pytest.importorskip("pybind11", reason="the build needs pybind11 ('.[conformance]')")
    cache = tmp_path / "cache"
    assert build_extension(_extension(tmp_path, _SOURCE % 41), cache).answer() == 41
    [first] = cache.iterdir()
    library = next(first.iterdir())
    built_at = library.stat().st_mtime_ns
    build_extension(_extension(tmp_path, _SOURCE % 41), cache)
    assert library.stat().st_mtime_ns == built_at  # not compiled again
    build_extension(_extension(tmp_path, _SOURCE % 42), cache)
    assert len(list(cache.iterdir())) == 2  # an edited source is a new build beside the old


def test_a_failed_build_leaves_no_folder(tmp_path: Path) -> None:
    pytest.importorskip("pybind11", reason="the build needs pybind11 ('.[conformance]')")
    cache = tmp_path / "cache"
    with pytest.raises(ConformanceError, match=r"building _probe_ext from .* failed"):
        build_extension(_extension(tmp_path, "this is not C++\n"), cache)
    assert list(cache.iterdir()) == []


def test_a_missing_compiler_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-anywhere")
    with pytest.raises(ConformanceError, match=r"no C\+\+17 compiler found .*no-such-compiler"):
        build_extension(_extension(tmp_path, _SOURCE % 1), tmp_path / "cache")
