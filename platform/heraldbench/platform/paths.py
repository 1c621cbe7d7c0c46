"""The files a spec names, and the one rule that confines them to a service's data folders.

Every field of a spec that names a file or a folder carries a :class:`NamesFile` marker (its JSON
Schema says ``"format": "path"``). Validating a spec reads no file; :func:`named_files` finds
every marked field of a validated spec, wherever it sits (a dataset, a time profile, anything
added later), so a service confines them all with :meth:`PathPolicy.confine_spec` before any
file is read, and a field added later is confined without anyone remembering to.

The rule (:meth:`PathPolicy.confine`):

* a relative path is read from the service's working directory, else from the first data
  folder; the first candidate that exists wins (``~`` is a name like any other);
* symbolic links are followed, and the target must lie under a data folder;
* only what the field names may be opened: a regular file (or, for a folder field, a folder);
  FIFOs, sockets and devices are refused from their ``stat`` alone, never opened, and so is
  anything under the kernel's pseudo-file systems (``/proc``, ``/sys``, ``/dev``), whose files
  look regular but are views of the running system;
* a refusal names the path as it was given and the data folders, never where a link points.

The command line applies no policy: its user reads their own files.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from heraldbench.platform.exceptions import SpecError, SpecFieldError

__all__ = ["NamesFile", "NamedFile", "PathPolicy", "named_files"]

#: Pseudo-file systems: what they hold describes the running machine, not data.
_SYSTEM_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))


@dataclass(frozen=True)
class NamesFile:
    """Marks a spec field that names a file (or a folder); validation reads none of it.

    Attributes:
        kind: ``file`` (a regular file) or ``folder``.
        builtins: values that are names of built-in resources, not paths (workload profiles).
    """

    kind: Literal["file", "folder"] = "file"
    builtins: tuple[str, ...] = ()

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return {**handler(schema), "format": "path"}


@dataclass(frozen=True)
class NamedFile:
    """One marked field of a spec: its dotted location, the model holding it, and its value."""

    field: str
    owner: BaseModel
    name: str
    marker: NamesFile

    @property
    def value(self) -> Any:
        return getattr(self.owner, self.name)


def _marker(model: type[BaseModel], name: str) -> NamesFile | None:
    info = model.model_fields[name]
    return next((m for m in info.metadata if isinstance(m, NamesFile)), None)


def named_files(model: BaseModel, prefix: str = "") -> Iterator[NamedFile]:
    """Every marked field of ``model`` and of the models it holds, with a path as its value
    (a built-in name or an unset field names no file)."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        where = f"{prefix}{name}"
        marker = _marker(type(model), name)
        if marker is not None:
            if value is not None and str(value) not in marker.builtins:
                yield NamedFile(where, model, name, marker)
            continue
        for index, child in _children(value):
            yield from named_files(child, f"{where}{index}.")


def _children(value: Any) -> Iterator[tuple[str, BaseModel]]:
    if isinstance(value, BaseModel):
        yield "", value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if isinstance(item, BaseModel):
                yield f".{i}", item
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, BaseModel):
                yield f".{key}", item


def _refuse(field: str, given: Any, message: str) -> SpecFieldError:
    return SpecFieldError([{"field": field, "message": message, "value": str(given)}])


@dataclass(frozen=True)
class PathPolicy:
    """The data folders a service reads from (module docstring).

    Attributes:
        roots: the folders, absolute; a path must lie under one of them.
        cwd: where a relative path is read from first (the service's working directory).
    """

    roots: tuple[Path, ...]
    cwd: Path

    @classmethod
    def of(cls, folders: tuple[Path, ...] | list[Path]) -> PathPolicy:
        roots = tuple(Path(os.path.realpath(Path(f).expanduser())) for f in folders)
        if not roots:
            raise SpecError("a path policy needs at least one data folder")
        return cls(roots, Path.cwd())

    def confine(self, given: Any, field: str, kind: str = "file") -> Path:
        """``given`` resolved, if it names a ``kind`` under a data folder; else a
        :class:`SpecError` naming ``field`` (nothing is opened either way)."""
        text = str(given)
        if not text or "\x00" in text:
            raise _refuse(field, given, "give the path of a file under a data folder")
        candidates = self._candidates(Path(text), field, given)  # "~" is no one's home here
        inside = [(shown, real) for shown, real in candidates if self._under_roots(real)]
        if not inside:
            raise _refuse(
                field, given, f"{text} does not lie under a data folder "
                f"(HERALDBENCH_DATA_DIRS: {self._folders()})",
            )  # fmt: skip
        existing = [(shown, real) for shown, real in inside if _lstat_ok(real)]
        shown, real = (existing or inside)[0]
        self._check_kind(real, shown, kind, field, given)
        return real

    def confine_spec(self, spec: BaseModel) -> BaseModel:
        """``spec`` with every named file confined (:func:`named_files`), as absolute paths."""
        for named in list(named_files(spec)):
            path = self.confine(named.value, named.field, named.marker.kind)
            spec = _replaced(spec, named.field.split("."), path, type(named.value))
        return spec

    def _candidates(self, given: Path, field: str, raw: Any) -> list[tuple[str, Path]]:
        bases = [Path("/")] if given.is_absolute() else [self.cwd, self.roots[0]]
        found = []
        for base in bases:
            joined = base / given
            try:
                real = Path(os.path.realpath(joined))
            except (OSError, ValueError):  # too long, a name the file system refuses
                raise _refuse(field, raw, "not a usable path") from None
            found.append((os.path.normpath(joined), real))
        return found

    def _under_roots(self, real: Path) -> bool:
        if any(real == s or real.is_relative_to(s) for s in _SYSTEM_ROOTS):
            return False
        return any(real.is_relative_to(root) for root in self.roots)

    def _check_kind(self, real: Path, shown: str, kind: str, field: str, given: Any) -> None:
        try:
            mode = real.stat().st_mode  # follows the links already resolved; opens nothing
        except (OSError, ValueError):
            raise _refuse(field, given, f"{shown} does not exist") from None
        wanted = stat.S_ISDIR(mode) if kind == "folder" else stat.S_ISREG(mode)
        if not wanted:
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise _refuse(field, given, f"{shown} is {what}; give a {kind} under a data folder")

    def _folders(self) -> str:
        return ", ".join(str(r) for r in self.roots)


def _lstat_ok(path: Path) -> bool:
    try:
        path.lstat()
    except (OSError, ValueError):
        return False
    return True


def _replaced(model: BaseModel, steps: list[str], value: Path, was: type) -> BaseModel:
    """``model`` with the field at ``steps`` set to ``value`` (a str where the field held one)."""
    head, *rest = steps
    current = getattr(model, head)
    if not rest:
        return model.model_copy(update={head: str(value) if was is str else value})
    if isinstance(current, (list, tuple)):
        index, *deeper = rest
        items = list(current)
        items[int(index)] = _replaced(items[int(index)], deeper, value, was)
        return model.model_copy(update={head: type(current)(items)})
    return model.model_copy(update={head: _replaced(current, rest, value, was)})
