"""Prices and token names into the store: a simulated run's scenario prices (source
``scenario``), pools' mid prices read on chain (source ``pool``), and token names from the
chain registry or, for a token it lacks, the token contract through web3.py (cached in
``tokens``).

A pool's mid price comes from its stored state (``amm_pool_snapshots``, read through web3.py
by ``toolkit collect pools``): a V3 pool's ``slot0`` square-root price, a V2 pair's reserves.
Only pools against a USD stablecoin (USDC, USDT, DAI), taken at $1, price their other token.

>>> from datetime import UTC, datetime
>>> from toolkit.scenario import load_scenario
>>> from toolkit.store import Store, latest_prices
>>> store = Store(":memory:")
>>> record_scenario(store, load_scenario("default"), datetime(2026, 1, 1, tzinfo=UTC))
>>> latest_prices(store)["WETH"]
Decimal('3000.000000000000000000')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal, localcontext
from fractions import Fraction
from statistics import median
from typing import Any, Final

from toolkit.chain.registry import default_registry
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import decode_result, encode_call
from toolkit.scenario import Scenario
from toolkit.scenario.prices import scenario_prices, scenario_tokens
from toolkit.store import Store, load_prices, store_tokens

__all__ = [
    "USD_STABLES",
    "pool_mid_usd",
    "pool_price_rows",
    "record_pool_prices",
    "record_scenario",
    "record_token_names",
    "token_name",
]

#: Stablecoins a pool's mid price is quoted against, taken at $1.
USD_STABLES: Final = ("USDC", "USDT", "DAI")
#: The address routes use for a chain's native coin (ETH on the chains the swap API serves).
NATIVE: Final = "0x" + "00" * 20


def pool_mid_usd(
    state: Mapping[str, Any], decimals0: int, decimals1: int, stable_is_token1: bool
) -> Decimal | None:
    """USD per whole non-stable token of one pool snapshot row (``sqrt_price_x96`` for V3,
    ``reserve0``/``reserve1`` for V2); None for an empty pool.

    >>> pool_mid_usd({"sqrt_price_x96": str(2**96)}, 18, 18, True)
    Decimal('1')
    >>> pool_mid_usd({"reserve0": 10**18, "reserve1": 3000 * 10**6}, 18, 6, True)
    Decimal('3000')
    """
    if state.get("sqrt_price_x96"):
        # token1 per token0 in smallest units (Uniswap V3 whitepaper, 6.1), exactly
        raw = Fraction(int(str(state["sqrt_price_x96"])) ** 2, 2**192)
    elif state.get("reserve0") and state.get("reserve1"):
        raw = Fraction(int(state["reserve1"]), int(state["reserve0"]))
    else:
        return None
    if raw == 0:
        return None
    per_token0 = raw * Fraction(10) ** (decimals0 - decimals1)  # whole token1 per whole token0
    price = per_token0 if stable_is_token1 else 1 / per_token0
    with localcontext() as context:
        context.prec = 30
        return Decimal(price.numerator) / Decimal(price.denominator)


def record_pool_prices(store: Store, snapshot_id: str, w3: Any | None = None) -> int:
    """Store, with source ``pool``, the USD price of each token that snapshot ``snapshot_id``
    holds a pool of against a USD stablecoin (:func:`pool_price_rows`). Returns the rows
    stored."""
    frame = store.query(
        "SELECT chain, pool, observed_at, token0, token1, reserve0, reserve1, sqrt_price_x96 "
        "FROM amm_pool_snapshots WHERE snapshot_id = $id AND token0 IS NOT NULL",
        {"id": snapshot_id},
    )
    return load_prices(
        store, pool_price_rows(store, frame.iter_rows(named=True), w3), source="pool"
    )


def pool_price_rows(
    store: Store, states: Iterable[Mapping[str, Any]], w3: Any | None = None
) -> list[dict[str, Any]]:
    """Price rows (``chain``, ``token``, ``symbol``, ``observed_at``, ``usd``) from pool states
    (``chain``, ``observed_at``, ``token0``, ``token1`` and ``sqrt_price_x96`` or
    ``reserve0``/``reserve1``): for each token held in a pool against a USD stablecoin, the
    median of those pools' mid prices (a thin pool off the market moves it least). A token the
    registry lacks is named through ``w3`` (:func:`token_name`); a pool of two stablecoins, of
    none, or empty prices nothing."""
    mids: dict[tuple[int, str, str, Any], list[Decimal]] = {}
    for state in states:
        chain = int(state["chain"])
        name0 = token_name(store, w3, chain, state["token0"])
        name1 = token_name(store, w3, chain, state["token1"])
        if name0 is None or name1 is None:
            continue
        stable1 = name1[0].upper() in USD_STABLES
        if stable1 == (name0[0].upper() in USD_STABLES):
            continue  # both or neither a stablecoin: no USD price to read
        usd = pool_mid_usd(state, name0[1], name1[1], stable1)
        if usd is None:
            continue
        token, symbol = (state["token0"], name0[0]) if stable1 else (state["token1"], name1[0])
        mids.setdefault((chain, token.lower(), symbol, state["observed_at"]), []).append(usd)
    return [
        {"chain": chain, "token": token, "symbol": symbol, "observed_at": at, "usd": median(usd)}
        for (chain, token, symbol, at), usd in mids.items()
    ]


def record_scenario(store: Store, scenario: Scenario, at: datetime) -> None:
    """Store a simulated run's scenario prices (source ``scenario``) and its tokens' names."""
    with store.session():
        load_prices(store, scenario_prices(scenario, at), source="scenario")
        store_tokens(store, scenario_tokens(scenario), source="scenario")


def token_name(store: Store, w3: Any | None, chain: int, address: str) -> tuple[str, int] | None:
    """(symbol, decimals) of ``address`` on ``chain``: the registry's, else the store's cache,
    else read from the token contract through ``w3`` (and cached), else None (also when the
    address answers no ERC-20 symbol and decimals)."""
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
    try:
        (symbol,) = decode_result("erc20.symbol", answers[0]["result"])
        (decimals,) = decode_result("erc20.decimals", answers[1]["result"])
    except InvalidValue:  # no contract there, or not an ERC-20: an empty or odd answer
        return None
    row = {"chain": chain, "address": address, "symbol": str(symbol), "decimals": int(decimals)}
    store_tokens(store, [row], source="contract")
    return str(symbol), int(decimals)


def record_token_names(store: Store, w3: Any | None, chain: int, addresses: Iterable[str]) -> None:
    """Cache in ``tokens`` the name of each of ``addresses`` on ``chain`` not cached yet, so that
    a query can price stored amounts by symbol and decimals: the native address as ``ETH`` (18
    decimals) and a registry token as the registry names it (source ``registry``); any other
    is read from its contract through ``w3`` (:func:`token_name`, source ``contract``)."""
    cached = set(
        store.query("SELECT address FROM tokens WHERE chain = $chain", {"chain": chain})[
            "address"
        ].to_list()
    )
    rows = []
    for address in dict.fromkeys(a.lower() for a in addresses):
        if address in cached:
            continue
        if address == NATIVE:
            rows.append({"chain": chain, "address": address, "symbol": "ETH", "decimals": 18})
            continue
        try:
            token = default_registry().token_by_address(chain, address)
        except (LookupError, ValueError):
            token_name(store, w3, chain, address)  # caches what the contract answers
            continue
        rows.append(
            {"chain": chain, "address": address, "symbol": token.symbol, "decimals": token.decimals}
        )
    store_tokens(store, rows, source="registry")
