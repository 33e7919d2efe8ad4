"""A soak of ``toolkit watch``: a plan of a chain follower on anvil, the credit book and a
health-factor watch on a served instance, for ``--minutes`` (default 60), while another
process reads the same database, with a reorg, faults and a ``kill -9`` on the way.

What runs:

- ``toolkit serve`` (the embedded service on a loopback port, ``--traffic``: other users'
  swaps and credit draws in real time) and anvil (``make node``) mining a block a second with
  ``--logs`` token transfers each, the chain follower reading it through
  :class:`toolkit.testing.FaultProxy` (``--faults``: the share of requests that fail, 0 for
  none);
- ``toolkit watch PLAN``: ``[[chain]]`` on anvil (``confirmations`` 2), ``[[credit]]``
  (``all_known``, every ``--credit-every-s``) and ``[[health]]`` on the served instance,
  posting to a local :class:`toolkit.testing.WebhookReceiver` whose URL carries a token;
- a reader process (this script with ``--reader``): ``Store(path, read_only=True)`` every
  0.5 s (counts and an exact sum over ``chain_logs``, ``credit_accounts`` and ``alerts``), and
  ``toolkit report`` every ``--report-every-s``.

At 40 % of the time anvil replaces its last 3 blocks (``anvil_reorg``, mining paused until the
follower has stored them, so that they are orphaned rows to replace); at 60 % the watch is
killed with SIGKILL and started again. At the end the mining stops, the follower catches up,
the watch gets SIGTERM, and the script prints: reads attempted and failed, report runs ok and
failed, each follower's rows, errors and reorgs, the restarts, whether the stored logs are
exactly anvil's canonical ``eth_getLogs`` (none orphaned, none missing, none twice, every
stored header the node's), duplicated rows, and whether every alert was posted exactly once
and the webhook's token appears nowhere in the store or the logs.

Run: ``.venv/bin/python bench/soak_watch.py [--minutes 60] [--logs 20] [--faults 0.2]``.
Not run by the suite. Skips (prints why) without anvil.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from toolkit.store import Store, StoreError
from toolkit.testing import FaultProxy, WebhookReceiver
from toolkit.testing.anvil import AnvilUnavailable, start_anvil
from toolkit.testing.faults import FaultMix
from toolkit.testing.transfers import TokenActivity, deploy_token

CHAIN = 31337
TOKEN = "Xq7sLk29dWmB4TnP8cR3vY6z"  # the webhook URL's secret segment: must never be stored
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}

PLAN = """
db = "{db}"
base_url = "{served}"

[[chain]]
chain = {chain}
rpc_url = "{rpc}"
confirmations = 2
poll_s = 1
from_block = 0
events = ["transfers"]

[[credit]]
every_s = {credit_every_s}
all_known = true

[[health]]
every_s = 2
webhook_url = "${{SOAK_WEBHOOK_URL}}"
"""


# -- the reader process ------------------------------------------------------------------------


def reader(db: Path, report_every_s: float, stats: Path, out: Path) -> None:
    """Read ``db`` every 0.5 s and run ``toolkit report`` every ``report_every_s`` until
    SIGTERM; then write the counts to ``stats`` (JSON)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts = {"reads": 0, "read_failures": 0, "reports_ok": 0, "reports_failed": 0}
    errors: list[str] = []
    report: subprocess.Popen[bytes] | None = None
    next_report = time.monotonic() + report_every_s
    while not stop.is_set():
        counts["reads"] += 1
        try:
            with Store(db, read_only=True) as store:
                store.query(
                    "SELECT (SELECT count(*) FROM chain_logs) AS logs, "
                    "(SELECT sum(amount) FROM token_transfers) AS moved, "
                    "(SELECT count(*) FROM credit_accounts) AS accounts, "
                    "(SELECT count(*) FROM alerts) AS alerts"
                )
        except StoreError as exc:
            counts["read_failures"] += 1
            errors.append(str(exc)[:200])
        if report is not None and report.poll() is not None:
            counts["reports_ok" if report.returncode == 0 else "reports_failed"] += 1
            report = None
        if report is None and time.monotonic() >= next_report:
            command = [sys.executable, "-m", "toolkit", "report", "--db", str(db), "--out",
                       str(out)]  # fmt: skip
            report = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=ENV)  # fmt: skip
            next_report = time.monotonic() + report_every_s
        stop.wait(0.5)
    if report is not None:
        counts["reports_ok" if report.wait() == 0 else "reports_failed"] += 1
    stats.write_text(json.dumps(counts | {"errors": errors[:5]}))


# -- the soak ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(port: int) -> subprocess.Popen[bytes]:
    """``toolkit serve --traffic`` on ``port``, once it answers."""
    command = [sys.executable, "-m", "toolkit", "serve", "--port", str(port), "--traffic",
               "--log-level", "warning"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=ENV)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError("toolkit serve did not answer within 120 s")


class Miner(threading.Thread):
    """A block of ``logs`` transfers a second until stopped; ``reorg`` replaces the last
    blocks between two of them."""

    def __init__(self, token: TokenActivity, logs: int) -> None:
        super().__init__(daemon=True)
        self.token, self.logs = token, logs
        self.lock, self.halt = threading.Lock(), threading.Event()
        self.blocks = 0

    def run(self) -> None:
        while not self.halt.wait(1.0):
            with self.lock:
                self.token.mine(self.logs)
                self.blocks += 1

    def reorg(self, depth: int, db: Path) -> bool:
        """Pause mining until the follower has the head (so the replaced blocks are stored
        ones), then replace the last ``depth`` blocks; whether it had caught up."""
        with self.lock:
            caught = _catch_up(db, self.token.head(), timeout_s=120.0)
            self.token.reorg(depth, self.logs)
        return caught


def _watch(plan: Path, log: Path, hook_url: str, served: str) -> subprocess.Popen[bytes]:
    env = ENV | {"SOAK_WEBHOOK_URL": hook_url, "TOOLKIT_RPC_URL_8453": f"{served}/rpc/8453"}
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "toolkit", "watch", str(plan), "--log-json"],
            stdout=sink, stderr=sink, env=env,
        )  # fmt: skip


def _runs(db: Path) -> list[tuple[str, str, int | None]]:
    """Every run of the plan: kind, status, rows written (a resumed run counts all of them)."""
    with Store(db, read_only=True) as store:
        frame = store.runs().sort("started_at")
    return [(r["kind"], r["status"], r["rows_written"]) for r in frame.iter_rows(named=True)]


def _status(db: Path) -> dict[str, dict[str, Any]]:
    try:
        with Store(db, read_only=True) as store:
            return {r["name"]: r for r in store.statuses().iter_rows(named=True)}
    except StoreError:
        return {}


def _catch_up(db: Path, head: int, timeout_s: float = 300.0) -> bool:
    """Wait until the chain follower has stored ``head``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (_status(db).get(f"chain:{CHAIN}", {}).get("stored_block") or -1) >= head:
            return True
        time.sleep(1.0)
    return False


def _canonical(db: Path, token: TokenActivity) -> dict[str, int]:
    """The stored logs against the node's canonical ones, and duplicated rows."""
    expected = {
        (int(log["blockNumber"], 16), int(log["logIndex"], 16), log["transactionHash"],
         log["blockHash"], log["data"])
        for log in token.logs(0, token.head())
    }  # fmt: skip
    with Store(db, read_only=True) as store:
        stored = store.query(
            "SELECT block_number, log_index, tx_hash, block_hash, data FROM chain_logs "
            "WHERE chain = $c",
            {"c": CHAIN},
        ).rows()
        blocks = store.query(
            "SELECT number, hash FROM chain_blocks WHERE chain = $c", {"c": CHAIN}
        ).rows()
        reorgs = store.query("SELECT count(*) AS n FROM chain_reorgs")["n"][0]
        twice = store.query(
            "SELECT (SELECT count(*) - count(DISTINCT (chain, block_number, log_index)) "
            "FROM chain_logs) + (SELECT count(*) - count(DISTINCT (chain, block_number, "
            "log_index)) FROM token_transfers) + (SELECT count(*) - count(DISTINCT alert_id) "
            "FROM alerts) AS n"
        )["n"][0]
    wrong_headers = sum(
        1
        for number, hash_ in blocks
        if token.rpc("eth_getBlockByNumber", [hex(number), False])["hash"] != hash_
    )
    return {
        "node_logs": len(expected), "stored_logs": len(stored),
        "orphaned": len(set(stored) - expected), "missing": len(expected - set(stored)),
        "duplicated": int(twice) + len(stored) - len(set(stored)),
        "headers_checked": len(blocks), "headers_not_the_nodes": wrong_headers,
        "reorgs_recorded": int(reorgs),
    }  # fmt: skip


def _alerts(db: Path, receiver: WebhookReceiver, logs: str) -> dict[str, Any]:
    with Store(db, read_only=True) as store:
        ids = store.query("SELECT alert_id FROM alerts")["alert_id"].to_list()
        tables = store.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        )["table_name"].to_list()
        text = "\n".join(str(store.query(f'SELECT * FROM "{t}"').rows()) for t in tables)
    posted = [body["alert_id"] for body in receiver.bodies]
    return {
        "alerts": len(ids), "bodies": len(posted),
        "each_posted_once": sorted(posted) == sorted(ids) and len(set(posted)) == len(posted),
        "token_in_store": TOKEN in text, "token_in_logs": TOKEN in logs,
    }  # fmt: skip


def soak(args: argparse.Namespace, node: Any, workdir: Path) -> None:
    """The soak itself (module docstring), printing as it goes and the figures at the end."""
    token = deploy_token(node)
    token.mine(args.logs, blocks=5)
    db, plan, log = workdir / "soak.duckdb", workdir / "plan.toml", workdir / "watch.log"
    port = _free_port()
    served_url = f"http://127.0.0.1:{port}"
    mix = FaultMix(share=args.faults, seed=1) if args.faults > 0 else FaultMix(share=0.0)
    with (
        FaultProxy(node.url, mix=mix) as proxy,
        WebhookReceiver() as receiver,
    ):
        server = _serve(port)
        plan.write_text(PLAN.format(db=db, served=served_url, chain=CHAIN, rpc=proxy.url,
                                    credit_every_s=args.credit_every_s))  # fmt: skip
        hook_url = f"{receiver.url}/services/T0SOAK/B0SOAK/{TOKEN}"
        stats = workdir / "reader.json"
        miner = Miner(token, args.logs)
        watch = _watch(plan, log, hook_url, served_url)
        read = None
        try:
            while not db.exists():
                time.sleep(0.2)
            read = subprocess.Popen(
                [sys.executable, __file__, "--reader", str(db), "--stats", str(stats),
                 "--report-every-s", str(args.report_every_s), "--out", str(workdir / "report")],
                env=ENV,
            )  # fmt: skip
            miner.start()
            started = time.monotonic()
            span_s = args.minutes * 60.0
            events = [(0.4, "reorg"), (0.6, "kill")]
            for share, event in events:
                time.sleep(max(0.0, started + share * span_s - time.monotonic()))
                if event == "reorg":
                    stored = "stored" if miner.reorg(3, db) else "NOT all stored yet"
                    print(f"{time.monotonic() - started:6.0f} s  anvil_reorg of the last 3 blocks "
                          f"({stored})")  # fmt: skip
                else:
                    watch.send_signal(signal.SIGKILL)
                    watch.wait()
                    time.sleep(2.0)
                    watch = _watch(plan, log, hook_url, served_url)
                    print(f"{time.monotonic() - started:6.0f} s  watch killed (SIGKILL), started "
                          "again")  # fmt: skip
            time.sleep(max(0.0, started + span_s - time.monotonic()))
            miner.halt.set()
            miner.join()
            head = token.head()
            caught = _catch_up(db, head)
            print(f"{time.monotonic() - started:6.0f} s  mining stopped at block {head}; follower "
                  f"{'caught up' if caught else 'NOT caught up within 300 s'}")  # fmt: skip
        finally:
            watch.send_signal(signal.SIGTERM)
            code = watch.wait(timeout=120)
            if read is not None:
                read.send_signal(signal.SIGTERM)
                read.wait(timeout=300)
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        statuses = _status(db)
        runs = _runs(db)
        logs = log.read_text(errors="replace")
        chain = _canonical(db, token)
        alerts = _alerts(db, receiver, logs)
        faults = sum(proxy.faults().values())
    _print(args, code, miner.blocks, (statuses, runs), json.loads(stats.read_text()), chain,
           alerts, faults, len(proxy.records))  # fmt: skip


def _print(
    args: argparse.Namespace, code: int, blocks: int,
    followers: tuple[dict[str, dict[str, Any]], list[tuple[str, str, int | None]]],
    reader_stats: dict[str, Any], chain: dict[str, int], alerts: dict[str, Any], faults: int,
    requests: int,
) -> None:  # fmt: skip
    print()
    print(
        f"soak of {args.minutes:g} min: {blocks} blocks of {args.logs} logs mined, "
        f"1 reorg (3 blocks), 1 restart after SIGKILL, watch exit status {code} after SIGTERM"
    )
    print(f"fault proxy: {faults} of {requests} requests to anvil failed ({args.faults:.0%} asked)")
    print(f"reader: {reader_stats['reads']} reads, {reader_stats['read_failures']} failed; "
          f"toolkit report: {reader_stats['reports_ok']} ok, "
          f"{reader_stats['reports_failed']} failed")  # fmt: skip
    for error in reader_stats["errors"]:
        print(f"  read error: {error}")
    statuses, runs = followers
    for kind, state, rows in runs:
        print(f"run {kind}: {state}, {rows} rows written (all its starts)")
    for name, row in statuses.items():
        print(f"follower {name}: {row['rows_written']} rows since its last start, "
              f"{row['polls']} polls, {row['errors']} errors, {row['reorgs']} reorgs, "
              f"state {row['state']}, last error {row['last_error'] or '-'}")  # fmt: skip
    exact = chain["orphaned"] == chain["missing"] == chain["duplicated"] == 0
    print(f"chain: {chain['stored_logs']} logs stored, {chain['node_logs']} on the node's "
          f"canonical chain: {chain['orphaned']} orphaned, {chain['missing']} missing, "
          f"{chain['duplicated']} duplicated rows -> {'EXACT' if exact else 'NOT EXACT'}; "
          f"{chain['headers_checked']} headers checked, {chain['headers_not_the_nodes']} "
          f"not the node's; {chain['reorgs_recorded']} reorgs recorded")  # fmt: skip
    print(f"alerts: {alerts['alerts']} rows, {alerts['bodies']} webhook bodies, each posted "
          f"once: {alerts['each_posted_once']}; webhook token in the store: "
          f"{alerts['token_in_store']}, in the logs: {alerts['token_in_logs']}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--logs", type=int, default=20, help="transfers (logs) a block")
    parser.add_argument("--faults", type=float, default=0.2, help="share of anvil requests failed")
    parser.add_argument("--credit-every-s", type=float, default=300.0)
    parser.add_argument("--report-every-s", type=float, default=300.0)
    parser.add_argument("--reader", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--stats", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--out", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reader:
        reader(Path(args.reader), args.report_every_s, Path(args.stats), Path(args.out))
        return
    try:
        node = start_anvil(chain_id=CHAIN)
    except AnvilUnavailable as exc:
        print(f"skipped: {exc}")
        return
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; soak of {args.minutes:g} min")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            soak(args, node, Path(tmp))
    finally:
        node.stop()


if __name__ == "__main__":
    main()
