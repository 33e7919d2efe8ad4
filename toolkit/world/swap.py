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
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from eth_utils import to_checksum_address

from toolkit.amm import AmmError
from toolkit.amm.routing import Hop, SplitRoute, Venue, find_paths, route_candidates
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO, get_sqrt_ratio_at_tick
from toolkit.arguments import ArgumentError
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.codecs import universal_router as ur
from toolkit.errors import CapacityError
from toolkit.world.evm import gas
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.contracts import ERC20, Execution, Revert
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.router import UniversalRouter, router_gas

__all__ = [
    "NATIVE",
    "NoSwapRoute",
    "SwapRoute",
    "find_route",
    "search_route",
    "state_key",
    "venues_of",
]

#: The zero address: the native coin, as the swap API names it.
NATIVE: Final = "0x" + "00" * 20
#: The stand-in sender the route is simulated from.
SIMULATION_SENDER: Final = "0x" + "5e" * 20
#: Seconds the calldata's deadline lies after the next block.
DEADLINE_SECONDS: Final = 1200
#: A route returning less than this share of the input's mid-price value is refused.
MIN_VALUE_SHARE: Final = Decimal("0.01")


class NoSwapRoute(CapacityError):
    """No route: no path connects the tokens, or the pools cannot absorb the amount."""


class FullVenue(Venue):
    """A venue that refuses an input it cannot spend whole (a V3 range running dry)."""

    def out(self, token_in: str, amount_in: int, *, commit: bool = False) -> int:
        if amount_in == 0 or isinstance(self.pool, Pair):
            return super().out(token_in, amount_in, commit=commit)
        zero_for_one = token_in == self.token0
        pool = self.pool
        # The price limit sits at the last initialised tick in the swap's direction: beyond it
        # the pool has no liquidity, so the amounts are those of the extreme limit the router
        # uses, without walking thousands of empty bitmap words when the ranges run dry.
        if not pool.ticks:
            raise AmmError("the pool has no liquidity")
        if zero_for_one:
            limit = max(MIN_SQRT_RATIO + 1, get_sqrt_ratio_at_tick(min(pool.ticks)))
        else:
            limit = min(MAX_SQRT_RATIO - 1, get_sqrt_ratio_at_tick(max(pool.ticks)))
        run = pool.swap if commit else pool.quote
        amount0, amount1 = run(zero_for_one, amount_in, limit)
        spent = amount0 if zero_for_one else amount1
        if spent < amount_in:
            raise AmmError("the pool's ranges run dry before the input is spent")
        return -(amount1 if zero_for_one else amount0)


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


def venues_of(ledger: Ledger) -> list[Venue]:
    """Every pool contract of the ledger as a venue (tokens by lowercase address, the pool's
    address as its name); quoting does not change the pools."""
    venues: list[Venue] = []
    for contract in ledger.state.contracts.values():
        if isinstance(contract, V2PairContract):
            venues.append(
                FullVenue.v2(
                    contract.address,
                    contract.token0_address,
                    contract.token1_address,
                    contract.pair,
                )
            )
        elif isinstance(contract, V3PoolContract):
            venues.append(
                FullVenue.v3(
                    contract.address,
                    contract.token0_address,
                    contract.token1_address,
                    contract.pool,
                )
            )
    return venues


def _mid(venue: Venue, token_in: str) -> Decimal:
    """The venue's mid price: ``token_out`` per ``token_in`` in smallest units, before fees."""
    pool = venue.pool
    if isinstance(pool, Pair):
        price = Decimal(pool.reserve1) / Decimal(pool.reserve0)
    else:
        price = (Decimal(pool.sqrt_price_x96) / Decimal(1 << 96)) ** 2
    return price if token_in == venue.token0 else 1 / price


def _mid_path(path: tuple[Hop, ...]) -> Decimal:
    price = Decimal(1)
    for hop in path:
        price *= _mid(hop.venue, hop.token_in)
    return price


def mid_price(venues: list[Venue], token_in: str, token_out: str) -> Decimal | None:
    """``token_out`` per ``token_in`` at the mid prices of the best-priced path (None: none)."""
    if token_in == token_out:
        return Decimal(1)
    paths = find_paths(venues, token_in, token_out, max_hops=3)
    return max((_mid_path(p) for p in paths), default=None)


def _router_of(ledger: Ledger) -> UniversalRouter | None:
    """The chain's swap router (at its address in the chain registry), if deployed."""
    try:
        address = default_registry().swap_router(ledger.chain_id)
    except NotInRegistry:
        return None
    router = ledger.contract(address.lower())
    return router if isinstance(router, UniversalRouter) else None


def _too_large(amount_in: int, amount_out: int, value_out: Decimal) -> str:
    return (
        f"the pools cannot absorb {amount_in}: at most {amount_out} comes out, under 1 % of the "
        f"{value_out:.0f} the input is worth at mid prices"
    )


def _holding(ledger: Ledger, venue: Venue, token: str) -> int:
    """What the pool of ``venue`` holds of ``token`` (no route can take more out of it)."""
    contract = ledger.state.contracts.get(token)
    return contract.balances.get(venue.name, 0) if isinstance(contract, ERC20) else 0


def _commands(
    route: SplitRoute, token_out: str, native_in: bool, native_out: bool, min_out: int
) -> list[ur.Command]:
    commands: list[ur.Command] = []
    if native_in:
        commands.append(ur.WrapEth(ur.ADDRESS_THIS, ur.CONTRACT_BALANCE))
    segments_of = []
    for split in route.splits:
        segments: list[list[Hop]] = []
        for hop in split.path:
            v2 = isinstance(hop.venue.pool, Pair)
            if segments and isinstance(segments[-1][0].venue.pool, Pair) == v2:
                segments[-1].append(hop)
            else:
                segments.append([hop])
        segments_of.append((split.amount_in, segments))
    direct = len(segments_of) == 1 and len(segments_of[0][1]) == 1 and not native_out
    for amount_in, segments in segments_of:
        for j, segment in enumerate(segments):
            recipient = ur.MSG_SENDER if direct else ur.ADDRESS_THIS
            amount_min = min_out if direct else 0
            amount = amount_in if j == 0 else ur.CONTRACT_BALANCE
            from_user = j == 0 and not native_in
            if isinstance(segment[0].venue.pool, Pair):
                path = (segment[0].token_in, *(hop.token_out for hop in segment))
                commands.append(ur.V2SwapExactIn(recipient, amount, amount_min, path, from_user))
            else:
                v3: list[str | int] = [segment[0].token_in]
                for hop in segment:
                    pool = hop.venue.pool
                    assert not isinstance(pool, Pair)
                    v3 += [pool.fee, hop.token_out]
                commands.append(
                    ur.V3SwapExactIn(recipient, amount, amount_min, tuple(v3), from_user)
                )
    if native_out:
        commands.append(ur.UnwrapWeth(ur.MSG_SENDER, min_out))
    elif not direct:
        commands.append(ur.Sweep(token_out, ur.MSG_SENDER, min_out))
    return commands


def _simulate(
    ledger: Ledger,
    router: str,
    data: str,
    token_in: str,
    token_out: str,
    amount_in: int,
    native_in: bool,
    native_out: bool,
    timestamp: int,
    number: int,
) -> int:
    """Run the transaction from a funded stand-in sender and undo it: what it delivered
    (``RuntimeError`` when it reverts: a route the search built must go through)."""
    state = ledger.state
    run = Execution(state, timestamp=timestamp, number=number)
    sender = SIMULATION_SENDER
    try:
        if native_in:
            run.write(state.balances, sender, state.balances.get(sender, 0) + amount_in)
        else:
            token = state.contracts[token_in]
            assert isinstance(token, ERC20)
            token.mint(run, sender, amount_in)
            run.write(token.allowances, (sender, router), amount_in)
        out_token = state.contracts[token_out]
        assert isinstance(out_token, ERC20)

        def holding() -> int:
            if native_out:
                return state.balances.get(sender, 0)
            return out_token.balances.get(sender, 0)

        before = holding()
        try:
            run.call(sender, router, bytes.fromhex(data[2:]), amount_in if native_in else 0)
        except Revert as exc:
            raise RuntimeError(f"the route's transaction reverted in simulation ({exc})") from exc
        return holding() - before
    finally:
        run.rollback()


def _traded(weth: str, token_in: str, token_out: str) -> tuple[str, str]:
    """The ERC-20s a route between ``token_in`` and ``token_out`` trades (the native coin as
    WETH); ``ArgumentError`` when they are the same."""
    t_in = weth if token_in == NATIVE else token_in
    t_out = weth if token_out == NATIVE else token_out
    if t_in == t_out:
        raise ArgumentError(
            "tokenOut", "a token other than tokenIn (the native coin trades as WETH)", token_out
        )
    return t_in, t_out


def _servable_value(
    ledger: Ledger, venues: list[Venue], t_out: str, amount_in: int, mid: Decimal
) -> Decimal:
    """``amount_in`` at the mid price, in ``t_out``; ``NoSwapRoute`` when the pools that hold
    ``t_out`` hold less than :data:`MIN_VALUE_SHARE` of it (no path can deliver it)."""
    value_out = Decimal(amount_in) * mid
    held = sum(_holding(ledger, v, t_out) for v in venues if t_out in (v.token0, v.token1))
    if held < value_out * MIN_VALUE_SHARE:
        raise NoSwapRoute(_too_large(amount_in, held, value_out))
    return value_out


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
    router = _router_of(ledger)
    if router is None:
        raise NoSwapRoute("this chain has no AMM pools")
    native_in, native_out = token_in == NATIVE, token_out == NATIVE
    t_in, t_out = _traded(router.weth, token_in, token_out)
    venues = venues_of(ledger)
    mid = mid_price(venues, t_in, t_out)
    if mid is None:
        raise NoSwapRoute(f"no path of up to 3 pools connects {token_in} to {token_out}")
    eth_price = mid_price(venues, router.weth, t_out) or Decimal(0)
    latest = ledger.block_number(now)
    number, timestamp = latest + 1, ledger.block_timestamp(latest + 1)
    call_deadline = timestamp + DEADLINE_SECONDS
    value_out = _servable_value(ledger, venues, t_out, amount_in, mid)
    try:
        candidates = route_candidates(
            venues, t_in, t_out, amount_in, max_paths=4, timeout=timeout_s
        )
    except AmmError as exc:
        raise NoSwapRoute(str(exc)) from None
    route, data, gas_used = _best_net_of_gas(
        candidates,
        token_out,
        native_in,
        native_out,
        slippage_bps,
        call_deadline,
        ledger.base_fee,
        eth_price,
    )
    if route.amount_out < value_out * MIN_VALUE_SHARE:
        raise NoSwapRoute(_too_large(amount_in, route.amount_out, value_out))
    delivered = _simulate(
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
    )
    if delivered != route.amount_out:
        raise RuntimeError(f"simulation delivered {delivered}, the route {route.amount_out}")
    min_out = route.amount_out * (10_000 - slippage_bps) // 10_000
    return SwapRoute(
        route=route,
        amount_in=amount_in,
        amount_out=route.amount_out,
        min_amount_out=min_out,
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


def _best_net_of_gas(
    candidates: Sequence[SplitRoute],
    token_out: str,
    native_in: bool,
    native_out: bool,
    slippage_bps: int,
    call_deadline: int,
    base_fee: int,
    eth_price: Decimal,
) -> tuple[SplitRoute, str, int]:
    """The candidate delivering most after its gas (``base_fee`` wei per gas, ``eth_price``
    tokenOut per wei), with its router call data and gas; the first of equals."""
    best: tuple[Decimal, SplitRoute, str, int] | None = None
    for route in candidates:
        min_out = route.amount_out * (10_000 - slippage_bps) // 10_000
        commands = _commands(route, token_out, native_in, native_out, min_out)
        data = ur.encode_execute(commands, deadline=call_deadline)
        gas_used = gas.intrinsic(bytes.fromhex(data[2:])) + router_gas(commands)
        net = route.amount_out - Decimal(gas_used * base_fee) * eth_price
        if best is None or net > best[0]:
            best = (net, route, data, gas_used)
    if best is None:
        raise NoSwapRoute("no candidate route")
    return best[1], best[2], best[3]


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
    latest = ledger.block_number(now)
    key = (
        state_key(ledger),
        ledger.block_timestamp(latest + 1),
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
