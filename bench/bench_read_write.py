"""Reading while writing one DuckDB file: what the store's design costs each side.

A writer process appends ``chain_logs`` rows (``--rows`` a flush, one flush every
``--every-s`` seconds, as a follower does) through ``Store.append``, which opens the file for
the flush and closes it after; a reader process holds one ``Store(path, read_only=True)`` (a
notebook's) and runs a count and an aggregate every ``--read-every-s`` seconds, each query
opening the file read-only. Three phases of ``--seconds`` each: the writer alone, the reader
alone, both. Printed:

- rows/s written, and the flush latency (p50/p99: open, append, commit, close with its
  checkpoint) with and without the reader;
- the reader's query latency (p50/p99) alone and next to the writer; the difference is the
  wait for the file (a reader waits at most one flush);
- failed reads and failed flushes (the design's promise: none).

Twice: the writer at a follower's pace (``--every-s``), then flushing back to back (how far
the writer goes when it has all it can write, and how much a reader slows it: a reader's query
holds the file for its duration).

Run: ``.venv/bin/python bench/bench_read_write.py [--seconds 20] [--rows 2000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

WRITER = """
import json, sys, time
import polars as pl
from toolkit.store import Store
path, seconds, rows, every_s = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
chain = int(sys.argv[5])  # each phase its own chain: its rows are new rows
store = Store(path)
latencies, written, failures, block = [], 0, 0, 0
until = time.monotonic() + seconds
while time.monotonic() < until:
    started = time.monotonic()
    frame = pl.DataFrame(
        {"chain": [chain] * rows, "block_number": [block] * rows, "log_index": list(range(rows)),
         "tx_hash": [f"0x{block:08x}{i:056x}" for i in range(rows)],
         "block_hash": [f"0x{block:064x}"] * rows, "address": ["0x" + "aa" * 20] * rows,
         "topic0": ["0x" + "dd" * 32] * rows, "data": ["0x" + "00" * 32] * rows,
         "run_id": ["bench"] * rows},
        schema_overrides={"log_index": pl.Int32},
    )
    t = time.monotonic()
    try:
        written += store.append("chain_logs", frame)
        latencies.append(time.monotonic() - t)
    except Exception:
        failures += 1
    block += 1
    time.sleep(max(0.0, every_s - (time.monotonic() - started)))
print(json.dumps({"latencies": latencies, "written": written, "failures": failures,
                  "seconds": seconds}))
"""

READER = """
import json, sys, time
from toolkit.store import Store
path, seconds, every_s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
store = Store(path, read_only=True)
latencies, failures = [], 0
until = time.monotonic() + seconds
while time.monotonic() < until:
    started = time.monotonic()
    try:
        store.query("SELECT count(*) AS n, max(block_number) AS b FROM chain_logs")
        latencies.append(time.monotonic() - started)
    except Exception:
        failures += 1
    time.sleep(max(0.0, every_s - (time.monotonic() - started)))
print(json.dumps({"latencies": latencies, "failures": failures}))
"""


def _spawn(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True
    )


def _result(process: subprocess.Popen[str]) -> dict[str, object]:
    out, _ = process.communicate(timeout=600)
    if process.returncode != 0:
        raise SystemExit(f"a bench process failed ({process.returncode})")
    return dict(json.loads(out))


def _ms(values: object, q: float) -> str:
    data = np.asarray(values, dtype=float)
    return "-" if data.size == 0 else f"{1000 * np.quantile(data, q):7.1f}"


def _phases(args: argparse.Namespace, every_s: float) -> None:
    """The three phases with a writer flushing every ``every_s`` seconds (0: back to back)."""
    from toolkit.store import Store

    print()
    pace = "back to back" if every_s == 0 else f"every {every_s} s"
    print(f"{args.rows} rows a flush {pace}, a read every {args.read_every_s} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.duckdb"
        Store(path).close()
        write_args = (path, args.seconds, args.rows, every_s)
        alone_w = _result(_spawn(WRITER, *write_args, 1))
        alone_r = _result(_spawn(READER, path, args.seconds, args.read_every_s))
        writer = _spawn(WRITER, *write_args, 2)
        reader = _spawn(READER, path, args.seconds, args.read_every_s)
        both_w, both_r = _result(writer), _result(reader)
    print(f"{'phase':<24}{'rows/s':>10}{'flush p50 ms':>14}{'flush p99 ms':>14}"
          f"{'read p50 ms':>13}{'read p99 ms':>13}{'failed':>8}")  # fmt: skip
    for name, w, r in (("writer alone", alone_w, None), ("reader alone", None, alone_r),
                       ("writer + reader", both_w, both_r)):  # fmt: skip
        rate = "-" if w is None else f"{int(w['written']) / float(w['seconds']):10.0f}"  # type: ignore[call-overload]
        failed = sum(int(x["failures"]) for x in (w, r) if x is not None)  # type: ignore[call-overload]
        flushes = w["latencies"] if w else []
        reads = r["latencies"] if r else []
        print(
            f"{name:<24}{rate:>10}{_ms(flushes, 0.5):>14}{_ms(flushes, 0.99):>14}"
            f"{_ms(reads, 0.5):>13}{_ms(reads, 0.99):>13}{failed:>8}"
        )
    wait50 = np.quantile(both_r["latencies"], 0.5) - np.quantile(alone_r["latencies"], 0.5)  # type: ignore[arg-type]
    wait99 = np.quantile(both_r["latencies"], 0.99) - np.quantile(alone_r["latencies"], 0.99)  # type: ignore[arg-type]
    print(f"reader wait for the file next to the writer: p50 {1000 * wait50:.1f} ms, "
          f"p99 {1000 * wait99:.1f} ms (read latency with the writer minus alone)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds a phase")
    parser.add_argument("--rows", type=int, default=2000, help="rows a flush")
    parser.add_argument("--every-s", type=float, default=0.5, help="seconds between flushes")
    parser.add_argument("--read-every-s", type=float, default=0.5)
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} (the figures are wall clock: other processes inflate them)")
    for every_s in (args.every_s, 0.0):  # a follower's pace, then as fast as it goes
        _phases(args, every_s)


if __name__ == "__main__":
    main()
