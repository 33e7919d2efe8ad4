"""Versioned schema migrations: an ordered list of frozen SQL scripts.

Each script is a file of this package, ``NNNN_name.sql`` (the version, then the name), with
the reason for its tables in its header comment.

A migration, once released, is never edited: a database created by an older toolkit is
brought up to date by running the scripts it has not seen, each in its own transaction, and
recording it in ``schema_migrations``. A new column or table is a new entry at the end.

Keys and indexes: the data tables declare no PRIMARY KEY and no CHECK. A primary key is an
ART index, which must fit in memory and which made ``ON CONFLICT DO NOTHING`` appends 3-4x
slower than a plain insert at a few million rows (``bench/bench_store.py``). The store keeps
natural keys unique itself: every append drops rows repeated within the frame and anti-joins
the rest against the stored rows of the same partition (run, snapshot or source), under a
per-file lock. Value rules (non-negative amounts, closed vocabularies) are checked on the
frame before it reaches DuckDB, where the error can name the column. No other index is
created: reads are scans and aggregates, which DuckDB serves from columnar storage and zone
maps. ``collection_runs`` is small and keeps its primary key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.resources import files

import duckdb

from toolkit.store.errors import StoreError
from toolkit.store.sql import first_row, rollback

__all__ = [
    "MIGRATIONS",
    "Migration",
    "apply_migrations",
    "pending_migrations",
    "schema_version",
]


@dataclass(frozen=True)
class Migration:
    """One schema step: a version (1, 2, ...), a short name and the SQL it runs.

    Example:
        >>> MIGRATIONS[0].version, MIGRATIONS[0].name
        (1, 'collection tables')
    """

    version: int
    name: str
    sql: str


#: Every migration's version and name, in order. Append only; never edit a released entry.
_NAMES: tuple[tuple[int, str], ...] = (
    (1, "collection tables"),
    (2, "backtest tables"),
    (3, "chain tables"),
    (4, "credit tables"),
    (5, "swap tables"),
    (6, "credit collateral"),
    (7, "amm pools"),
    (8, "pool events"),
    (9, "run targets, prices and tokens"),
    (10, "swap route chain and gas price"),
    (11, "following"),
    (12, "alerts"),
    (13, "backtest inventory and transfers"),
    (14, "escrow and settler events"),
)


def _script(version: int) -> str:
    (found,) = [f for f in files(__package__).iterdir() if f.name.startswith(f"{version:04d}_")]
    return found.read_text(encoding="utf-8")


#: Every migration, in order, its SQL read from its file.
MIGRATIONS: tuple[Migration, ...] = tuple(
    Migration(version, name, _script(version)) for version, name in _NAMES
)

_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
"""


def _ledger_exists(con: duckdb.DuckDBPyConnection) -> bool:
    row = first_row(
        con,
        "SELECT count(*) FROM duckdb_tables() "
        "WHERE schema_name = 'main' AND table_name = 'schema_migrations'",
    )
    return bool(row and row[0])


def _applied(con: duckdb.DuckDBPyConnection) -> dict[int, str]:
    if not _ledger_exists(con):
        return {}
    rows = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    return {int(version): str(name) for version, name in rows}


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The highest migration version recorded in the database (0 for a fresh one).

    Example:
        >>> schema_version(duckdb.connect(":memory:"))
        0
    """
    applied = _applied(con)
    return max(applied, default=0)


def _check_history(
    applied: dict[int, str], migrations: tuple[Migration, ...], where: str
) -> list[Migration]:
    known = {m.version: m for m in migrations}
    latest = max(known, default=0)
    newest = max(applied, default=0)
    if newest > latest:
        raise StoreError(
            f"{where}: database has schema version {newest}, newer than this toolkit's "
            f"{latest}; a database is only opened by a toolkit that knows all its migrations "
            f"(upgrade the toolkit)"
        )
    for version, name in applied.items():
        if version not in known or known[version].name != name:
            expected = known[version].name if version in known else "nothing"
            raise StoreError(
                f"{where}: migration {version} is recorded as {name!r} but this toolkit "
                f"defines {expected!r}; migrations must never be edited once applied"
            )
    return [m for m in migrations if m.version not in applied]


def pending_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    *,
    where: str = ":memory:",
) -> list[Migration]:
    """Migrations not yet applied; raises ``StoreError`` for a newer or diverging database.

    Example:
        >>> [m.version for m in pending_migrations(duckdb.connect(":memory:"))][:3]
        [1, 2, 3]
    """
    return _check_history(_applied(con), migrations, where)


def apply_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    *,
    where: str = ":memory:",
    now: datetime | None = None,
) -> list[int]:
    """Apply the pending ``migrations``, each in its own transaction; return their versions.

    ``where`` names the database in error messages. A failing migration is rolled back
    whole and raises ``StoreError`` naming it; those applied before it stay applied.

    Example:
        >>> con = duckdb.connect(":memory:")
        >>> len(apply_migrations(con)) == len(MIGRATIONS), apply_migrations(con)
        (True, [])
    """
    versions = [m.version for m in migrations]
    if versions != sorted(set(versions)) or (versions and versions[0] < 1):
        raise StoreError("migrations: versions must be distinct, positive and increasing")
    pending = pending_migrations(con, migrations, where=where)
    if pending:
        con.execute(_LEDGER)
    done: list[int] = []
    for migration in pending:
        stamp = now if now is not None else datetime.now(UTC)
        try:
            con.execute("BEGIN TRANSACTION")
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                [migration.version, migration.name, stamp],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)
            raise StoreError(
                f"{where}: migration {migration.version} ({migration.name!r}) failed and was "
                f"rolled back: {exc}"
            ) from exc
        except BaseException:
            rollback(con)
            raise
        done.append(migration.version)
    return done
