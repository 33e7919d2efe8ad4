"""Swap routes on a simulated chain's AMM pools: the pathfinder, the Universal Router calldata and
its simulation, as ``GET {swap_url}/{network}/v1/route`` answers them.

:func:`find_route` reads the pool contracts of a :class:`~toolkit.world.evm.Ledger` as they
are, and:

1. splits the input with :func:`toolkit.amm.routing.route_candidates` (paths of up to 3
   hops, up to 4 of them, allocation by equalising marginal outputs; ``timeout_s`` bounds the
   search, anytime). A V3 pool whose ranges run dry before the input is spent takes no part of it;
2. compares that split with the best single path **net of gas**: each one's calldata is priced
   by the chain's gas model at the chain's base fee, converted into the output token at pool mid
   prices, and the larger output net of that cost wins (the single path on a tie);
3. encodes the winner as ``execute(commands, inputs, deadline)`` of the Universal Router
   (:mod:`toolkit.codecs.universal_router`): ``WRAP_ETH`` first for native input, each path as
   V2/V3 exact-input commands (the first pulling ``tokenIn`` from the caller by allowance, the
   next ones spending the router's balance), then ``SWEEP`` (or ``UNWRAP_WETH`` for native
   output) of at least ``minAmountOut`` to the caller; a single-pool-kind single path pays the
   caller directly;
4. runs that transaction on the unchanged state from a funded stand-in sender and undoes it:
   the output it delivers must be the route's ``amountOut`` to the wei, and ``gasUsed`` is the
   gas the chain charges for it (intrinsic and calldata included).

:class:`NoSwapRoute` (the endpoint's 404) when no path connects the tokens, when no path can take
the amount, or when the best route returns less than 1 % of the input's value at the pools' mid
prices.

The pools as venues and their mid prices are :mod:`toolkit.world.swap.pricing`; the calldata,
the choice net of gas and the simulation (2 to 4) are :mod:`toolkit.world.swap.transaction`.

>>> from toolkit.scenario import load_scenario
>>> from toolkit.world.evm import Chains
>>> ledger = Chains(load_scenario("default"), genesis=1_760_000_000.0).ledger(1)
>>> usdc, weth = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", NATIVE
>>> route = find_route(ledger, usdc, weth, 10_000 * 10**6, slippage_bps=50, now=1_760_000_000.0)
>>> 3.2 < route.amount_out / 10**18 < 3.4, route.min_amount_out == route.amount_out * 9950 // 10000
(True, True)
>>> route.gas_limit == route.gas_used * 13 // 10
True
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from eth_utils import to_checksum_address

from toolkit.amm import AmmError
from toolkit.amm.routing import SplitRoute, Venue, route_candidates
from toolkit.arguments import ArgumentError
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.router import UniversalRouter
from toolkit.world.swap.pricing import (
    MIN_VALUE_SHARE,
    NATIVE,
    NoSwapRoute,
    mid_price,
    servable_value,
    too_large,
    traded,
    venues_of,
)
from toolkit.world.swap.transaction import best_net_of_gas, simulate

__all__ = [
    "NATIVE",
    "NoSwapRoute",
    "SwapRoute",
    "find_route",
    "mid_price",
    "search_route",
    "state_key",
    "venues_of",
]

#: Seconds the calldata's deadline lies after the next block.
DEADLINE_SECONDS: Final = 1200


@dataclass(frozen=True)
class SwapRoute:
    """A route as the endpoint answers it, with the split route and its transaction."""

    route: SplitRoute
    amount_in: int
    amount_out: int
    min_amount_out: int
    target: str
    call_data: str
    value: int
    gas_used: int
    gas_limit: int
    mid_amount_out: Decimal


def _router(ledger: Ledger) -> UniversalRouter:
    """The chain's swap router (at its address in the chain registry); ``NoSwapRoute`` when
    none is deployed."""
    try:
        address = default_registry().swap_router(ledger.chain_id)
    except NotInRegistry:
        raise NoSwapRoute("this chain has no AMM pools") from None
    router = ledger.contract(address.lower())
    if not isinstance(router, UniversalRouter):
        raise NoSwapRoute("this chain has no AMM pools")
    return router


def _next_block(ledger: Ledger, now: float) -> tuple[int, int]:
    """The number and timestamp of the block after the one current at ``now``."""
    latest = ledger.block_number(now)
    return latest + 1, ledger.block_timestamp(latest + 1)


def _candidates(
    venues: list[Venue], t_in: str, t_out: str, amount_in: int, timeout_s: float | None
) -> list[SplitRoute]:
    """The split search's candidates (``NoSwapRoute`` when no path can take the amount)."""
    try:
        return route_candidates(venues, t_in, t_out, amount_in, max_paths=4, timeout=timeout_s)
    except AmmError as exc:
        raise NoSwapRoute(str(exc)) from None


def search_route(
    ledger: Ledger,
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    slippage_bps: int = 50,
    timeout_s: float | None = None,
    now: float,
) -> SwapRoute:
    """:func:`find_route` without its cache: always searches."""
    _check_amounts(amount_in, slippage_bps)
    router = _router(ledger)
    native_in, native_out = token_in == NATIVE, token_out == NATIVE
    t_in, t_out = traded(router.weth, token_in, token_out)
    venues = venues_of(ledger)
    mid = mid_price(venues, t_in, t_out)
    if mid is None:
        raise NoSwapRoute(f"no path of up to 3 pools connects {token_in} to {token_out}")
    eth_price = mid_price(venues, router.weth, t_out) or Decimal(0)
    number, timestamp = _next_block(ledger, now)
    value_out = servable_value(ledger, venues, t_out, amount_in, mid)
    route, data, gas_used = best_net_of_gas(
        _candidates(venues, t_in, t_out, amount_in, timeout_s),
        token_out,
        native_in,
        native_out,
        slippage_bps,
        timestamp + DEADLINE_SECONDS,
        ledger.base_fee,
        eth_price,
    )
    if route.amount_out < value_out * MIN_VALUE_SHARE:
        raise NoSwapRoute(too_large(amount_in, route.amount_out, value_out))
    simulate(
        ledger,
        router.address,
        data,
        t_in,
        t_out,
        amount_in,
        native_in,
        native_out,
        timestamp,
        number,
        expected=route.amount_out,
    )
    return SwapRoute(
        route=route,
        amount_in=amount_in,
        amount_out=route.amount_out,
        min_amount_out=route.amount_out * (10_000 - slippage_bps) // 10_000,
        target=str(to_checksum_address(router.address)),
        call_data=data,
        value=amount_in if native_in else 0,
        gas_used=gas_used,
        gas_limit=gas_used * 13 // 10,
        mid_amount_out=value_out,
    )


def _check_amounts(amount_in: int, slippage_bps: int) -> None:
    if isinstance(amount_in, bool) or not isinstance(amount_in, int) or amount_in <= 0:
        raise ArgumentError("amountIn", "a positive integer", amount_in)
    if amount_in >= 1 << 255:
        raise ArgumentError("amountIn", "below 2**255", amount_in)
    if isinstance(slippage_bps, bool) or not isinstance(slippage_bps, int):
        raise ArgumentError("slippageBps", "an integer in [0, 10000]", slippage_bps)
    if not 0 <= slippage_bps <= 10_000:
        raise ArgumentError("slippageBps", "an integer in [0, 10000]", slippage_bps)


#: How many answers :func:`find_route` keeps.
CACHE_SIZE: Final = 1024
_CACHE: OrderedDict[tuple[object, ...], SwapRoute | NoSwapRoute] = OrderedDict()


def state_key(ledger: Ledger) -> tuple[object, ...]:
    """Everything a route depends on in ``ledger``: the chain, its base fee and every pool's
    state (V3 price, tick and liquidity with the initialised ticks; V2 reserves)."""
    pools: list[tuple[object, ...]] = []
    for contract in ledger.state.contracts.values():
        if isinstance(contract, V2PairContract):
            pools.append((contract.address, contract.reserves["0"], contract.reserves["1"]))
        elif isinstance(contract, V3PoolContract):
            pool = contract.pool
            ticks = tuple((t, i.liquidity_net) for t, i in pool.ticks.items())
            pools.append((contract.address, pool.sqrt_price_x96, pool.liquidity, ticks))
    return (ledger.chain_id, ledger.base_fee, tuple(pools))


def find_route(
    ledger: Ledger,
    token_in: str,
    token_out: str,
    amount_in: int,
    *,
    slippage_bps: int = 50,
    timeout_s: float | None = None,
    now: float,
) -> SwapRoute:
    """The route for ``amount_in`` of ``token_in`` into ``token_out`` (lowercase addresses, the
    zero address for the native coin) on ``ledger`` at ``now`` (module docstring).

    ``timeout_s`` (seconds) bounds the search. :class:`ArgumentError` for bad arguments,
    :class:`NoSwapRoute` when there is no route. The answer depends only on the pools, the base fee,
    the next block's timestamp (the calldata's deadline) and the arguments, so the last
    :data:`CACHE_SIZE` answers (routes and :class:`NoSwapRoute`) are kept under exactly that key:
    a route is searched again as soon as any pool moves or a block passes.
    """
    key = (
        state_key(ledger),
        _next_block(ledger, now)[1],
        token_in,
        token_out,
        amount_in,
        slippage_bps,
        timeout_s,
    )
    hit = _CACHE.get(key)
    if hit is None:
        try:
            hit = search_route(
                ledger,
                token_in,
                token_out,
                amount_in,
                slippage_bps=slippage_bps,
                timeout_s=timeout_s,
                now=now,
            )
        except NoSwapRoute as exc:
            hit = exc
        _CACHE[key] = hit
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    if isinstance(hit, NoSwapRoute):
        raise NoSwapRoute(str(hit))
    return hit
