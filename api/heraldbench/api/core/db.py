"""The app database: engine set-up for SQLite and PostgreSQL, and the session factories.

Writers take their locks up front so concurrent submissions and task updates never deadlock or
lose an update:

* SQLite runs in WAL mode with a 30 s busy timeout; a *write* session starts with
  ``BEGIN IMMEDIATE`` (the write lock at the start, so a transaction that read a row never meets
  ``SQLITE_BUSY_SNAPSHOT`` when it writes, which the busy timeout would not retry). Read sessions
  start a deferred transaction and never block writers.
* A SQLite file deleted, replaced or damaged under a running service is detected: the database
  remembers the file it opened (device and inode) and watches its integrity (integrity.py);
  :meth:`Database.check_file` raises :class:`~heraldbench.platform.exceptions.UnavailableError`
  (503) once it is gone or damaged, health reports it, and every session refuses to start,
  rather than writing into a deleted file or serving a damaged one.
* A service started on a damaged file opens it *degraded* (:meth:`Database.open`): every
  session is refused with the problem and how to recover, instead of the service not starting.
* PostgreSQL runs at READ COMMITTED; code that updates an experiment's progress locks the
  experiment row first (``SELECT ... FOR UPDATE``, ignored by SQLite), always experiment before run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlalchemy import JSON, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from heraldbench.api.core.integrity import IntegrityWatch, recovery_hint, sqlite_problem
from heraldbench.platform.exceptions import UnavailableError

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


def _add_new_columns(engine: Engine) -> None:
    """Add the nullable columns a table created by an earlier version lacks (``create_all``
    creates missing tables only), so a database keeps working across upgrades."""
    from sqlalchemy import inspect

    inspector = inspect(engine)
    for table in Base.metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present or not column.nullable:
                continue
            kind = column.type.compile(engine.dialect)
            with engine.begin() as connection:
                connection.exec_driver_sql(
                    f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {kind}'
                )


@dataclass
class Database:
    """One app database: an engine and its read and write session factories.

    Use ``with db.read() as session`` for queries and ``with db.write() as session`` for
    changes (committed on exit, rolled back on an exception).
    """

    url: str
    engine: Engine
    #: Why the database cannot be used at all (a damaged file found at start), or None.
    broken: str | None = None

    @classmethod
    def open(cls, url: str, **engine_kwargs: Any) -> Database:
        """:meth:`connect`, or a degraded database refusing every session when the SQLite
        file is damaged (the service starts and says what is wrong and how to recover)."""
        path = _sqlite_file(_normalise(url))
        try:
            database = cls.connect(url, **engine_kwargs)
            problem = sqlite_problem(path, _table_names()) if path else None
        except DatabaseError as exc:
            if path is None:
                raise
            database = cls(_normalise(url), make_engine(url, **engine_kwargs))
            problem = sqlite_problem(path, _table_names()) or f"cannot be opened ({exc.orig})"
        if problem is not None:
            database.broken = f"the app database {path} {problem}; {recovery_hint(path)}"
        return database

    @classmethod
    def connect(cls, url: str, **engine_kwargs: Any) -> Database:
        """Open (and create the tables of) the database at ``url``."""
        from heraldbench.api import models  # noqa: F401 - registers the tables on Base

        engine = make_engine(url, **engine_kwargs)
        database = cls(_normalise(url), engine)
        Base.metadata.create_all(engine)
        _add_new_columns(engine)
        database.remember_file()
        return database

    def __post_init__(self) -> None:
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        writer = self.engine.execution_options(**{_IMMEDIATE: True})
        self._write = sessionmaker(writer, expire_on_commit=False)
        self.file = _sqlite_file(self.url)
        self.remember_file()

    def remember_file(self) -> None:
        """Note the SQLite file as it is now: the one :meth:`check_file` expects to find."""
        self._identity = _identity(self.file) if self.file else None
        self._watch = IntegrityWatch(self.file, _table_names()) if self.file else None

    def check_file(self) -> None:
        """Raise :class:`UnavailableError` if the SQLite file opened is gone, was replaced or
        is damaged (or was damaged when the service started)."""
        if self.broken is not None:
            raise UnavailableError(self.broken)
        if self.file is None or self._identity is None or self._watch is None:
            return
        if _identity(self.file) != self._identity:
            raise UnavailableError(
                f"the app database {self.file} was deleted or replaced while the service ran; "
                "writes are refused: restore the file, or restart the service to start afresh"
            )
        problem = self._watch.check()
        if problem is not None:
            raise UnavailableError(
                f"the app database {self.file} {problem}; sessions are refused: "
                f"{recovery_hint(self.file)}"
            )

    @property
    def is_sqlite(self) -> bool:
        return _is_sqlite(self.url)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for queries (its transaction is rolled back on exit)."""
        self.check_file()
        with self._read() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose transaction holds the write lock (SQLite) and commits on exit."""
        self.check_file()
        with self._write.begin() as session:
            yield session

    def ping(self) -> None:
        """Raise if the database cannot be reached (or its SQLite file is gone)."""
        self.check_file()
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()


def _table_names() -> set[str]:
    from heraldbench.api import models  # noqa: F401 - registers the tables on Base

    return set(Base.metadata.tables)


def _sqlite_file(url: str) -> str | None:
    """The file of a SQLite URL (None: another database, or in memory)."""
    if not _is_sqlite(url):
        return None
    database = make_url(url).database
    return None if not database or database == ":memory:" else os.path.abspath(database)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


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
