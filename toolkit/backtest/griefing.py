"""RFQ griefing: quotes are free and each holds liquidity for the quote window, so a client that
asks for quotes it never converts can hold capacity that honest users then miss.

:func:`attack_flow` is such a client: a bot asking for one quote every ``1 / rate_per_s`` seconds on
one route, each for ``amount`` (by default a tenth of the largest a fee tier allows), never
converting. :func:`griefing` replays honest flow together with the bot, at
each attack rate, quote window and per-key rate limit of the grid, and reports what the bot
holds and what honest users lose. By Little's law a bot served ``λ`` quotes per second holds
about ``λ · window · amount`` of the pool; once that reaches the pool's balance, honest users
see 404s whenever the bot's quotes are live.

>>> frame = griefing(
...     "single-pool", honest_rate_per_s=0.2, attack_rates_per_s=[0.0, 1.0], span_h=0.25
... )
>>> frame["honest_404_share"][0] < frame["honest_404_share"][1]
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import polars as pl

from toolkit.arguments import number, whole
from toolkit.backtest.replay import replay
from toolkit.flows import FLOW_SCHEMA, generate_flow
from toolkit.scenario import Scenario, load_scenario

__all__ = ["attack_flow", "griefing"]


def attack_flow(
    scenario: Scenario | str,
    *,
    rate_per_s: float,
    span_h: float,
    route: tuple[int, int, str] | None = None,
    amount: int | None = None,
    start_s: float = 0.0,
) -> pl.DataFrame:
    """A quote-only bot: a flow frame (the backtest's schema) of ``rate_per_s`` quotes per second on
    ``route`` (``(src, dst, token)``; the scenario's first route by default) that never convert,
    each for ``amount`` (by default a tenth of the largest amount the route's tiers allow: many
    mid-sized quotes hold capacity more steadily than one that needs the whole pool free),
    the first at ``start_s`` seconds.

    >>> attack_flow("single-pool", rate_per_s=2.0, span_h=0.01)["converts"].any()
    False
    """
    s = load_scenario(scenario)
    rate = number(rate_per_s, "rate_per_s", minimum=0)
    hours = number(span_h, "span_h", above=0)
    chosen = s.routes[0] if route is None else s.route(*route)
    if chosen is None:
        raise ValueError(f"route: {route} is not onboarded in scenario {s.name!r}")
    size = max(t.max_amount for t in chosen.fee_tiers) // 10 if amount is None else amount
    whole(size, "amount", minimum=1)
    count = int(rate * hours * 3600)
    times = start_s + np.arange(count, dtype=np.float64) / rate if count else np.zeros(0)
    return pl.DataFrame(
        {
            "request_id": [f"attack{i:07d}" for i in range(count)],
            "t": times,
            "src_chain": [chosen.src] * count,
            "dst_chain": [chosen.dst] * count,
            "token": [chosen.token] * count,
            "amount": [size] * count,
            "type": ["ExactOutput"] * count,
            "converts": [False] * count,
            "convert_delay": [0.0] * count,
        },
        schema=FLOW_SCHEMA,
    )


def griefing(
    scenario: Scenario | str = "single-pool",
    *,
    honest_rate_per_s: float,
    attack_rates_per_s: Sequence[float],
    quote_s: Sequence[int] = (),
    rate_limits_per_s: Sequence[float | None] = (None,),
    attack_amount: int | None = None,
    span_h: float = 1.0,
    seed: int = 0,
) -> pl.DataFrame:
    """Honest flow (:func:`generate_flow` at ``honest_rate_per_s``, no daily profile) replayed
    with a quote-only bot at every attack rate × quote window (``quote_s``; the scenario's when
    empty) × per-key rate limit (quotes per second the service would serve one key; None: no
    limit). One row per point: the bot's rate and what it is served, the share of the pools'
    capacity it holds on average, and the honest requests' 404 and fill rates.
    """
    s = load_scenario(scenario)
    honest = generate_flow(s, span_h=span_h, rate_per_s=honest_rate_per_s, seed=seed, profile=None)
    honest = honest.with_columns(("honest" + pl.col("request_id")).alias("request_id"))
    capacity = sum(p.balance for p in s.pools)
    windows = list(quote_s) or [s.windows.quote_s]
    rows = []
    for rate, window, limit in itertools.product(attack_rates_per_s, windows, rate_limits_per_s):
        served = (
            float(rate) if limit is None else min(float(rate), number(limit, "limit", minimum=0))
        )
        bot = (
            attack_flow(s, rate_per_s=served, span_h=span_h, amount=attack_amount)
            if served > 0
            else honest.clear()
        )
        flow = pl.concat([honest, bot]).sort("t")
        result = replay(
            flow,
            s,
            seed=seed,
            overrides={"quote_s": whole(window, "quote_s", minimum=1)},
        )
        requests = result.requests.with_columns(
            pl.col("request_id").str.starts_with("honest").alias("honest")
        )
        mine = requests.filter("honest")
        bots = requests.filter(~pl.col("honest"))
        quoted = bots.filter(pl.col("quote_id").is_not_null())
        held = float(quoted["amount"].cast(pl.Float64).sum()) * window / (span_h * 3600)
        rows.append(
            {
                "attack_rate_per_s": float(rate),
                "rate_limit_per_s": limit,
                "quote_s": window,
                "attack_quotes_served": quoted.height,
                "capacity_held": held / capacity,
                "honest_requests": mine.height,
                "honest_404_share": _share(mine, "no_capacity"),
                "honest_fill_share": _share(mine, "filled"),
            }
        )
    return pl.DataFrame(rows)


def _share(requests: pl.DataFrame, outcome: str) -> float:
    if requests.height == 0:
        return 0.0
    return float(requests.select((pl.col("outcome") == outcome).mean()).item())
