"""Reads: polars and pandas results, parameters, errors, table listing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from toolkit.store import TABLES, Store, StoreError


def test_query_binds_list_and_dict_parameters(store: Store) -> None:
    assert store.query("SELECT ? + 1 AS x", [41])["x"].to_list() == [42]
    assert store.query("SELECT $n * 2 AS x", {"n": 21})["x"].to_list() == [42]
    assert store.query("SELECT $1 || $2 AS s", ["a", "b"])["s"].to_list() == ["ab"]


def test_hugeint_results_are_int128_and_python_ints(store: Store) -> None:
    sql = (
        "SELECT ?::HUGEINT AS big, ?::HUGEINT AS neg, NULL::HUGEINT AS nothing, 1::BIGINT AS small"
    )
    params = [str(2**127 - 1), str(-(2**127))]
    frame = store.query(sql, params)
    assert frame.schema == pl.Schema(
        {"big": pl.Int128, "neg": pl.Int128, "nothing": pl.Int128, "small": pl.Int64}
    )
    assert frame.row(0) == (2**127 - 1, -(2**127), None, 1)
    pandas = store.df(sql, params)
    assert isinstance(pandas, pd.DataFrame)
    assert pandas["big"].dtype == object
    assert pandas["big"][0] == 2**127 - 1
    assert type(pandas["big"][0]) is int
    assert pandas["nothing"][0] is None


def test_nested_hugeints_are_int128_but_asked_for_decimals_stay(store: Store) -> None:
    frame = store.query(
        "SELECT [?::HUGEINT] AS l, {'x': 1::HUGEINT} AS s, 5::DECIMAL(38, 0) AS d", [2**100]
    )
    assert frame.schema == pl.Schema(
        {"l": pl.List(pl.Int128), "s": pl.Struct({"x": pl.Int128}), "d": pl.Decimal(38, 0)}
    )
    assert frame["l"].to_list() == [[2**100]]


def test_duplicate_result_names_are_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="sql: result column names must be unique, got a, a"):
        store.query("SELECT 1 AS a, 2 AS a")


def test_times_come_back_in_utc(store: Store) -> None:
    frame = store.query("SELECT TIMESTAMPTZ '2024-01-01 09:00:00+09:00' AS t")
    assert frame["t"].dtype == pl.Datetime("us", "UTC")
    assert frame["t"][0] == datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
    assert str(store.df("SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00' AS t")["t"].dtype) in {
        "datetime64[us, UTC]",
        "datetime64[ns, UTC]",
    }


def test_bad_sql_and_parameters_raise_store_errors(store: Store) -> None:
    with pytest.raises(StoreError, match=r"^sql: .*no_such_table"):
        store.query("SELECT * FROM no_such_table")
    with pytest.raises(StoreError, match="sql: must be a non-empty SQL string"):
        store.query("   ")
    with pytest.raises(StoreError, match="params: must be a list, a dict or None, got int"):
        store.query("SELECT ?", 3)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match=r"^sql: "):
        store.df("SELECT 1/0::HUGEINT + 'x'")


def test_statements_that_do_not_read_return_their_status(store: Store) -> None:
    created = store.query("CREATE TABLE notes (x INTEGER)")
    assert isinstance(created, pl.DataFrame)
    assert "notes" in store.tables()


def test_tables_lists_every_table_sorted(store: Store) -> None:
    tables = store.tables()
    assert tables == sorted(tables)
    assert set(tables) == set(TABLES) | {"schema_migrations"}


def test_read_only_store_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "ro.duckdb"
    Store(path).close()
    with Store(path, read_only=True) as reader:
        with pytest.raises(StoreError, match="opened read-only"):
            reader.append("fee_tiers", pl.DataFrame({"snapshot_id": ["s"]}))
        with pytest.raises(StoreError, match="read-only"):
            reader.query("CREATE TABLE x (y INTEGER)")
        assert reader.query("SELECT count(*) AS n FROM fee_tiers")["n"][0] == 0
