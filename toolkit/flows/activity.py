"""Seeded swap and credit activity of other users, beside the RFQ flow of :mod:`.intents`.

Two more flow frames, each sorted by ``t`` (seconds from the start), played on a live embedded
service by :class:`toolkit.simulate.Traffic` together with an RFQ flow:

A **swap flow** (:func:`generate_swap_flow`, schema :data:`~toolkit.flows.SWAP_FLOW_SCHEMA`), one
row per swap on the simulated chains' AMM pools:

=============  =======  ===================================================================
column         dtype    meaning
=============  =======  ===================================================================
``t``          Float64  arrival time, seconds from the start, sorted
``chain``      Int64    chain id of a market (``1`` mainnet, ``8453`` base)
``token_in``   String   symbol of the token sold (a token of that chain's market)
``token_out``  String   symbol of the token bought
``amount_in``  Int128   smallest units of ``token_in``
=============  =======  ===================================================================

A **credit flow** (:func:`generate_credit_flow`, schema :data:`~toolkit.flows.CREDIT_FLOW_SCHEMA`),
one row per action of a borrower on the credit surface:

=============  =======  ===================================================================
column         dtype    meaning
=============  =======  ===================================================================
``t``          Float64  time, seconds from the start, sorted
``borrower``   Int64    index of the borrower among the development accounts
``action``     String   ``lock``, ``draw``, ``repay`` or ``unlock``
``amount``     Int128   smallest units of the credit asset
=============  =======  ===================================================================

Swaps arrive as a Poisson process (the hourly ``profile`` of :func:`.generate_flow`) over equally
weighted pairs and markets, with log-normal sizes in USD. Each borrower locks collateral early,
draws at Poisson times while its debt stays under a share of the collateral, repays each draw
a delay later, and unlocks its collateral once everything is repaid before the end. Everything is
drawn from one ``numpy.random.Generator(PCG64(seed))`` in a fixed order.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Final

import numpy as np
import polars as pl

from toolkit.arguments import fraction, number, whole
from toolkit.flows.distributions import DelayModel, Exponential, LogNormal, generator
from toolkit.flows.intents import DEFAULT_PROFILE, poisson_arrivals
from toolkit.flows.schema import CREDIT_ACTIONS, CREDIT_FLOW_SCHEMA, SWAP_FLOW_SCHEMA
from toolkit.scenario import Scenario, load_scenario
from toolkit.world.evm.accounts import DEV_ACCOUNTS
from toolkit.world.evm.markets import MARKET_CHAINS, market_for

__all__ = [
    "DEFAULT_DRAW_RATE_PER_H",
    "DEFAULT_SWAP_PAIRS",
    "generate_credit_flow",
    "generate_swap_flow",
]

#: Pairs swapped by default, both ways (``BTC`` is the market's BTC token: WBTC or cbBTC).
DEFAULT_SWAP_PAIRS: Final = (
    ("USDC", "WETH"),
    ("WETH", "USDC"),
    ("USDC", "USDT"),
    ("USDT", "USDC"),
    ("USDT", "WETH"),
    ("WETH", "USDT"),
    ("USDC", "BTC"),
    ("BTC", "USDC"),
)
#: Draws per borrower and hour of :func:`generate_credit_flow` unless told otherwise.
DEFAULT_DRAW_RATE_PER_H: Final = 6.0
#: A borrower's first draw waits this long after its lock (the lock mined and seen by /info).
_SETTLE = 60.0
_HOUR = 3600.0


def _swap_keys(
    scenario: Scenario, pairs: Sequence[tuple[str, str]]
) -> list[tuple[int, str, str, int, Decimal]]:
    """(chain, symbol in, symbol out, decimals in, USD price in) per market and pair."""
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs: must be a non-empty sequence of (token_in, token_out) symbols")
    keys = []
    for chain in sorted(MARKET_CHAINS):
        market = market_for(scenario, chain)
        if market is None:
            continue
        btc = "WBTC" if "WBTC" in market.tokens else "cbBTC"
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise ValueError(f"pairs: {pair!r} must be a (token_in, token_out) tuple")
            a, b = (btc if s == "BTC" else s for s in pair)
            for symbol in (a, b):
                if symbol not in market.tokens:
                    raise ValueError(
                        f"pairs: {symbol!r} is not a token of the {MARKET_CHAINS[chain]} market "
                        f"(it has {', '.join(sorted(market.tokens))})"
                    )
            if a == b:
                raise ValueError(f"pairs: {pair!r} swaps a token into itself")
            token = market.tokens[a]
            keys.append((chain, a, b, token.decimals, token.price_usd))
    if not keys:
        raise ValueError(f"scenario: {scenario.name!r} has no AMM market to swap on")
    return keys


def generate_swap_flow(
    scenario: Scenario | str,
    *,
    span_h: float = 24.0,
    rate_per_s: float = 0.05,
    seed: int = 0,
    profile: Sequence[float] | None = DEFAULT_PROFILE,
    pairs: Sequence[tuple[str, str]] = DEFAULT_SWAP_PAIRS,
    median_usd: float = 2_000.0,
    sigma: float = 1.2,
) -> pl.DataFrame:
    """A seeded flow of swaps on the AMM markets of ``scenario`` (a name, a path or a Scenario).

    ``rate_per_s`` is the mean number of swaps per second before the hourly ``profile`` multiplier,
    spread evenly over ``pairs`` on every market; sizes are log-normal around ``median_usd``
    (``sigma`` the log-space spread), in smallest units of ``token_in`` at the scenario's prices.

    >>> swaps = generate_swap_flow("default", span_h=1.0, rate_per_s=0.1, seed=3, profile=None)
    >>> swaps.columns, 300 < swaps.height < 420, sorted(set(swaps["chain"]))
    (['t', 'chain', 'token_in', 'token_out', 'amount_in'], True, [1, 8453])
    """
    s = load_scenario(scenario)
    seed = whole(seed, "seed", minimum=0)
    median = number(median_usd, "median_usd", above=0)
    spread = number(sigma, "sigma", minimum=0)
    keys = _swap_keys(s, pairs)
    rng = generator(seed)
    times = poisson_arrivals(rate_per_s, span_h, seed=rng, profile=profile)
    which = rng.integers(0, len(keys), size=len(times))
    amounts = pl.Series("amount_in", [], dtype=pl.Int128).extend_constant(0, len(times))
    for k, (_, _, _, decimals, price) in enumerate(keys):
        rows = np.flatnonzero(which == k)
        units = int(Decimal(str(median)) / price * Decimal(10) ** decimals)
        sizes = LogNormal(median=max(units, 1), sigma=spread)
        drawn = sizes.sample(rng, len(rows), step=10 ** max(decimals - 4, 0))
        if len(rows):
            amounts.scatter(rows, drawn)
    return pl.DataFrame(
        {
            "t": pl.Series(times, dtype=pl.Float64),
            "chain": pl.Series([keys[k][0] for k in which], dtype=pl.Int64),
            "token_in": pl.Series([keys[k][1] for k in which], dtype=pl.String),
            "token_out": pl.Series([keys[k][2] for k in which], dtype=pl.String),
            "amount_in": amounts,
        },
        schema=SWAP_FLOW_SCHEMA,
    )


def generate_credit_flow(
    scenario: Scenario | str,
    *,
    span_h: float = 24.0,
    borrowers: int = 4,
    draw_rate_per_h: float = DEFAULT_DRAW_RATE_PER_H,
    seed: int = 0,
    collateral_usd: float = 20_000.0,
    draw_usd: float = 500.0,
    sigma: float = 0.8,
    max_utilization: float = 0.5,
    repay_delay: DelayModel | None = None,
) -> pl.DataFrame:
    """A seeded flow of ``borrowers`` using the credit product of ``scenario``.

    Borrower ``i`` (development account ``i``) locks ``collateral_usd`` of the credit asset in
    the first tenth of the run, then draws at Poisson times (``draw_rate_per_h`` draws per hour,
    log-normal sizes around ``draw_usd``) from a minute after its lock; a draw that would lift its
    debt over ``max_utilization`` of the collateral is not made. Each draw is repaid in full
    ``repay_delay`` later (default exponential, mean ten minutes) when that falls within the
    run; a borrower with nothing left to repay before the end unlocks its collateral a minute
    after its last repayment.

    >>> credit = generate_credit_flow("default", span_h=1.0, borrowers=2, seed=5)
    >>> credit.columns, sorted(set(credit["action"])), set(credit["borrower"]) == {0, 1}
    (['t', 'borrower', 'action', 'amount'], ['draw', 'lock', 'repay', 'unlock'], True)
    """
    s = load_scenario(scenario)
    if s.credit is None:
        raise ValueError(f"scenario: {s.name!r} has no credit product")
    seed = whole(seed, "seed", minimum=0)
    duration = number(span_h, "span_h", above=0) * _HOUR
    count = whole(borrowers, "borrowers", minimum=1, maximum=DEV_ACCOUNTS)
    per_hour = number(draw_rate_per_h, "draw_rate_per_h", minimum=0)
    share = fraction(max_utilization, "max_utilization")
    delay = Exponential(600.0) if repay_delay is None else repay_delay
    if not isinstance(delay, DelayModel):
        raise ValueError("repay_delay: must be a Constant, Uniform or Exponential delay model")
    unit = Decimal(10) ** s.credit.asset_decimals
    collateral = int(Decimal(str(number(collateral_usd, "collateral_usd", above=0))) * unit)
    median = int(Decimal(str(number(draw_usd, "draw_usd", above=0))) * unit)
    sizes = LogNormal(median=max(median, 1), sigma=number(sigma, "sigma", minimum=0))
    step = 10 ** max(s.credit.asset_decimals - 2, 0)  # whole cents
    rng = generator(seed)
    rows: list[tuple[float, int, str, int]] = []
    for borrower in range(count):
        locked_at = float(rng.uniform(0.0, duration / 10))
        rows.append((locked_at, borrower, "lock", collateral))
        start = locked_at + _SETTLE
        times = start + poisson_arrivals(per_hour / _HOUR, duration / _HOUR, seed=rng, profile=None)
        times = times[times < duration]
        drawn = sizes.sample(rng, len(times), step=step).to_list()
        waits = delay.sample(rng, len(times))
        repaid: list[tuple[float, int]] = []  # (time, amount) of the repayments to come
        last = locked_at
        for at, amount, wait in zip(times.tolist(), drawn, waits.tolist(), strict=True):
            owed = sum(a for r, a in repaid if r > at)
            if owed + amount > collateral * share:
                continue
            rows.append((at, borrower, "draw", amount))
            repaid.append((at + wait, amount))
        for at, amount in repaid:
            if at < duration:
                rows.append((at, borrower, "repay", amount))
                last = max(last, at)
        if all(at < duration for at, _ in repaid) and last + _SETTLE < duration:
            rows.append((last + _SETTLE, borrower, "unlock", collateral))
    rows.sort(key=lambda row: (row[0], row[1], CREDIT_ACTIONS.index(row[2])))
    return pl.DataFrame(rows, schema=CREDIT_FLOW_SCHEMA, orient="row")
