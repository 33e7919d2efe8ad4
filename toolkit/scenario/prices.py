"""A scenario's token prices as rows for the store's ``prices`` table (source ``scenario``):
what a simulated run stores so that its figures are priced as the simulation priced them.

>>> from datetime import UTC, datetime
>>> from toolkit.scenario import load_scenario
>>> rows = scenario_prices(load_scenario("default"), datetime(2026, 1, 1, tzinfo=UTC))
>>> sorted({(r["symbol"], float(r["usd"])) for r in rows if r["symbol"] in ("USDC", "WETH")})
[('USDC', 1.0), ('WETH', 3000.0)]
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from toolkit.scenario.scenario import Scenario

__all__ = ["scenario_prices", "scenario_tokens"]


def scenario_prices(scenario: Scenario, at: datetime) -> list[dict[str, Any]]:
    """One price row per token the scenario lists and prices (its ``[pricing]`` prices, then
    its AMM tokens' own), at ``at``."""
    rows = []
    for token in scenario.tokens:
        price = scenario.pricing.price_usd(token.symbol)
        if price is not None:
            rows.append(_row(token, price, at))
    for amm_token in scenario.amm.tokens:
        rows.append(_row(amm_token, amm_token.price_usd, at))
    return rows


def scenario_tokens(scenario: Scenario) -> list[dict[str, Any]]:
    """Every token the scenario names: chain, address, symbol, decimals."""
    listed: list[Any] = [*scenario.tokens, *scenario.amm.tokens]
    return [
        {"chain": t.chain, "address": t.address, "symbol": t.symbol, "decimals": t.decimals}
        for t in listed
    ]


def _row(token: Any, price: Any, at: datetime) -> dict[str, Any]:
    return {
        "chain": token.chain,
        "token": token.address,
        "symbol": token.symbol,
        "observed_at": at,
        "usd": price,
    }
