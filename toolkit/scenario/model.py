"""Frozen dataclasses describing a scenario: chains, tokens, pools, routes, pricing, windows.

Every amount is an exact integer in the token's smallest unit; every duration is whole seconds.
Addresses are stored EIP-55 checksummed. A :class:`Scenario` validates itself on construction
(also after ``dataclasses.replace``), and errors name the TOML key path of the offending value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from toolkit.scenario.secret import Secret

if TYPE_CHECKING:
    from toolkit.scenario.validate import ScenarioIndex

__all__ = [
    "POOL_TYPES",
    "Auth",
    "Chain",
    "FeeTier",
    "Pool",
    "Pricing",
    "Route",
    "Scenario",
    "Token",
    "Windows",
]

#: The six pool types of the liquidity API (``GET /liquidity/pools/{poolType}``).
POOL_TYPES: tuple[str, ...] = (
    "aave",
    "aave_v2",
    "usdc",
    "usdc_v2",
    "aave_long_term",
    "aave_long_term_v2",
)


@dataclass(frozen=True, slots=True)
class FeeTier:
    """A fee for amounts in ``[min_amount, max_amount)`` (the last tier also takes ``max_amount``).

    >>> FeeTier(fee_bps=5, min_amount=0, max_amount=100_000_000_000).fee_bps
    5
    """

    fee_bps: int
    min_amount: int
    max_amount: int


@dataclass(frozen=True, slots=True)
class Chain:
    """A chain: timings for ``eta``, the fill cost in USD and the escrow-side contracts.

    ``confirmation_seconds`` is how long the filler waits for a deposit on this chain as the
    source; ``fill_seconds`` how long a fill takes with this chain as the destination.
    """

    id: int
    name: str
    confirmation_seconds: int
    fill_seconds: int
    fill_cost_usd: Decimal
    escrow: str
    output_settler: str
    oracle: str


@dataclass(frozen=True, slots=True)
class Token:
    """A token on one chain; ``fill_cost`` (smallest units) overrides the chain's USD fill cost."""

    chain: int
    symbol: str
    address: str
    decimals: int
    fill_cost: int | None = None


@dataclass(frozen=True, slots=True)
class Pool:
    """A liquidity pool for one token on one chain.

    >>> Pool(8453, "USDC", "usdc", "0xB58Bb9643884abbbad64FA7eBc874c5481E5c032", 10).id
    '8453:USDC:usdc'
    """

    chain: int
    token: str
    type: str
    address: str
    balance: int

    @property
    def id(self) -> str:
        """Stable pool identifier ``chain:SYMBOL:type`` used by the engine and its events."""
        return f"{self.chain}:{self.token}:{self.type}"


@dataclass(frozen=True, slots=True)
class Route:
    """An onboarded route: the same token from ``src`` to ``dst``, priced by ``fee_tiers``."""

    src: int
    dst: int
    token: str
    fee_tiers: tuple[FeeTier, ...]


@dataclass(frozen=True, slots=True)
class Pricing:
    """Utilization premium and token prices.

    The premium grows linearly from 0 at ``utilization_kink_bps`` to ``premium_max_bps`` at full
    utilization. ``prices_usd`` converts a chain's USD fill cost into token units.
    """

    utilization_kink_bps: int
    premium_max_bps: int
    prices_usd: tuple[tuple[str, Decimal], ...] = ()

    def price_usd(self, symbol: str) -> Decimal | None:
        """USD price of one whole ``symbol`` token, or None when the scenario has none."""
        for name, price in self.prices_usd:
            if name == symbol:
                return price
        return None


@dataclass(frozen=True, slots=True)
class Windows:
    """Reservation and order windows, in seconds (defaults follow the spec)."""

    quote_seconds: int = 15
    order_seconds: int = 60
    borrow_quote_seconds: int = 60
    exclusive_seconds: int = 60
    open_seconds: int = 300
    same_chain_expiry_buffer_seconds: int = 780
    cross_chain_expiry_buffer_seconds: int = 43_200
    settlement_delay_seconds: int = 300


@dataclass(frozen=True, slots=True)
class Auth:
    """Accepted API keys and the borrow-authorization signing key; both print as ``***``."""

    api_keys: tuple[Secret, ...]
    signer_key: Secret

    def accepts(self, api_key: str) -> bool:
        """True when ``api_key`` is one of the accepted keys (constant-time per key)."""
        accepted = False
        for key in self.api_keys:
            accepted |= key.matches(api_key)
        return accepted


@dataclass(frozen=True)
class Scenario:
    """A whole scenario. Build it with :func:`toolkit.scenario.load_scenario` or directly.

    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default", env={})
    >>> s.token(8453, "USDC").decimals
    6
    """

    name: str
    description: str
    filler: str
    chains: tuple[Chain, ...]
    tokens: tuple[Token, ...]
    pools: tuple[Pool, ...]
    routes: tuple[Route, ...]
    pricing: Pricing
    auth: Auth
    windows: Windows = field(default_factory=Windows)

    def __post_init__(self) -> None:
        from toolkit.scenario.validate import index_scenario

        object.__setattr__(self, "_index", index_scenario(self))

    def _idx(self) -> ScenarioIndex:
        index: ScenarioIndex = self.__dict__["_index"]
        return index

    def chain(self, chain_id: int) -> Chain:
        """The chain with id ``chain_id``; KeyError names it when absent.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).chain(10).name
        'optimism'
        """
        try:
            return self._idx().chains[chain_id]
        except KeyError:
            raise KeyError(f"chain: {chain_id} is not in scenario {self.name!r}") from None

    def token(self, chain_id: int, symbol: str) -> Token:
        """The token ``symbol`` on ``chain_id``; KeyError names it when absent.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).token(1, "WETH").decimals
        18
        """
        try:
            return self._idx().tokens[(chain_id, symbol)]
        except KeyError:
            raise KeyError(f"token: no {symbol} on chain {chain_id}") from None

    def token_by_address(self, chain_id: int, address: str) -> Token | None:
        """The token at ``address`` on ``chain_id`` (case-insensitive), or None.

        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("default", env={})
        >>> s.token_by_address(10, "0x4200000000000000000000000000000000000006").symbol
        'WETH'
        """
        if not isinstance(address, str):
            return None
        return self._idx().by_address.get((chain_id, address.lower()))

    def pools_for(self, chain_id: int, symbol: str) -> tuple[Pool, ...]:
        """Pools holding ``symbol`` on ``chain_id`` (possibly empty).

        >>> from toolkit.scenario import load_scenario
        >>> [p.type for p in load_scenario("default", env={}).pools_for(8453, "USDC")]
        ['usdc', 'aave']
        """
        return self._idx().pools.get((chain_id, symbol), ())

    def route(self, src: int, dst: int, symbol: str) -> Route | None:
        """The onboarded route, or None.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).route(1, 1, "USDC") is None
        True
        """
        return self._idx().routes.get((src, dst, symbol))

    def fill_cost(self, chain_id: int, symbol: str) -> int:
        """Cost of one fill on ``chain_id`` in ``symbol`` smallest units (rounded up).

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).fill_cost(1, "USDC")  # 1.50 USD
        1500000
        """
        return self._idx().fill_costs[(chain_id, symbol)]

    def eta(self, src: int, dst: int) -> int:
        """Estimated fill duration in seconds: source confirmations plus the destination fill.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).eta(1, 8453)
        38
        """
        return self.chain(src).confirmation_seconds + self.chain(dst).fill_seconds

    def expiry_buffer(self, src: int, dst: int) -> int:
        """Seconds between fillDeadline and expires for an order from ``src`` to ``dst``.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default", env={}).expiry_buffer(1, 8453)
        43200
        """
        w = self.windows
        if src == dst:
            return w.same_chain_expiry_buffer_seconds
        return w.cross_chain_expiry_buffer_seconds
