"""What a sweep asks for: onboarded routes, and grid points of route × amount × quote type.

The default grid is discovered from the target itself: the tokens endpoint of each chain gives
the token addresses, the fees endpoint says which (source, destination, token) routes are
onboarded (404 when not) and their fee tiers, and each tier contributes one amount a little
above its lower bound, so a sweep spans every tier of every route, in both quote types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, get_args

from toolkit.arguments import whole
from toolkit.client import BadRequest, NotFound, ServiceClient
from toolkit.errors import InputError
from toolkit.resources import FeeTier
from toolkit.resources.types import QuoteType

__all__ = [
    "DEFAULT_CHAINS",
    "DEFAULT_SYMBOLS",
    "QUOTE_TYPES",
    "DiscoveredRoute",
    "GridPoint",
    "discover_routes",
    "grid_for",
    "tier_amounts",
]

DEFAULT_CHAINS: tuple[int, ...] = (1, 10, 8453, 42161)
DEFAULT_SYMBOLS: tuple[str, ...] = ("USDC", "WETH")
QUOTE_TYPES: tuple[str, ...] = get_args(QuoteType)


@dataclass(frozen=True)
class DiscoveredRoute:
    """An onboarded route: a token symbol from one chain to another, with its fee tiers."""

    src_chain: int
    dst_chain: int
    token: str
    src_token: str
    dst_token: str
    tiers: tuple[FeeTier, ...]


@dataclass(frozen=True)
class GridPoint:
    """One request of a sweep: a route, an amount (smallest units) and a quote type.

    >>> p = GridPoint(8453, 42161, "USDC", "0x" + "aa" * 20, "0x" + "bb" * 20, 10**6, "ExactInput")
    >>> GridPoint.from_json(p.to_json()) == p
    True
    """

    src_chain: int
    dst_chain: int
    token: str
    src_token: str
    dst_token: str
    amount: int
    quote_type: str

    def __post_init__(self) -> None:
        for name in ("src_chain", "dst_chain", "amount"):
            whole(getattr(self, name), f"grid.{name}", minimum=1)
        for name in ("token", "src_token", "dst_token"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                rule = "must be a non-empty string"
                raise InputError(f"grid.{name}: {rule}", field=f"grid.{name}", rule=rule)
        if self.quote_type not in QUOTE_TYPES:
            rule = f"must be one of {', '.join(QUOTE_TYPES)}"
            raise InputError(f"grid.quote_type: {rule}", field="grid.quote_type", rule=rule)

    def to_json(self) -> dict[str, Any]:
        """JSON form for the run's parameters (the amount as a string: it may exceed 2**53)."""
        data = asdict(self)
        data["amount"] = str(self.amount)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GridPoint:
        """Back from :meth:`to_json`; a malformed entry names the field."""
        if not isinstance(data, Mapping):
            raise ValueError("grid: every point must be an object")
        try:
            amount = int(str(data["amount"]))
            return cls(
                src_chain=data["src_chain"],
                dst_chain=data["dst_chain"],
                token=data["token"],
                src_token=data["src_token"],
                dst_token=data["dst_token"],
                amount=amount,
                quote_type=data["quote_type"],
            )
        except KeyError as exc:
            raise ValueError(f"grid.{exc.args[0]}: is required") from None
        except InputError:
            raise  # a field of the point breaks its rule, and the error names it
        except (TypeError, ValueError):
            raise ValueError("grid.amount: must be an integer") from None


def tier_amounts(tiers: Sequence[FeeTier], *, per_tier: int = 3) -> list[int]:
    """``per_tier`` amounts inside each fee tier, spaced evenly on a log scale.

    Fees fall with size within a tier (the fill cost is fixed), so a fee curve needs several
    sizes per tier, not one. A tier starting at 0 is read from a thousandth of its upper bound.

    >>> tiers = [FeeTier(fee_bps=5, min_amount=10**7, max_amount=10**11),
    ...          FeeTier(fee_bps=3, min_amount=10**11, max_amount=10**12)]
    >>> tier_amounts(tiers, per_tier=2)
    [100000000, 10000000000, 178000000000, 562000000000]
    """
    whole(per_tier, "per_tier", minimum=1)
    amounts: list[int] = []
    for tier in tiers:
        high = max(tier.max_amount, tier.min_amount, 1)
        low = tier.min_amount if tier.min_amount > 0 else max(1, high // 1000)
        for k in range(per_tier):
            # Midpoints of per_tier equal log-width slices: never on a tier boundary.
            exact = low * (high / low) ** ((k + 0.5) / per_tier) if high > low else float(low)
            amount = _three_significant_digits(exact)
            if amount not in amounts:
                amounts.append(amount)
    return amounts


def _three_significant_digits(value: float) -> int:
    """Readable request sizes (178000000000, not 177827941004); exact for small amounts."""
    scale = 10 ** max(0, len(str(int(value))) - 3)
    return max(1, round(value / scale) * scale)


def grid_for(
    routes: Iterable[DiscoveredRoute],
    *,
    amounts: Mapping[str, Sequence[int]] | None = None,
    quote_types: Sequence[str] = QUOTE_TYPES,
) -> list[GridPoint]:
    """Grid points of ``routes`` × amounts × ``quote_types``.

    ``amounts`` maps a token symbol to the amounts to request; by default each route uses
    :func:`tier_amounts` of its own tiers.

    >>> r = DiscoveredRoute(1, 8453, "USDC", "0x" + "aa" * 20, "0x" + "bb" * 20,
    ...           (FeeTier(fee_bps=5, min_amount=0, max_amount=10**9),))
    >>> [(p.amount, p.quote_type) for p in grid_for([r])][:2]
    [(3160000, 'ExactInput'), (3160000, 'ExactOutput')]
    """
    points: list[GridPoint] = []
    for route in routes:
        chosen = (
            list(amounts[route.token])
            if amounts is not None and route.token in amounts
            else tier_amounts(route.tiers)
        )
        for amount in chosen:
            for quote_type in quote_types:
                points.append(
                    GridPoint(
                        route.src_chain,
                        route.dst_chain,
                        route.token,
                        route.src_token,
                        route.dst_token,
                        amount,
                        quote_type,
                    )
                )
    return points


def discover_routes(
    client: ServiceClient,
    *,
    chains: Sequence[int] = DEFAULT_CHAINS,
    symbols: Sequence[str] = DEFAULT_SYMBOLS,
) -> list[DiscoveredRoute]:
    """The onboarded routes among ``chains`` and ``symbols``, asked of the target.

    A chain whose tokens endpoint answers 400/404 is skipped (not served); a route whose fees
    endpoint answers 404 or 400 is not onboarded. Other errors (401, 5xx) propagate.

    >>> routes = discover_routes(client)
    >>> sorted({r.token for r in routes})
    ['USDC', 'WETH']
    """
    addresses: dict[tuple[int, str], str] = {}
    for chain in chains:
        try:
            tokens = client.tokens(chain)
        except (NotFound, BadRequest):
            continue
        for symbol in symbols:
            if symbol in tokens:
                addresses[(chain, symbol)] = tokens[symbol].address
    routes: list[DiscoveredRoute] = []
    for symbol in symbols:
        for src in chains:
            for dst in chains:
                if (src, symbol) not in addresses or (dst, symbol) not in addresses:
                    continue
                try:
                    tiers = client.fees(src, dst, symbol, symbol)
                except (NotFound, BadRequest):
                    continue
                routes.append(
                    DiscoveredRoute(
                        src,
                        dst,
                        symbol,
                        addresses[(src, symbol)],
                        addresses[(dst, symbol)],
                        tuple(tiers),
                    )
                )
    return routes
