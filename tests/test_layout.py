"""The namespace layout (docs/architecture.md): the stdlib ``platform`` is never shadowed."""

from __future__ import annotations

import importlib
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

import heraldbench

ROOT = Path(__file__).resolve().parents[1]
PORTIONS = ("platform", "pipelines", "api")
STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()


def test_stdlib_platform_is_the_real_one_in_process() -> None:
    assert Path(platform.__file__).resolve().parent == STDLIB
    assert platform.system()  # the attribute uuid needs; a shadowing package lacks it


def test_stdlib_platform_is_the_real_one_from_the_repo_root() -> None:
    code = (
        "import platform, uuid, sys; import heraldbench.platform, heraldbench.pipelines, "
        "heraldbench.api; print(platform.__file__); print(uuid.uuid4())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert Path(done.stdout.splitlines()[0]).resolve().parent == STDLIB


def test_heraldbench_is_a_namespace_with_three_portions() -> None:
    assert getattr(heraldbench, "__file__", None) is None
    for portion in PORTIONS:
        module = importlib.import_module(f"heraldbench.{portion}")
        assert Path(module.__file__).resolve().is_relative_to(ROOT / portion / "heraldbench")


def test_no_init_file_shadows_the_namespace() -> None:
    for portion in PORTIONS:
        assert not (ROOT / portion / "__init__.py").exists()
        assert not (ROOT / portion / "heraldbench" / "__init__.py").exists()
    assert "heraldbench" not in sys.stdlib_module_names
