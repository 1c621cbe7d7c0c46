"""The layout (docs/architecture.md): the stdlib ``platform`` is never shadowed, and the
engine's layers import only what they may (read from the source with ``ast``, function-level
imports included)."""

from __future__ import annotations

import ast
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


# --- the layers' imports -----------------------------------------------------------------------

ENGINE = "heraldbench.platform"


def _modules() -> dict[str, Path]:
    """Every module of the three portions, by dotted name (a package by its own name)."""
    found = {}
    for portion in PORTIONS:
        base = ROOT / portion
        for path in (base / "heraldbench").rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """The heraldbench modules ``name`` imports anywhere in its file (``from a import b`` names
    ``a.b`` where that is a module)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES)
    return {m for m in found if m.startswith("heraldbench.")}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _imported_from(importers: str, imported: tuple[str, ...]) -> list[str]:
    """``importer -> module`` for every module under ``importers`` importing one under any of
    ``imported``."""
    return sorted(
        f"{name} -> {target}"
        for name in MODULES if _within(name, importers)
        for target in _imports(name) if any(_within(target, other) for other in imported)
    )  # fmt: skip


def test_the_layout_walk_sees_the_imports_it_checks() -> None:
    """The walk itself: a known top-level and a known function-level import are seen."""
    assert f"{ENGINE}.contract" in _imports(f"{ENGINE}.counters")
    assert f"{ENGINE}.distributed" in _imports(f"{ENGINE}.training")  # inside functions


def test_no_import_cycle_between_the_trainers() -> None:
    """distributed/ builds on train/'s public modules; train/ never imports distributed/."""
    assert _imported_from(f"{ENGINE}.train", (f"{ENGINE}.distributed",)) == []
    assert _imported_from(f"{ENGINE}.distributed", (f"{ENGINE}.train",))  # the one direction


def test_no_module_imports_another_packages_private_module() -> None:
    """A module ``a.b._c`` is imported only from inside ``a.b``."""
    wrong = []
    for name in MODULES:
        for target in _imports(name):
            parts = target.split(".")
            private = next((i for i, p in enumerate(parts) if p.startswith("_")
                            and not p.startswith("__")), None)  # fmt: skip
            if private is not None and not _within(name, ".".join(parts[:private])):
                wrong.append(f"{name} -> {target}")
    assert wrong == []


def test_the_data_layer_imports_nothing_above_it() -> None:
    above = ("sim", "schedulers", "train", "distributed", "runner", "training", "spec", "contract")
    assert _imported_from(f"{ENGINE}.data", tuple(f"{ENGINE}.{m}" for m in above)) == []


def test_executors_import_no_results_layer() -> None:
    """The trainers and the simulator take a scheduler and a trace; the runner and the
    training driver above them assemble results."""
    results = tuple(f"{ENGINE}.{m}" for m in ("runner", "training", "report", "comparison"))
    for executor in ("sim", "train", "distributed"):
        assert _imported_from(f"{ENGINE}.{executor}", results) == []


def test_placements_build_on_data_and_foundations_alone() -> None:
    """The sharded paradigm sits beside the schedulers: it reads traces, never the cache
    paradigm's contract, schedulers, executors, spec or results."""
    above = ("contract", "counters", "schedulers", "sim", "train", "distributed", "spec",
             "runner", "training", "report", "comparison", "cli")
    assert _imported_from(f"{ENGINE}.placements", tuple(f"{ENGINE}.{m}" for m in above)) == []
