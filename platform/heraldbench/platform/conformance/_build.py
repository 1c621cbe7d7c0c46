"""Building released C++ code into a Python extension, once, next to nothing half-written.

What the build needs (each named in the error when it is missing): a C++17 compiler (``$CXX``,
else ``c++``, ``g++`` or ``clang++``), pybind11 from PyPI (``pip install
'heraldbench[conformance]'``) and the Python development headers. The released sources are
compiled as they are, beside a shim of ours and the stand-in headers under ``shims/include``
for what they include from elsewhere (Boost's flat_set, ps-lite's server API).

A build lands in ``cache_dir/build-<digest>``, where the digest covers every source's bytes,
the flags, the compiler and the Python ABI, so an edited checkout builds anew. It is made in a
temporary folder beside it and renamed into place only once it imports: a failed or
interrupted build leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from heraldbench.platform.conformance._report import ConformanceError

__all__ = ["SHIMS", "Extension", "build_extension"]

#: Our shims and stand-in headers, shipped with heraldbench.
SHIMS = Path(__file__).resolve().parent / "shims"
_FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-pthread", "-w")
_COMPILERS = ("c++", "g++", "clang++")
_LOG_LINES = 25  # of the compiler's output, in the error of a failed build


@dataclass(frozen=True)
class Extension:
    """One extension module: released sources compiled with a shim of ours.

    Attributes:
        name: the module's name (the shim's ``PYBIND11_MODULE``).
        sources: the C++ files compiled, the shim among them.
        include_dirs: searched in order (stand-ins, then the checkout's own headers).
    """

    name: str
    sources: tuple[Path, ...]
    include_dirs: tuple[Path, ...]


def build_extension(extension: Extension, cache_dir: Path) -> ModuleType:
    """The extension built under ``cache_dir`` (compiled now unless an identical build is there),
    imported."""
    compiler = _compiler()
    includes = (*extension.include_dirs, Path(_pybind11_include()), Path(_python_include()))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = cache_dir / f"build-{_digest(extension, compiler, includes)}"
    library = target / f"{extension.name}{suffix}"
    if not library.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".building-", dir=cache_dir))
        try:
            _compile(compiler, extension, includes, work / library.name)
            _import(extension.name, work / library.name)  # a build that does not load is no build
            _move_into_place(work, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return _import(extension.name, library)


def _compile(compiler: str, extension: Extension, includes: tuple[Path, ...], out: Path) -> None:
    command = [
        compiler, *_FLAGS, *(f"-I{folder}" for folder in includes),
        *(str(source) for source in extension.sources), "-o", str(out),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise ConformanceError(f"building {extension.name} took over 600 s; gave up") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-_LOG_LINES:])
        raise ConformanceError(
            f"building {extension.name} from {extension.sources[0].parent} failed "
            f"({compiler}, exit {done.returncode}):\n{tail}"
        )


def _move_into_place(work: Path, target: Path) -> None:
    """Rename the finished build into place (one rename: a build is there whole or not at
    all); a concurrent identical build may have got there first."""
    try:
        os.rename(work, target)
    except OSError:
        if not target.is_dir():
            raise


def _import(name: str, library: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, library)
    if spec is None or spec.loader is None:
        raise ConformanceError(f"{library} is not a loadable extension")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise ConformanceError(f"the build of {name} does not load: {exc}") from None
    return module


def _compiler() -> str:
    named = os.environ.get("CXX")
    candidates = (named,) if named else _COMPILERS
    found = next(filter(None, map(shutil.which, candidates)), None)
    if found is None:
        looked = f"$CXX={named}" if named else ", ".join(_COMPILERS)
        raise ConformanceError(
            f"no C++17 compiler found (looked for {looked}); install one, e.g. "
            "`apt-get install g++`"
        )
    return found


def _pybind11_include() -> str:
    try:
        import pybind11
    except ImportError:
        raise ConformanceError(
            "pybind11 is not installed; `pip install 'heraldbench[conformance]'` (or pybind11)"
        ) from None
    return pybind11.get_include()


def _python_include() -> str:
    folder = sysconfig.get_paths()["include"]
    if not (Path(folder) / "Python.h").is_file():
        raise ConformanceError(
            f"the Python development headers are missing (no Python.h in {folder}); install "
            f"them, e.g. `apt-get install python3-dev`"
        )
    return folder


def _digest(extension: Extension, compiler: str, includes: tuple[Path, ...]) -> str:
    """A digest of everything the build depends on: sources, headers, flags, tools."""
    digest = hashlib.sha256()
    for part in (extension.name, compiler, sys.version, *_FLAGS, *map(str, includes)):
        digest.update(part.encode() + b"\0")
    headers = sorted(p for d in extension.include_dirs for p in d.rglob("*") if p.is_file())
    for path in (*extension.sources, *headers):
        digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
