"""Reading while writing: a Store holds the file only for a call, waits (bounded) for another
process that holds it, and then says so clearly (StoreBusy), not with DuckDB's message."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

from toolkit.store import Store, StoreBusy, StoreError

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
def test_a_file_held_longer_than_the_wait_raises_store_busy(
    held_by_another_process: Path, read_only: bool
) -> None:
    started = time.monotonic()
    with pytest.raises(StoreBusy) as err:
        Store(held_by_another_process, read_only=read_only, lock_timeout_s=0.5)
    assert 0.5 <= time.monotonic() - started < 5
    message = str(err.value)
    assert message.startswith(
        f"{held_by_another_process}: the database is locked by another process (waited 0."
    )
    assert "one process open a file read-write" in message


def test_a_store_waits_for_another_process_to_release_the_file(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "ready"
    release = threading.Timer(0.5, lambda: holder.communicate(timeout=30))
    release.start()
    try:
        with Store(db_path, lock_timeout_s=20) as store:
            assert store.schema_version >= 1
    finally:
        release.join()


def test_a_read_only_store_left_open_lets_another_process_write(
    db_path: Path, rfq_frame: Callable[..., pl.DataFrame]
) -> None:
    Store(db_path).close()
    reader = Store(db_path, read_only=True)  # held, as a notebook holds it for hours
    assert reader.query("SELECT count(*) AS n FROM rfq_observations")["n"][0] == 0
    frame_path = db_path.parent / "frame.parquet"
    rfq_frame(["a", "b", "c"]).write_parquet(frame_path)
    writer = (
        "import sys, polars as pl\n"
        "from toolkit.store import Store\n"
        "with Store(sys.argv[1], lock_timeout_s=5) as store:\n"
        "    print(store.append('rfq_observations', pl.read_parquet(sys.argv[2])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", writer, str(db_path), str(frame_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"
    # ... and the reader sees the other process's rows on its next query.
    assert reader.query("SELECT count(*) AS n FROM rfq_observations")["n"][0] == 3
    reader.close()


def test_a_session_holds_the_file_and_refuses_writes_through_a_read_only_one(
    db_path: Path, rfq_frame: Callable[..., pl.DataFrame]
) -> None:
    writer = Store(db_path)
    reader = Store(db_path, read_only=True)
    with reader.session():
        assert reader.query("SELECT 1 AS x")["x"][0] == 1
        with pytest.raises(StoreError, match="open read-only by an enclosing session"):
            writer.append("rfq_observations", rfq_frame(["a"]))
    assert writer.append("rfq_observations", rfq_frame(["a"])) == 1
    writer.close()
    reader.close()


def test_lock_timeout_is_checked() -> None:
    with pytest.raises(StoreError, match="lock_timeout_s: must be >= 0 and finite"):
        Store(":memory:", lock_timeout_s=-1)


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
