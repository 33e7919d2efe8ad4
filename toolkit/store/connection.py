"""Opening a database file: paths, DuckDB's process lock, per-file thread locks, migrations.

DuckDB lets one *process* open a database file read-write, and while it does no other process
can open the file at all (not even read-only): the second gets a ``StoreError`` saying the
file is locked. Inside one process, connections to the same file share one DuckDB instance;
the Stores on it share one thread lock too, so their calls take turns.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

import duckdb

from toolkit.store.errors import StoreError
from toolkit.store.migrations import (
    MIGRATIONS,
    apply_migrations,
    pending_migrations,
    schema_version,
)

__all__ = [
    "DATA_DIR_ENV",
    "MEMORY",
    "connect",
    "data_dir",
    "default_path",
    "lock_for",
    "migrate",
    "resolve_path",
]

#: Environment variable naming the directory where the toolkit keeps its data.
DATA_DIR_ENV = "TOOLKIT_DATA_DIR"
MEMORY = ":memory:"


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where the DuckDB file and reports go: ``$TOOLKIT_DATA_DIR``, else ``./data``.

    Users' own files live here, next to (not inside) the installed package.

    Example:
        >>> data_dir({"TOOLKIT_DATA_DIR": "/srv/toolkit"}).as_posix(), data_dir({}).as_posix()
        ('/srv/toolkit', 'data')
    """
    return Path(env.get(DATA_DIR_ENV) or "data").expanduser()


def default_path(env: Mapping[str, str] = os.environ) -> Path:
    """The DuckDB file a :class:`Store` opens when given no path: ``data_dir() / toolkit.duckdb``.

    Example:
        >>> default_path({}).as_posix()
        'data/toolkit.duckdb'
    """
    return data_dir(env) / "toolkit.duckdb"


# One lock per database file in this process: Stores on the same file share a DuckDB
# instance, and the anti-join that keeps natural keys unique needs appends to take turns.
_FILE_LOCKS: dict[str, threading.RLock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def resolve_path(path: object) -> Path | None:
    """The database file ``path`` names (:func:`default_path` for None), or None for
    ``":memory:"``.

    Example:
        >>> resolve_path(":memory:") is None
        True
    """
    if path is not None and not isinstance(path, str | Path):
        raise StoreError(f"path: must be a str or Path, got {type(path).__name__}")
    if isinstance(path, str) and path == MEMORY:
        return None
    return Path(default_path() if path is None else path).expanduser()


def lock_for(path: Path | None) -> threading.RLock:
    """The thread lock shared by every Store of this process on ``path`` (a new one in memory).

    Example:
        >>> lock_for(Path("a.duckdb")) is lock_for(Path("a.duckdb"))
        True
    """
    if path is None:
        return threading.RLock()
    key = str(path.resolve())
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.RLock())


def _lock_message(where: str) -> str:
    return (
        f"{where}: the database is locked by another process; DuckDB lets one process open "
        f"a file read-write and then no other process may open it, even read-only (close the "
        f"other process, or have it share its Store)"
    )


def connect(path: Path | None, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open ``path`` (None: a private in-memory database) with times shown in UTC.

    Example:
        >>> connect(None, read_only=False).execute("SELECT 1").fetchall()
        [(1,)]
    """
    where = MEMORY if path is None else str(path)
    if path is None:
        if read_only:
            raise StoreError(f"{where}: an in-memory store cannot be read-only")
        con = duckdb.connect(MEMORY)
    else:
        if read_only and not path.is_file():
            raise StoreError(f"{where}: no database to open read-only (file does not exist)")
        if not read_only:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"{where}: cannot create the directory {path.parent} "
                    f"({exc.strerror or exc}); the store needs a writable location"
                ) from None
        try:
            con = duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreError(_lock_message(where)) from None
            mode = "read-only" if read_only else "read-write"
            raise StoreError(f"{where}: cannot open the database {mode} ({text})") from None
    # Times come back as UTC whatever the machine's zone (the contract says UTC).
    con.execute("SET TimeZone = 'UTC'")
    return con


def migrate(con: duckdb.DuckDBPyConnection, where: str, read_only: bool) -> int:
    """Bring the schema up to date (read-only: check it is); return the schema version.

    Example:
        >>> from toolkit.store.migrations import MIGRATIONS
        >>> latest = MIGRATIONS[-1].version
        >>> migrate(connect(None, read_only=False), MEMORY, read_only=False) == latest
        True
    """
    if read_only:
        if pending_migrations(con, MIGRATIONS, where=where):
            raise StoreError(
                f"{where}: schema version {schema_version(con)} is older than "
                f"{MIGRATIONS[-1].version}; open it read-write once to migrate"
            )
    else:
        try:
            apply_migrations(con, MIGRATIONS, where=where)
        except duckdb.Error as exc:
            raise StoreError(f"{where}: cannot migrate ({exc})") from None
    return schema_version(con)
