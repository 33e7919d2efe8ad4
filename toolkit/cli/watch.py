"""``toolkit watch PLAN.toml``: one process, one database, every follower of a plan.

The plan (:mod:`toolkit.collect.watch_plan`) names the followers: chains (reorg-safe), pools,
the credit book, the liquidity stream, sweeps, health-factor watches (``toolkit collect
health``'s, built by the same function: :func:`toolkit.cli.collect.health.health_watch`).
Each runs on its cadence in one loop (:func:`toolkit.collect.follow.follow`); ``toolkit
status`` shows them from any process while they write. Run again, each follower resumes the
run its name last recorded (an interrupted or killed one), from where the store says; rename a
section to start a new run.

The service target: the plan's ``embedded``/``base_url``/``swap_url``/``profile``, which the
options override, else the environment, as ``toolkit collect``. A chain, pools or health section
without ``rpc_url`` reads ``$TOOLKIT_RPC_URL_<chainId>`` (or the embedded chain).

``--metrics-port`` serves the followers' Prometheus metrics (:mod:`toolkit.collect.metrics`:
rows, polls, errors, reorgs, head, lag in blocks and seconds, last flush) on loopback.

Exit status: 130 after SIGINT, 0 after SIGTERM, 1 when a follower failed, 2 for a bad plan,
target, database or metrics port (the message names the key).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from toolkit.cli.argtypes import integer
from toolkit.cli.following import add_log_arguments
from toolkit.cli.target import add_target_arguments

__all__ = ["BUILDERS", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``toolkit watch``.

    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser)
    >>> parser.parse_args(["plan.toml", "--log-json"]).log_json
    True
    """
    parser.add_argument("plan", metavar="PLAN.toml", help="the plan of followers (TOML)")
    parser.add_argument(
        "--db", metavar="PATH", default=None, help="DuckDB file (default: the plan's db, else "
        "data/toolkit.duckdb)",
    )  # fmt: skip
    add_target_arguments(parser)
    add_log_arguments(parser)
    parser.add_argument(
        "--metrics-port", type=integer(minimum=0, maximum=65535), metavar="PORT", default=None,
        help="serve the followers' Prometheus metrics at http://127.0.0.1:PORT/metrics (0: a "
        "free port, named in the logs' metrics event)",
    )  # fmt: skip


@dataclass
class Context:
    """What the builders share: the store, the service connection (None when no section
    needs one), the runs to resume by follower name, and what closes the clients opened here
    (nodes, webhooks) when the watch ends."""

    store: Any
    conn: Any
    resume: dict[str, str]
    closing: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def web3(self, chain: int, rpc_url: Any) -> Any:
        """web3 on ``chain``: ``rpc_url`` (a secret), else the connection's node for it."""
        from toolkit.client import TargetError, chain_web3

        if rpc_url is not None:
            w3 = chain_web3(chain, url=rpc_url.get_secret_value())
            self.closing.callback(w3.provider.close)  # type: ignore[attr-defined]
            return w3
        if self.conn is None:
            raise TargetError(f"chain {chain}: give rpc_url, or set TOOLKIT_RPC_URL_{chain}")
        return self.conn.chain(chain)


def _chain(name: str, section: Any, ctx: Context) -> Any:
    from toolkit.collect.chain_follow import ChainFollower

    return ChainFollower(
        ctx.web3(section.chain, section.rpc_url), ctx.store, chain=section.chain,
        from_block=section.from_block, events=section.events, chunk=section.chunk,
        confirmations=section.confirmations, poll_s=section.poll_s, name=name,
        resume=ctx.resume.get(name),
    )  # fmt: skip


def _pools(name: str, section: Any, ctx: Context) -> Any:
    from toolkit.collect.followers import PoolFollower
    from toolkit.collect.pool_state import DEFAULT_DEPTH_TICKS

    return PoolFollower(
        ctx.web3(section.chain, section.rpc_url), ctx.store, chain=section.chain,
        every_s=section.every_s, name=name, resume=ctx.resume.get(name),
        tokens=None if section.tokens is None else list(section.tokens),
        v3_factory=section.v3_factory, v2_factory=section.v2_factory,
        from_block=section.from_block, chunk=section.chunk,
        depth_ticks=section.depth_ticks or DEFAULT_DEPTH_TICKS,
    )  # fmt: skip


def _credit(name: str, section: Any, ctx: Context) -> Any:
    from toolkit.collect import CreditCollector
    from toolkit.collect.followers import CreditFollower

    conn = ctx.conn
    web3s = {c: conn.chain(c) for c in (conn.target.rpc_urls if conn.embedded is None else ())}
    collector = CreditCollector(
        conn.credit_service, ctx.store, accounts=list(section.accounts),
        all_known=section.all_known, web3s=web3s, progress=False,
    )  # fmt: skip
    return CreditFollower(
        collector, every_s=section.every_s, name=name, resume=ctx.resume.get(name)
    )


def _liquidity(name: str, section: Any, ctx: Context) -> Any:
    from toolkit.collect import LiquidityStream
    from toolkit.collect.followers import LiquidityFollower

    stream = LiquidityStream(ctx.conn.service, ctx.store, progress=False)
    return LiquidityFollower(
        stream, every_s=section.every_s, name=name, resume=ctx.resume.get(name)
    )


def _sweep(kind: str) -> Callable[[str, Any, Context], Any]:
    def build(name: str, section: Any, ctx: Context) -> Any:
        from toolkit.cli.collect.service import swap_sweep
        from toolkit.collect import BorrowSweep, RfqSweep
        from toolkit.collect.followers import RoundFollower

        if kind == "swap":
            collector = swap_sweep(ctx.conn, ctx.store, progress=False)
        else:
            sweep_type = RfqSweep if kind == "rfq" else BorrowSweep
            collector = sweep_type(ctx.conn.service, ctx.store, progress=False)
        return RoundFollower(
            collector, every_s=section.every_s, name=name, resume=ctx.resume.get(name)
        )

    return build


def _health(name: str, section: Any, ctx: Context) -> Any:
    from toolkit.cli.collect.health import health_watch
    from toolkit.collect.health_follow import HealthFollower

    client, w3 = ctx.conn.credit_service, ctx.web3(section.chain, section.rpc_url)
    watch = health_watch(section, client, w3, ctx.store, name=name)
    if watch.webhook is not None:
        ctx.closing.callback(watch.webhook.close)
    return HealthFollower(watch, resume=ctx.resume.get(name))


#: section kind → builder of its follower (``name``, the section, the :class:`Context`).
BUILDERS: dict[str, Callable[[str, Any, Context], Any]] = {
    "chain": _chain,
    "pools": _pools,
    "credit": _credit,
    "liquidity": _liquidity,
    "rfq": _sweep("rfq"),
    "borrow": _sweep("borrow"),
    "swap": _sweep("swap"),
    "health": _health,
}


def _resumable(store: Any, kinds: dict[str, str]) -> dict[str, str]:
    """The run each follower name last recorded, when it can go on (same kind, not completed)."""
    resume = {}
    for row in store.statuses().iter_rows(named=True):
        name, run_id = row["name"], row["run_id"]
        if name not in kinds or run_id is None or row["kind"] != kinds[name]:
            continue
        if store.run_record(run_id)["status"] != "completed":
            resume[name] = run_id
    return resume


def _fail(problem: BaseException | str) -> int:
    from toolkit.cli.argtypes import flagged

    print(f"toolkit watch: {flagged(problem)}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _traffic(plan: Any, conn: Any) -> Iterator[None]:
    """On the embedded service with a liquidity section, other users' order flow (as
    ``collect liquidity --embedded``), so the stream has a market to report."""
    if conn is None or conn.embedded is None or not plan.liquidity:
        yield
        return
    from toolkit.backtest import generate_flow
    from toolkit.simulate import Traffic

    with Traffic(conn.embedded, generate_flow(conn.embedded.scenario, span_h=24.0)):
        yield


def _secret(value: Any) -> str | None:
    return None if value is None else str(value.get_secret_value())


def run(args: argparse.Namespace) -> int:
    """Load the plan, open the database and the targets, run every follower until a signal."""
    from toolkit.cli.collect.outcome import outcome
    from toolkit.cli.following import run_followers
    from toolkit.client import Connection, Target, TargetError
    from toolkit.collect.watch_plan import load_plan
    from toolkit.errors import InputError
    from toolkit.store import Store, StoreError

    try:
        plan = load_plan(args.plan)
    except InputError as exc:
        return _fail(exc)
    conn = None
    try:
        nodes_unnamed = any(s.rpc_url is None for s in plan.chain) or any(
            s.rpc_url is None for s in plan.pools
        )
        if plan.needs_service() or nodes_unnamed:
            target = Target.load(
                profile=args.profile or plan.profile, embedded=args.embedded or plan.embedded,
                base_url=args.base_url or _secret(plan.base_url),
                swap_url=args.swap_url or _secret(plan.swap_url),
            )  # fmt: skip
            conn = (
                None if target.kind == "none" and not plan.needs_service() else Connection(target)
            )
        store = Store(args.db or plan.db)
    except (TargetError, StoreError) as exc:
        return _fail(exc)
    with contextlib.ExitStack() as stack:
        stack.enter_context(store)
        if conn is not None:
            stack.enter_context(conn)
        # A section's kind is the kind of the run its follower records.
        kinds = {name: kind for kind, name, _ in plan.sections()}
        ctx = Context(store, conn, _resumable(store, kinds))
        stack.enter_context(ctx.closing)
        try:
            followers = [
                BUILDERS[kind](name, section, ctx) for kind, name, section in plan.sections()
            ]
        except (TargetError, InputError, ValueError) as exc:
            return _fail(exc)
        with _traffic(plan, conn):
            return int(
                outcome(
                    lambda: run_followers(
                        store, followers, log_json=args.log_json, metrics_port=args.metrics_port
                    ),
                    "the plan's targets",
                )
            )
