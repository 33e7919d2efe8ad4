"""Ctrl-C during an append: rolled back whole, raised as KeyboardInterrupt, store still usable.

An interrupt can land in three places: in Python while the frame is converted (before the
transaction), in Python between two statements of the transaction, or inside a DuckDB
statement, where duckdb-python reports it as ``RuntimeError("Query interrupted")`` and leaves
the transaction aborted until someone rolls it back.
"""

from __future__ import annotations

import _thread
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from toolkit.store import Store
from toolkit.store import plan as plan_module
from toolkit.store import store as store_module
from toolkit.store.sql import rollback

RfqFrame = Callable[..., pl.DataFrame]
Count = Callable[[Store, str], int]
TABLE = "rfq_observations"


def _after_insert(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Make the append raise ``exc`` once its INSERT has run, before COMMIT."""
    real = store_module.first_row

    def first_row(con: duckdb.DuckDBPyConnection, sql: str, *args: Any) -> Any:
        row = real(con, sql, *args)
        if sql.startswith("INSERT"):
            assert row is not None and row[0] > 0  # rows are in the open transaction
            raise exc
        return row

    monkeypatch.setattr(store_module, "first_row", first_row)


def _assert_usable(store: Store, rfq_frame: RfqFrame, count: Count, before: int) -> None:
    # Same connection: an open transaction would show its own uncommitted rows here.
    assert count(store, TABLE) == before
    assert store.append(TABLE, rfq_frame(["after"], run_id="run-after")) == 1
    assert count(store, TABLE) == before + 1


@pytest.fixture
def file_store(db_path: Path) -> Iterator[Store]:
    with Store(db_path) as opened:
        yield opened


def test_interrupt_between_statements_rolls_back(
    file_store: Store,
    db_path: Path,
    rfq_frame: RfqFrame,
    count: Count,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file_store.append(TABLE, rfq_frame(["kept"]))
    _after_insert(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        file_store.append(TABLE, rfq_frame([f"n{i}" for i in range(500)]))
    monkeypatch.undo()
    _assert_usable(file_store, rfq_frame, count, before=1)
    file_store.close()
    with Store(db_path) as reopened:
        stored = reopened.query(f"SELECT attempt_id FROM {TABLE} ORDER BY ALL")
    assert stored["attempt_id"].to_list() == ["after", "kept"]


def test_duckdb_interrupt_report_becomes_keyboard_interrupt(
    store: Store, rfq_frame: RfqFrame, count: Count, monkeypatch: pytest.MonkeyPatch
) -> None:
    _after_insert(monkeypatch, RuntimeError("Query interrupted"))
    with pytest.raises(KeyboardInterrupt) as err:
        store.append(TABLE, rfq_frame(["a", "b"]))
    assert isinstance(err.value.__cause__, RuntimeError)
    monkeypatch.undo()
    _assert_usable(store, rfq_frame, count, before=0)


def test_other_runtime_errors_pass_through_and_roll_back(
    store: Store, rfq_frame: RfqFrame, count: Count, monkeypatch: pytest.MonkeyPatch
) -> None:
    _after_insert(monkeypatch, RuntimeError("something else"))
    with pytest.raises(RuntimeError, match="something else"):
        store.append(TABLE, rfq_frame(["a"]))
    monkeypatch.undo()
    _assert_usable(store, rfq_frame, count, before=0)


def test_interrupt_while_converting_the_frame(
    store: Store, rfq_frame: RfqFrame, count: Count, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.append(TABLE, rfq_frame(["kept"]))

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(plan_module, "_hugeint_arrays", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.append(TABLE, rfq_frame(["n1", "n2"]))
    monkeypatch.undo()
    _assert_usable(store, rfq_frame, count, before=1)


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[float], threading.Timer]]:
    """``ctrl_c(seconds)`` delivers SIGINT to the main thread's handler after ``seconds``."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    # Python's own handler (raise KeyboardInterrupt), whatever the test runner installed.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timers: list[threading.Timer] = []

    def arm(seconds: float) -> threading.Timer:
        timer = threading.Timer(seconds, _thread.interrupt_main)
        timers.append(timer)
        timer.start()
        return timer

    try:
        yield arm
    finally:
        for timer in timers:
            timer.cancel()
            timer.join()
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_a_running_insert_rolls_back(
    store: Store,
    rfq_frame: RfqFrame,
    count: Count,
    monkeypatch: pytest.MonkeyPatch,
    ctrl_c: Callable[[float], threading.Timer],
) -> None:
    store.append(TABLE, rfq_frame(["kept"]))
    real_plan = store_module.insert_plan
    real_first_row = store_module.first_row

    def big_plan(*args: Any) -> plan_module.InsertPlan:
        # The same 100 rows 2,000 times over (zero-copy): an INSERT long enough for Ctrl-C
        # to land inside it, however fast the machine.
        plan = real_plan(*args)
        rows = pa.Table.from_batches(plan.arrow.to_batches() * 2_000, plan.arrow.schema)
        return plan_module.InsertPlan(rows, plan.probe, plan.plain, plan.anti)

    def first_row(con: duckdb.DuckDBPyConnection, sql: str, *args: Any) -> Any:
        if sql.startswith("INSERT"):
            ctrl_c(0.05)
        return real_first_row(con, sql, *args)

    monkeypatch.setattr(store_module, "insert_plan", big_plan)
    monkeypatch.setattr(store_module, "first_row", first_row)
    with pytest.raises(KeyboardInterrupt) as err:
        store.append(TABLE, rfq_frame([f"n{i}" for i in range(100)]))
    assert isinstance(err.value.__cause__, RuntimeError)  # it landed inside DuckDB
    monkeypatch.undo()
    _assert_usable(store, rfq_frame, count, before=1)


def test_ctrl_c_inside_a_running_query_is_a_keyboard_interrupt(
    store: Store, rfq_frame: RfqFrame, count: Count, ctrl_c: Callable[[float], threading.Timer]
) -> None:
    ctrl_c(0.05)
    with pytest.raises(KeyboardInterrupt) as err:
        # Seconds of work for DuckDB, cut short. (DuckDB looks for Ctrl-C between tasks;
        # some plans, e.g. sum(range) over range(), run as one long task and would not be.)
        store.query("SELECT max(hash(range)) AS top FROM range(2000000000)")
    assert isinstance(err.value.__cause__, RuntimeError)
    _assert_usable(store, rfq_frame, count, before=0)


class _InterruptedOnce:
    """A connection whose first ROLLBACK is cut short by a (second) Ctrl-C."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.interrupted = False

    def execute(self, sql: str) -> duckdb.DuckDBPyConnection:
        if sql == "ROLLBACK" and not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return self.con.execute(sql)


def test_a_second_ctrl_c_during_rollback_still_rolls_back() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (x INTEGER)")
    con.execute("BEGIN TRANSACTION")
    con.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(KeyboardInterrupt):
        rollback(_InterruptedOnce(con))  # type: ignore[arg-type]
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    con.execute("BEGIN TRANSACTION")  # no transaction was left open
    con.execute("ROLLBACK")
