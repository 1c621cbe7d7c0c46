"""The one error hierarchy of heraldbench.

Every error a user can cause or meet derives from :class:`HeraldbenchError`; the API maps the
classes below to HTTP status codes in one place (``heraldbench.api``)::

    HeraldbenchError
    ├── SpecError(ValueError)            a spec or knob is invalid            -> 422
    │   └── SpecFieldError               ... with each problem's field and value
    ├── DataError(ValueError)            a dataset cannot be read             -> 422
    │   ├── TraceFormatError             a malformed line, with file and line
    │   └── ProfileError                 a bad workload profile, with file and field
    ├── UnknownNameError(KeyError)       an unknown scheduler / policy name   -> 422
    ├── NotFoundError(LookupError)       an unknown experiment, run, dataset  -> 404
    ├── CapacityError(ValueError)        a cache cannot hold what it must     -> 422
    ├── UnavailableError(ConnectionError)  a Dask scheduler or tracking server
    │   │                                  cannot be reached                  -> 503
    │   └── LinksUnavailableError          shaped links need root, ip and tc  -> 503
    └── InvariantViolation(AssertionError)  the accounting broke     -> 500
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "CapacityError",
    "DataError",
    "DistributedError",
    "HeraldbenchError",
    "InvariantViolation",
    "LinksUnavailableError",
    "NotFoundError",
    "ProfileError",
    "SpecError",
    "SpecFieldError",
    "TraceFormatError",
    "UnavailableError",
    "UnknownNameError",
]


class HeraldbenchError(Exception):
    """Root of every error heraldbench raises on purpose."""


class SpecError(HeraldbenchError, ValueError):
    """An experiment spec, or a knob passed to a constructor, is invalid."""


class SpecFieldError(SpecError):
    """A spec error whose problems are known field by field.

    Attributes:
        problems: ``{"field": dotted path, "message": str, "value": the value given}`` each.
    """

    def __init__(self, problems: list[dict[str, Any]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{p['field']}: {p['message']}" for p in problems))


class DataError(HeraldbenchError, ValueError):
    """A dataset cannot be read or is inconsistent."""


class TraceFormatError(DataError):
    """A raw data file has a malformed line.

    Attributes:
        path: the file.
        line: 1-based line number.
    """

    def __init__(self, path: str | Path, line: int, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}")


class ProfileError(DataError):
    """A workload profile file is unreadable, malformed, from a newer version or out of range.

    Attributes:
        path: the file.
        field: the dotted path of the offending field, or None for the file as a whole.
    """

    def __init__(self, path: str | Path, field: str | None, reason: str) -> None:
        self.path = str(path)
        self.field = field
        self.reason = reason
        where = f" field {field}" if field else ""
        super().__init__(f"profile {self.path}{where}: {reason}")


class UnknownNameError(HeraldbenchError, KeyError):
    """A registry lookup failed; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class NotFoundError(HeraldbenchError, LookupError):
    """An experiment, run, study or dataset id does not exist."""


class CapacityError(HeraldbenchError, ValueError):
    """A cache is too small for what the accounting requires of it."""


class UnavailableError(HeraldbenchError, ConnectionError):
    """A service heraldbench relies on (Dask scheduler, MLflow server) cannot be reached."""


class LinksUnavailableError(UnavailableError):
    """Shaped links (ranks in network namespaces) cannot be made here: not root, no ``ip`` or
    ``tc``, or the kernel refused a namespace, veth or qdisc."""


class DistributedError(HeraldbenchError, RuntimeError):
    """A rank of a distributed training died, hung or failed; the message names the rank."""


class InvariantViolation(HeraldbenchError, AssertionError):
    """The simulator state broke one of the invariants of docs/semantics.md."""
