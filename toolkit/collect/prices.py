"""Prices and token names into the store: a simulated run's scenario prices (source
``scenario``), and token names from the chain registry or, for a token it lacks, the token
contract through web3.py (cached in ``tokens``).

>>> from datetime import UTC, datetime
>>> from toolkit.scenario import load_scenario
>>> from toolkit.store import Store, latest_prices
>>> store = Store(":memory:")
>>> record_scenario(store, load_scenario("default", env={}), datetime(2026, 1, 1, tzinfo=UTC))
>>> latest_prices(store)["WETH"]
Decimal('3000.000000000000000000')
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from toolkit.chain.registry import default_registry
from toolkit.codecs.functions import decode_result, encode_call
from toolkit.scenario import Scenario
from toolkit.scenario.prices import scenario_prices, scenario_tokens
from toolkit.store import Store, load_prices, store_tokens

__all__ = ["record_scenario", "token_name"]


def record_scenario(store: Store, scenario: Scenario, at: datetime) -> None:
    """Store a simulated run's scenario prices (source ``scenario``) and its tokens' names."""
    load_prices(store, scenario_prices(scenario, at), source="scenario")
    store_tokens(store, scenario_tokens(scenario), source="scenario")


def token_name(store: Store, w3: Any | None, chain: int, address: str) -> tuple[str, int] | None:
    """(symbol, decimals) of ``address`` on ``chain``: the registry's, else the store's cache,
    else read from the token contract through ``w3`` (and cached), else None."""
    try:
        token = default_registry().token_by_address(chain, address)
    except (LookupError, ValueError):
        pass
    else:
        return token.symbol, token.decimals
    cached = store.query(
        "SELECT symbol, decimals FROM tokens WHERE chain = $chain AND address = $address",
        {"chain": chain, "address": address.lower()},
    )
    if cached.height:
        return str(cached["symbol"][0]), int(cached["decimals"][0])
    if w3 is None:
        return None
    calls = [
        {"to": address, "data": encode_call("erc20.symbol")},
        {"to": address, "data": encode_call("erc20.decimals")},
    ]
    answers = w3.provider.make_batch_request([("eth_call", [c, "latest"]) for c in calls])
    if not isinstance(answers, list) or any("error" in a for a in answers):
        return None
    (symbol,) = decode_result("erc20.symbol", answers[0]["result"])
    (decimals,) = decode_result("erc20.decimals", answers[1]["result"])
    row = {"chain": chain, "address": address, "symbol": str(symbol), "decimals": int(decimals)}
    store_tokens(store, [row], source="contract")
    return str(symbol), int(decimals)
