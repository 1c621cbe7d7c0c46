"""The app database: engine set-up for SQLite and PostgreSQL, and the session factories.

Writers take their locks up front so concurrent submissions and task updates never deadlock or
lose an update:

* SQLite runs in WAL mode with a 30 s busy timeout; a *write* session starts with
  ``BEGIN IMMEDIATE`` (the write lock at the start, so a transaction that read a row never meets
  ``SQLITE_BUSY_SNAPSHOT`` when it writes, which the busy timeout would not retry). Read sessions
  start a deferred transaction and never block writers.
* PostgreSQL runs at READ COMMITTED; code that updates an experiment's progress locks the
  experiment row first (``SELECT ... FOR UPDATE``, ignored by SQLite), always experiment before run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlalchemy import JSON, Engine, create_engine, event, text
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

__all__ = ["Base", "Database", "forget_worker_database", "make_engine", "worker_database"]

_IMMEDIATE = "heraldbench_sqlite_immediate"
_BUSY_TIMEOUT_MS = 30_000


class Base(DeclarativeBase):
    """Declarative base of the app's tables; ``dict``/``list`` columns are JSON."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


def _is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def _normalise(url: str) -> str:
    """``postgresql://`` and ``postgres://`` use psycopg 3 (the only driver installed)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str, *, pool_size: int = 10, max_overflow: int = 30) -> Engine:
    """An engine for ``url`` set up as the module docstring says."""
    url = _normalise(url)
    if not _is_sqlite(url):
        return create_engine(
            url, pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=True, pool_timeout=60
        )
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_MS / 1000},
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_timeout=60,
    )
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # the driver's own BEGIN is replaced by _sqlite_begin
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")  # safe under WAL: a crash loses no committed txn
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    immediate = connection.get_execution_options().get(_IMMEDIATE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


@dataclass
class Database:
    """One app database: an engine and its read and write session factories.

    Use ``with db.read() as session`` for queries and ``with db.write() as session`` for
    changes (committed on exit, rolled back on an exception).
    """

    url: str
    engine: Engine

    @classmethod
    def connect(cls, url: str, **engine_kwargs: Any) -> Database:
        """Open (and create the tables of) the database at ``url``."""
        from heraldbench.api import models  # noqa: F401 - registers the tables on Base

        engine = make_engine(url, **engine_kwargs)
        database = cls(_normalise(url), engine)
        Base.metadata.create_all(engine)
        return database

    def __post_init__(self) -> None:
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        writer = self.engine.execution_options(**{_IMMEDIATE: True})
        self._write = sessionmaker(writer, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return _is_sqlite(self.url)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for queries (its transaction is rolled back on exit)."""
        with self._read() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose transaction holds the write lock (SQLite) and commits on exit."""
        with self._write.begin() as session:
            yield session

    def ping(self) -> None:
        """Raise if the database cannot be reached."""
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()


_WORKER_DATABASES: dict[str, Database] = {}
_WORKER_LOCK = threading.Lock()


def worker_database(url: str) -> Database:
    """The database at ``url`` for Dask tasks: one small engine per worker process and URL."""
    with _WORKER_LOCK:
        database = _WORKER_DATABASES.get(url)
        if database is None:
            database = Database(_normalise(url), make_engine(url, pool_size=2, max_overflow=4))
            _WORKER_DATABASES[url] = database
        return database


def forget_worker_database(url: str) -> None:
    """Close this process's task engine for ``url`` (a database about to be dropped)."""
    with _WORKER_LOCK:
        database = _WORKER_DATABASES.pop(_normalise(url), None) or _WORKER_DATABASES.pop(url, None)
    if database is not None:
        database.dispose()
