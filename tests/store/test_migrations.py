"""Opening a store: versioned migrations, the schema contract, paths and modes."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from toolkit.store import (
    DATA_DIR_ENV,
    MIGRATIONS,
    TABLES,
    Migration,
    Store,
    StoreError,
    apply_migrations,
    schema_version,
)

LATEST = MIGRATIONS[-1].version


def _ledger(path: Path) -> list[tuple[int, str, object]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT version, name, applied_at::VARCHAR FROM schema_migrations ORDER BY version"
        ).fetchall()
    finally:
        con.close()


def test_fresh_database_gets_every_migration_once(db_path: Path) -> None:
    with Store(db_path) as store:
        assert store.schema_version == LATEST
        assert set(TABLES) | {"schema_migrations"} == set(store.tables())
    first = _ledger(db_path)
    assert [(v, n) for v, n, _ in first] == [(m.version, m.name) for m in MIGRATIONS]
    with Store(db_path) as store:
        assert store.schema_version == LATEST
    assert _ledger(db_path) == first  # nothing re-applied, applied_at unchanged


def test_only_pending_migrations_are_applied(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = duckdb.connect(str(db_path))
    assert apply_migrations(con, MIGRATIONS[:1]) == [1]
    assert schema_version(con) == 1
    con.close()
    with Store(db_path) as store:
        assert store.schema_version == LATEST
        assert "backtest_requests" in store.tables()
    assert [v for v, _, _ in _ledger(db_path)] == [m.version for m in MIGRATIONS]


def test_database_from_a_newer_toolkit_is_refused(db_path: Path) -> None:
    with Store(db_path):
        pass
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO schema_migrations VALUES (?, 'future', now())", [LATEST + 1])
    con.close()
    with pytest.raises(StoreError) as err:
        Store(db_path)
    message = str(err.value)
    assert str(db_path) in message
    assert f"schema version {LATEST + 1}, newer than this toolkit's {LATEST}" in message


def test_edited_migration_history_is_refused() -> None:
    con = duckdb.connect(":memory:")
    apply_migrations(con)
    edited = (Migration(1, "renamed", MIGRATIONS[0].sql), *MIGRATIONS[1:])
    with pytest.raises(StoreError, match=r"migration 1 is recorded as 'collection tables'"):
        apply_migrations(con, edited)


def test_failing_migration_rolls_back_whole() -> None:
    con = duckdb.connect(":memory:")
    broken = (
        *MIGRATIONS,
        Migration(LATEST + 1, "broken", "CREATE TABLE half_done (x INTEGER); SELEC nonsense"),
    )
    with pytest.raises(StoreError, match=rf"migration {LATEST + 1} \('broken'\) failed"):
        apply_migrations(con, broken)
    tables = {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "half_done" not in tables
    assert schema_version(con) == LATEST  # the earlier ones stay applied


def test_migration_versions_must_increase() -> None:
    con = duckdb.connect(":memory:")
    with pytest.raises(StoreError, match="distinct, positive and increasing"):
        apply_migrations(con, (MIGRATIONS[1], MIGRATIONS[0]))


def test_tables_match_the_contract(store: Store) -> None:
    for name, spec in TABLES.items():
        described = store.query(f"DESCRIBE {name}")
        columns = dict(zip(described["column_name"], described["column_type"], strict=True))
        expected = {
            col.name: "TIMESTAMP WITH TIME ZONE" if col.sql_type == "TIMESTAMPTZ" else col.sql_type
            for col in spec.columns
        }
        assert columns == expected, name
        empty = store.query(f"SELECT * FROM {name}")
        assert empty.schema == spec.schema, name


def test_store_defaults_to_the_data_directory_and_creates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    with Store() as store:
        assert store.path == Path("data/toolkit.duckdb")
    assert (tmp_path / "data" / "toolkit.duckdb").is_file()
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "elsewhere"))
    with Store() as store:
        assert store.path == tmp_path / "elsewhere" / "toolkit.duckdb"
    assert (tmp_path / "elsewhere" / "toolkit.duckdb").is_file()


def test_unwritable_location_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    target = blocker / "toolkit.duckdb"
    with pytest.raises(StoreError) as err:
        Store(target)
    assert str(target) in str(err.value)
    assert "needs a writable location" in str(err.value)


def test_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open the database read-write"):
        Store(tmp_path)


def test_read_only_rules(db_path: Path) -> None:
    with pytest.raises(StoreError, match="no database to open read-only"):
        Store(db_path, read_only=True)
    with pytest.raises(StoreError, match="in-memory store cannot be read-only"):
        Store(":memory:", read_only=True)
    with Store(db_path) as store:
        store.start_run("snapshot", {}, "https://host/api")
    with Store(db_path, read_only=True) as reader:
        assert reader.runs().height == 1
        with pytest.raises(StoreError, match="opened read-only"):
            reader.start_run("snapshot", {}, "https://host/api")


def test_read_only_refuses_an_outdated_schema(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = duckdb.connect(str(db_path))
    apply_migrations(con, MIGRATIONS[:1])
    con.close()
    with pytest.raises(StoreError, match=r"schema version 1 is older than \d+; open it read-write"):
        Store(db_path, read_only=True)


def test_repr_and_close(db_path: Path) -> None:
    store = Store(db_path)
    assert repr(store) == f"Store(path={str(db_path)!r}, schema_version={LATEST})"
    with store:
        pass
    assert store.closed
    assert repr(store).endswith(", closed)")
    store.close()  # closing twice is fine
    with pytest.raises(StoreError, match="the store is closed"):
        store.query("SELECT 1")
    assert repr(Store(":memory:")) == f"Store(path=':memory:', schema_version={LATEST})"


def test_bad_path_type() -> None:
    with pytest.raises(StoreError, match="path: must be a str or Path"):
        Store(42)  # type: ignore[arg-type]


def test_polars_schema_is_the_contract() -> None:
    spec = TABLES["rfq_observations"]
    assert spec.key == ("run_id", "attempt_id")
    assert spec.schema["amount"] == pl.Int128
    assert spec.schema["observed_at"] == pl.Datetime("us", "UTC")
