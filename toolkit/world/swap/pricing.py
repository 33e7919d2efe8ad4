"""The pools of a simulated chain as routing venues, and their mid prices: what a swap route is
searched over and measured against (:func:`toolkit.world.swap.find_route`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Final

from toolkit.amm import AmmError
from toolkit.amm.routing import Hop, Venue, find_paths
from toolkit.amm.v2 import Pair
from toolkit.amm.v3.tick_math import MAX_SQRT_RATIO, MIN_SQRT_RATIO, get_sqrt_ratio_at_tick
from toolkit.arguments import ArgumentError
from toolkit.errors import CapacityError
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.tokens import ERC20

__all__ = [
    "MIN_VALUE_SHARE",
    "NATIVE",
    "FullVenue",
    "NoSwapRoute",
    "mid_price",
    "servable_value",
    "too_large",
    "traded",
    "venues_of",
]

#: The zero address: the native coin, as the swap API names it.
NATIVE: Final = "0x" + "00" * 20
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


def too_large(amount_in: int, amount_out: int, value_out: Decimal) -> str:
    return (
        f"the pools cannot absorb {amount_in}: at most {amount_out} comes out, under 1 % of the "
        f"{value_out:.0f} the input is worth at mid prices"
    )


def _holding(ledger: Ledger, venue: Venue, token: str) -> int:
    """What the pool of ``venue`` holds of ``token`` (no route can take more out of it)."""
    contract = ledger.state.contracts.get(token)
    return contract.balances.get(venue.name, 0) if isinstance(contract, ERC20) else 0


def traded(weth: str, token_in: str, token_out: str) -> tuple[str, str]:
    """The ERC-20s a route between ``token_in`` and ``token_out`` trades (the native coin as
    WETH); ``ArgumentError`` when they are the same."""
    t_in = weth if token_in == NATIVE else token_in
    t_out = weth if token_out == NATIVE else token_out
    if t_in == t_out:
        raise ArgumentError(
            "tokenOut", "a token other than tokenIn (the native coin trades as WETH)", token_out
        )
    return t_in, t_out


def servable_value(
    ledger: Ledger, venues: list[Venue], t_out: str, amount_in: int, mid: Decimal
) -> Decimal:
    """``amount_in`` at the mid price, in ``t_out``; ``NoSwapRoute`` when the pools that hold
    ``t_out`` hold less than :data:`MIN_VALUE_SHARE` of it (no path can deliver it)."""
    value_out = Decimal(amount_in) * mid
    held = sum(_holding(ledger, v, t_out) for v in venues if t_out in (v.token0, v.token1))
    if held < value_out * MIN_VALUE_SHARE:
        raise NoSwapRoute(too_large(amount_in, held, value_out))
    return value_out
