"""The flows traffic plays: each frame checked against the scenario and sorted, and its rows fed
to the traffic's scheduler as they fall due."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.scenario import Scenario
from toolkit.scheduler import Scheduler
from toolkit.world.chain.accounts import DEV_ACCOUNTS
from toolkit.world.chain.markets import MARKET_CHAINS, Market, market_for

__all__ = [
    "CREDIT_ACTIONS",
    "CREDIT_FLOW_COLUMNS",
    "FLOW_COLUMNS",
    "SWAP_FLOW_COLUMNS",
    "check_credit",
    "check_swaps",
    "checked_frame",
    "feed_rows",
]

#: The columns of a flow frame that traffic reads.
FLOW_COLUMNS = (
    "t",
    "src_chain",
    "dst_chain",
    "token",
    "amount",
    "type",
    "converts",
    "convert_delay",
)
#: The columns of a swap flow that traffic reads (see :func:`toolkit.backtest.generate_swap_flow`).
SWAP_FLOW_COLUMNS = ("t", "chain", "token_in", "token_out", "amount_in")
#: The columns of a credit flow that traffic reads (see
#: :func:`toolkit.backtest.generate_credit_flow`).
CREDIT_FLOW_COLUMNS = ("t", "borrower", "action", "amount")
#: What a credit flow's borrowers do (the rows' ``action``).
CREDIT_ACTIONS = ("lock", "draw", "repay", "unlock")


def feed_rows(
    scheduler: Scheduler,
    start: float,
    frame: pl.DataFrame,
    handler: Callable[[float, dict[str, Any]], None],
) -> None:
    """Feed ``frame``'s rows (sorted by ``t``) to ``scheduler`` at ``start + t``: ``handler`` gets
    each row as a dict, read from the frame when its turn comes (a day of flow at scale is
    millions of rows: reading them all first would hold the start up for seconds).

    >>> from toolkit.scheduler import Scheduler
    >>> sched = Scheduler(100.0)
    >>> feed_rows(sched, 100.0, pl.DataFrame({"t": [0.0, 2.5], "x": [1, 2]}), print)
    >>> sched.run()
    100.0 {'t': 0.0, 'x': 1}
    102.5 {'t': 2.5, 'x': 2}
    """
    rows = frame.iter_rows(named=True)
    times = (frame["t"].cast(pl.Float64) + start).to_list()
    scheduler.feed(times, lambda at, _: handler(at, next(rows)))


def checked_frame(
    frame: pl.DataFrame | None, name: str, columns: tuple[str, ...], generator: str
) -> pl.DataFrame:
    """``frame``'s ``columns``, sorted by ``t`` (an empty frame for None)."""
    if frame is None:
        return pl.DataFrame(schema=list(columns))
    if not isinstance(frame, pl.DataFrame):
        raise ValueError(f"{name}: must be a polars DataFrame (see {generator})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)}")
    out = frame.select(columns)
    t = out["t"]
    if not t.dtype.is_numeric():
        raise ArgumentError(f"{name}.t", "seconds from the start (numbers)", str(t.dtype))
    bad = out.filter(pl.col("t").is_null() | ~pl.col("t").cast(pl.Float64).is_finite())
    bad = bad if not bad.is_empty() else out.filter(pl.col("t") < 0)
    if not bad.is_empty():
        raise ArgumentError(f"{name}.t", "finite seconds >= 0", bad["t"][0])
    return out.sort("t")


def _integers(
    frame: pl.DataFrame, name: str, column: str, minimum: int, maximum: int | None, rule: str
) -> None:
    values = frame[column]
    if not values.dtype.is_integer():
        raise ArgumentError(f"{name}.{column}", rule, str(values.dtype))
    low = values.is_null() | (values < minimum)
    bad = values.filter(low if maximum is None else low | (values > maximum))
    if len(bad):
        raise ArgumentError(f"{name}.{column}", rule, bad[0])


def check_swaps(swaps: pl.DataFrame, scenario: Scenario) -> dict[int, Market]:
    """The market of every chain ``swaps`` trades on, each row's tokens checked against it."""
    if swaps.is_empty():
        return {}
    _integers(swaps, "swaps", "chain", 1, None, "a chain id")
    _integers(swaps, "swaps", "amount_in", 1, None, "an integer >= 1 (smallest units)")
    markets: dict[int, Market] = {}
    for chain in swaps["chain"].unique().sort().to_list():
        market = market_for(scenario, chain) if chain in MARKET_CHAINS else None
        if market is None:
            names = ", ".join(f"{c} ({n})" for c, n in sorted(MARKET_CHAINS.items()))
            raise ArgumentError("swaps.chain", f"a chain with an AMM market: {names}", chain)
        markets[chain] = market
    for column in ("token_in", "token_out"):
        for chain, symbol in swaps.select("chain", column).unique().sort("chain", column).rows():
            tokens = markets[chain].tokens
            if symbol not in tokens:
                rule = f"a token of the {MARKET_CHAINS[chain]} market ({', '.join(sorted(tokens))})"
                raise ArgumentError(f"swaps.{column}", rule, symbol)
    same = swaps.filter(pl.col("token_in") == pl.col("token_out"))
    if not same.is_empty():
        raise ArgumentError("swaps.token_out", "another token than token_in", same["token_out"][0])
    return markets


def check_credit(credit: pl.DataFrame, scenario: Scenario) -> str:
    """The credit asset's address; every row of ``credit`` checked."""
    if credit.is_empty():
        return ""
    if scenario.credit is None:
        raise ValueError(f"credit: scenario {scenario.name!r} has no credit product")
    actions = credit["action"]
    bad = actions.filter(actions.is_null() | ~actions.cast(pl.String).is_in(CREDIT_ACTIONS))
    if len(bad):
        raise ArgumentError("credit.action", f"one of {', '.join(CREDIT_ACTIONS)}", bad[0])
    rule = f"the index of a development account, 0 to {DEV_ACCOUNTS - 1}"
    _integers(credit, "credit", "borrower", 0, DEV_ACCOUNTS - 1, rule)
    _integers(credit, "credit", "amount", 1, None, "an integer >= 1 (smallest units)")
    return scenario.credit.asset_address
