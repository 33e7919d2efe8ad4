"""One writer process per file: a second process gets a clear StoreError, not DuckDB's."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

from toolkit.store import Store, StoreError

# The other process only needs DuckDB itself to hold the file's lock.
HOLDER = """
import sys
import duckdb
con = duckdb.connect(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()  # hold the file until the test closes our stdin
con.close()
"""


@pytest.fixture
def held_by_another_process(db_path: Path) -> Iterator[Path]:
    db_path.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        yield db_path
    finally:
        holder.communicate(timeout=30)  # closes stdin (the holder exits), drains stdout


@pytest.mark.parametrize("read_only", [False, True])
def test_second_process_gets_a_lock_error(held_by_another_process: Path, read_only: bool) -> None:
    with pytest.raises(StoreError) as err:
        Store(held_by_another_process, read_only=read_only)
    message = str(err.value)
    assert message.startswith(
        f"{held_by_another_process}: the database is locked by another process"
    )
    assert "one process open a file read-write" in message


def test_file_is_usable_once_the_other_process_exits(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", HOLDER, str(db_path)], input="", text=True, check=True)
    with Store(db_path) as store:
        assert store.schema_version >= 1


def test_threads_sharing_stores_on_one_file_never_duplicate_keys(
    db_path: Path, rfq_frame: Callable[..., pl.DataFrame], count: Callable[[Store, str], int]
) -> None:
    first, second = Store(db_path), Store(db_path)
    frames = [rfq_frame([f"a{i}" for i in range(k, k + 300)]) for k in range(0, 1200, 200)]
    errors: list[BaseException] = []

    def write(store: Store) -> None:
        try:
            for frame in frames:
                store.append("rfq_observations", frame)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(s,)) for s in (first, second, first)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert count(first, "rfq_observations") == 1300
    distinct = first.query("SELECT count(DISTINCT attempt_id) AS n FROM rfq_observations")
    assert distinct["n"][0] == 1300
    first.close()
    second.close()
