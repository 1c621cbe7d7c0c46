"""Kernels that only compiled code calls are compiled without a Python entry point, and no
Python code calls them.

numba builds a CPython wrapper for every kernel it compiles, which unpacks each argument from a
Python object: for a kernel taking a bundle of dozens of arrays that is most of its compiling,
paid again on every fresh checkout. ``no_cpython_wrapper=True`` leaves it out, and then a call
from Python crashes the interpreter (there is nothing to call), so the rule is checked both ways
on the sources: a kernel that Python code refers to keeps its wrapper, and a kernel that only
kernels call drops it (inlined kernels have none to drop).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import heraldbench.platform as package

_ROOT = Path(package.__file__).resolve().parent


@dataclass
class _Module:
    name: str
    tree: ast.Module
    kernels: dict[str, ast.expr] = field(default_factory=dict)  # name -> its njit decorator


def _njit(decorator: ast.expr) -> bool:
    return "njit" in ast.unparse(decorator)


def _modules() -> dict[str, _Module]:
    modules = {}
    for path in sorted(_ROOT.rglob("*.py")):
        parts = path.relative_to(_ROOT.parent.parent).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        module = _Module(name, ast.parse(path.read_text()))
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef):
                for decorator in node.decorator_list:
                    if _njit(decorator):
                        module.kernels[node.name] = decorator
        modules[name] = module
    return modules


def _bindings(module: _Module, modules: dict[str, _Module]) -> dict[str, tuple[str, str | None]]:
    """Each top-level name of ``module``: (the module it comes from, the kernel's name in it,
    or None when the name is that module itself)."""
    bound: dict[str, tuple[str, str | None]] = {}
    for node in module.tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                local = alias.asname or alias.name
                bound[local] = (submodule, None) if submodule in modules else (node.module,
                                                                                 alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, None)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound[node.name] = (module.name, node.name)
    return bound


def _called_from_python(modules: dict[str, _Module]) -> set[tuple[str, str]]:
    """(module, kernel) pairs that code outside every kernel refers to."""
    found: set[tuple[str, str]] = set()
    for module in modules.values():
        bound = _bindings(module, modules)
        for node in _outside_kernels(module.tree):
            if isinstance(node, ast.Name) and node.id in bound:
                found.add(_as_kernel(bound[node.id]))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                source = bound.get(node.value.id)
                if source and source[1] is None:
                    found.add((source[0], node.attr))
    return {(m, k) for m, k in found if m in modules and k in modules[m].kernels}


def _as_kernel(binding: tuple[str, str | None]) -> tuple[str, str]:
    return binding[0], binding[1] or ""


def _outside_kernels(tree: ast.AST):
    """Every node of ``tree`` except kernel bodies, imports and definitions' own names."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.Import | ast.ImportFrom):
            continue
        if isinstance(child, ast.FunctionDef) and any(_njit(d) for d in child.decorator_list):
            continue
        yield child
        yield from _outside_kernels(child)


def _options(decorator: ast.expr) -> dict[str, object]:
    if not isinstance(decorator, ast.Call):
        return {}
    return {k.arg: ast.literal_eval(k.value) for k in decorator.keywords if k.arg}


def test_a_kernel_python_calls_keeps_its_wrapper_and_one_only_kernels_call_drops_it() -> None:
    modules = _modules()
    from_python = _called_from_python(modules)
    crashing, wrapped = [], []
    for module in modules.values():
        for name, decorator in module.kernels.items():
            options = _options(decorator)
            if options.get("inline") == "always":
                continue
            if (module.name, name) in from_python:
                if options.get("no_cpython_wrapper"):
                    crashing.append(f"{module.name}.{name}")
            elif not options.get("no_cpython_wrapper"):
                wrapped.append(f"{module.name}.{name}")
    assert from_python, "the check found no kernel called from Python: it reads nothing"
    assert crashing == [], "called from Python, compiled without a Python entry point"
    assert wrapped == [], "called only by kernels: compile it with no_cpython_wrapper=True"
