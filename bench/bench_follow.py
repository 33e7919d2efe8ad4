"""Lag behind the head: ``toolkit collect chain --follow`` on anvil mining one block a second
with ``--logs`` ERC-20 transfers (one ``Transfer`` log each) in every block.

A thread of this process mines the blocks (automine off: each block holds exactly its
transfers) and notes when each one was mined; the follower runs as its own process
(``--poll-s``); a reader here opens the database read-only every 0.1 s, as an analyst's
notebook would, and notes when each block's logs are first visible there. A block's lag is
that moment minus the moment it was mined: what a reader of the store waits for a block.
Printed: blocks and logs followed, lag p50/p99/max, rows per second written (raw and decoded
logs and headers), the follower's own status, and failed reads.

Run: ``.venv/bin/python bench/bench_follow.py [--seconds 60] [--logs 200] [--poll-s 0.5]``.
Skips (prints why) without anvil (``make node``).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from toolkit.store import Store, StoreError
from toolkit.testing.anvil import AnvilUnavailable, start_anvil
from toolkit.testing.transfers import TokenActivity, deploy_token

CHAIN = 31337


def _mine(token: TokenActivity, logs: int, stop: threading.Event, mined: dict[int, float]) -> None:
    """A block of ``logs`` transfers a second until ``stop``; ``mined``: block → when."""
    next_at = time.monotonic()
    while not stop.is_set():
        token.send(token.transfers(logs))
        token.rpc("evm_mine", [])
        mined[token.head()] = time.monotonic()
        next_at += 1.0
        stop.wait(max(0.0, next_at - time.monotonic()))


def _watch(db: Path, stop: threading.Event, seen: dict[int, float], failures: list[str]) -> None:
    """Read the store every 0.1 s; ``seen``: block → when its logs were first visible."""
    while not stop.is_set():
        try:
            with Store(db, read_only=True, lock_timeout_s=10) as store:
                frame = store.query(
                    "SELECT block_number AS b FROM chain_logs GROUP BY block_number "
                    "HAVING block_number > $last",
                    {"last": max(seen, default=-1)},
                )
            now = time.monotonic()
            for block in frame["b"].to_list():
                seen.setdefault(int(block), now)
        except StoreError as exc:
            failures.append(str(exc))
        stop.wait(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--logs", type=int, default=200, help="transfers (logs) a block")
    parser.add_argument("--poll-s", type=float, default=0.5)
    args = parser.parse_args()
    try:
        node = start_anvil(chain_id=CHAIN)
    except AnvilUnavailable as exc:
        print(f"skipped: {exc}")
        return
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; a block a second with {args.logs} logs for {args.seconds:.0f} s, "
          f"follower polling every {args.poll_s} s")  # fmt: skip
    try:
        token = deploy_token(node)
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "follow.duckdb"
            env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
            follower = subprocess.Popen(
                [sys.executable, "-m", "toolkit", "collect", "chain", "--chain", str(CHAIN),
                 "--rpc-url", node.url, "--follow", "--events", "transfers",
                 "--poll-s", str(args.poll_s), "--db", str(db)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            )  # fmt: skip
            while not db.exists():
                time.sleep(0.1)
            time.sleep(3.0)  # the follower's start (imports, its first poll)
            stop = threading.Event()
            mined: dict[int, float] = {}
            seen: dict[int, float] = {}
            failures: list[str] = []
            threads = [
                threading.Thread(target=_mine, args=(token, args.logs, stop, mined)),
                threading.Thread(target=_watch, args=(db, stop, seen, failures)),
            ]
            for thread in threads:
                thread.start()
            time.sleep(args.seconds)
            stop.set()
            for thread in threads:
                thread.join()
            follower.send_signal(signal.SIGINT)
            follower.wait(timeout=60)
            with Store(db, read_only=True) as store:
                status = store.statuses().row(0, named=True)
                rows = int(status["rows_written"])
                logs = store.query("SELECT count(*) AS n FROM chain_logs")["n"][0]
    finally:
        node.stop()
    lags = np.array([seen[b] - mined[b] for b in mined if b in seen])
    print()
    print(f"blocks mined {len(mined)}, seen by the reader {len(lags)}, logs stored {logs}")
    if lags.size:
        p50, p99, worst = np.quantile(lags, 0.5), np.quantile(lags, 0.99), lags.max()
        print(f"lag behind the head (mined -> visible to a reader): p50 {p50:.2f} s, "
              f"p99 {p99:.2f} s, max {worst:.2f} s")  # fmt: skip
    rate = rows / args.seconds
    print(f"rows written {rows} ({rate:.0f} rows/s: raw logs, decoded transfers, headers); "
          f"follower polls {status['polls']}, errors {status['errors']}")  # fmt: skip
    print(f"failed reads {len(failures)}")


if __name__ == "__main__":
    main()
