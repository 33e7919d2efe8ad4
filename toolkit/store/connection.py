"""Opening a database file: paths, DuckDB's process lock, per-file thread locks, migrations.

DuckDB lets one *process* open a database file read-write, and while it does no other process
can open the file at all; read-only processes share it, and while any holds it no process can
open it read-write. So a file Store holds the file only for one operation (or one
:meth:`~toolkit.store.Store.session` of them) and closes it after: a collector releases it
between flushes, a notebook between queries. Opening waits for the file with jittered backoff
(:func:`connect`) up to ``lock_timeout_s``, then raises :class:`StoreBusy`.

Inside one process, the Stores on a file share one :class:`FileAccess`: a thread lock their
calls take turns on, and the connection of the operation under way, which a nested operation
(another Store on the same file, inside a session) reuses instead of opening a second one.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from toolkit.store.errors import StoreBusy, StoreError
from toolkit.store.migrations import (
    MIGRATIONS,
    apply_migrations,
    pending_migrations,
    schema_version,
)

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_LOCK_TIMEOUT_S",
    "MEMORY",
    "FileAccess",
    "connect",
    "data_dir",
    "default_path",
    "file_access",
    "migrate",
    "opened",
    "resolve_path",
]

#: Environment variable naming the directory where the toolkit keeps its data.
DATA_DIR_ENV = "TOOLKIT_DATA_DIR"
MEMORY = ":memory:"
#: How long opening a file waits for another process to release it before :class:`StoreBusy`.
DEFAULT_LOCK_TIMEOUT_S = 30.0


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


@dataclass
class FileAccess:
    """How this process uses one database file: the lock its Stores' calls take turns on, and
    the connection of the operation under way (None between operations)."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    con: duckdb.DuckDBPyConnection | None = None
    read_only: bool = False


# One FileAccess per database file in this process: the anti-join that keeps natural keys
# unique needs appends to take turns, and DuckDB refuses a second connection to a file open
# in this process with another mode (read-only next to read-write).
_FILES: dict[str, FileAccess] = {}
_FILES_GUARD = threading.Lock()


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


def file_access(path: Path | None) -> FileAccess:
    """The :class:`FileAccess` shared by every Store of this process on ``path`` (a new one
    in memory).

    Example:
        >>> file_access(Path("a.duckdb")) is file_access(Path("a.duckdb"))
        True
    """
    if path is None:
        return FileAccess()
    key = str(path.resolve())
    with _FILES_GUARD:
        return _FILES.setdefault(key, FileAccess())


def _lock_message(where: str, waited_s: float) -> str:
    return (
        f"{where}: the database is locked by another process (waited {waited_s:.1f} s); DuckDB "
        f"lets one process open a file read-write and then no other process may open it, and "
        f"no process may write while others read (a toolkit Store holds the file only while it "
        f"reads or writes: another program, or a Store inside a long session, holds it now)"
    )


# Lock waits are timing, not data: an unseeded generator spreads the retries of processes
# that found the file busy at the same moment.
_JITTER = random.Random()
_FIRST_WAIT_S = 0.005
_LONGEST_WAIT_S = 0.1


def _open_file(path: Path, read_only: bool, lock_timeout_s: float) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` retried while another process holds the file: waits of 5 ms growing
    1.5x to 100 ms, each jittered ±50 %, until ``lock_timeout_s`` has passed."""
    where = str(path)
    started = time.monotonic()
    wait_s = _FIRST_WAIT_S
    while True:
        try:
            return duckdb.connect(where, read_only=read_only)
        except duckdb.Error as exc:
            text = str(exc)
            if "lock" not in text.lower():
                mode = "read-only" if read_only else "read-write"
                raise StoreError(f"{where}: cannot open the database {mode} ({text})") from None
        waited_s = time.monotonic() - started
        if waited_s >= lock_timeout_s:
            raise StoreBusy(_lock_message(where, waited_s))
        pause_s = min(wait_s * _JITTER.uniform(0.5, 1.5), lock_timeout_s - waited_s)
        time.sleep(max(pause_s, 0.0))
        wait_s = min(wait_s * 1.5, _LONGEST_WAIT_S)


def connect(
    path: Path | None, read_only: bool, lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S
) -> duckdb.DuckDBPyConnection:
    """Open ``path`` (None: a private in-memory database) with times shown in UTC, waiting up
    to ``lock_timeout_s`` for another process to release the file (then :class:`StoreBusy`).

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
        con = _open_file(path, read_only, lock_timeout_s)
    # Times come back as UTC whatever the machine's zone (the contract says UTC).
    con.execute("SET TimeZone = 'UTC'")
    return con


@contextlib.contextmanager
def opened(
    path: Path, access: FileAccess, read_only: bool, lock_timeout_s: float
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The file open for one operation (or one session of them) under ``access.lock``, closed
    after; inside another operation of this process on the same file, that one's connection.

    Closing the last connection checkpoints DuckDB's write-ahead log into the file, so another
    process opening it next reads every committed row.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "t.duckdb"
        >>> access = file_access(path)
        >>> with opened(path, access, False, 1.0) as con:
        ...     with opened(path, access, True, 1.0) as inner:
        ...         inner is con
        True
        >>> access.con is None
        True
    """
    with access.lock:
        if access.con is not None:
            if access.read_only and not read_only:
                raise StoreError(
                    f"{path}: open read-only by an enclosing session of this process; "
                    "write outside it, or open the session on a writable Store"
                )
            yield access.con
            return
        con = connect(path, read_only, lock_timeout_s)
        access.con, access.read_only = con, read_only
        try:
            yield con
        finally:
            access.con = None
            con.close()


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
