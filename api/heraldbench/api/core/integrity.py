"""Whether a SQLite app database is intact, and what to do when it is not.

A SQLite file can be damaged under a running service (truncated, overwritten, a disk error)
without any query failing at once: the service's connections keep serving pages from memory and
from the write-ahead log. :func:`sqlite_problem` looks at the file itself, through a connection of
its own opened read-only:

* its header (the first 100 bytes): a file in WAL mode always has one, so a short file or
  another header means it was truncated or replaced by something else (checked every time:
  it costs one read);
* ``PRAGMA quick_check`` (pages and indexes consistent) and the app's tables present;
  these scale with the file, so :class:`IntegrityWatch` runs them at most every
  :data:`FULL_CHECK_SECONDS`.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

__all__ = ["FULL_CHECK_SECONDS", "IntegrityWatch", "recovery_hint", "sqlite_problem"]

FULL_CHECK_SECONDS = 10.0
_HEADER = b"SQLite format 3\x00"


def recovery_hint(path: str) -> str:
    """How to recover a damaged app database at ``path``."""
    return (
        f"stop the service, keep what can be read (sqlite3 {path} .recover | sqlite3 "
        f"{path}.recovered), move the damaged file aside (mv {path} {path}.damaged; also its "
        f"-wal and -shm files) and start again: on {path}.recovered renamed to {path}, or afresh"
    )


def _header_problem(path: str) -> str | None:
    try:
        with open(path, "rb") as stream:
            header = stream.read(100)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if len(header) < 100:
        return f"is truncated ({len(header)} bytes where a database has at least 100)"
    if not header.startswith(_HEADER):
        return "is not a SQLite database any more (its header was overwritten)"
    return None


def _full_problem(path: str, tables: set[str]) -> str | None:
    uri = f"{Path(path).absolute().as_uri()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=5)
        try:
            verdict = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
            present = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        return f"is damaged ({exc})"
    if verdict != "ok":
        return f"is damaged (quick_check: {verdict})"
    missing = sorted(tables - present)
    if missing:
        return f"lacks the app's tables ({', '.join(missing)})"
    return None


def sqlite_problem(path: str, tables: set[str]) -> str | None:
    """What is wrong with the SQLite file at ``path`` that should hold ``tables``, or None."""
    return _header_problem(path) or _full_problem(path, tables)


class IntegrityWatch:
    """The header check every call, the full check at most every :data:`FULL_CHECK_SECONDS`
    (its verdict stands until the next one: a file restored meanwhile is seen again then)."""

    def __init__(self, path: str, tables: set[str]) -> None:
        self.path, self.tables = path, tables
        self._lock = threading.Lock()
        self._checked_at = float("-inf")
        self._full: str | None = None

    def check(self) -> str | None:
        header = _header_problem(self.path)
        if header is not None:
            return header
        with self._lock:
            if time.monotonic() - self._checked_at >= FULL_CHECK_SECONDS:
                self._full = _full_problem(self.path, self.tables)
                self._checked_at = time.monotonic()
            return self._full
