"""The parts of a scenario as frozen dataclasses: chains, tokens, pools, routes, pricing, windows.

Every amount is an exact integer in the token's smallest unit; every duration is whole seconds.
Addresses are stored EIP-55 checksummed. The parts check nothing themselves: the whole
:class:`~toolkit.scenario.scenario.Scenario` validates them together (:mod:`.validate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from toolkit.scenario.secret import Secret

__all__ = [
    "BASE_FEES",
    "BLOCK_TIMES",
    "DEFAULT_BASE_FEE",
    "DEFAULT_BLOCK_TIME",
    "POOL_TYPES",
    "Auth",
    "Chain",
    "FeeTier",
    "Pool",
    "Pricing",
    "Route",
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

#: Block time in seconds by chain id: Ethereum 12 s, Base and Optimism 2 s, Arbitrum 0.25 s.
BLOCK_TIMES: dict[int, float] = {1: 12.0, 10: 2.0, 8453: 2.0, 42161: 0.25}
#: The block time of a chain id missing from :data:`BLOCK_TIMES`.
DEFAULT_BLOCK_TIME = 12.0
#: Base fee in wei per gas by chain id (orders of magnitude seen on mainnet).
BASE_FEES: dict[int, int] = {1: 5_000_000_000, 10: 1_000_000, 8453: 10_000_000, 42161: 10_000_000}
#: The base fee of a chain id missing from :data:`BASE_FEES` (1 gwei).
DEFAULT_BASE_FEE = 1_000_000_000


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

    ``confirmation_s`` is how long the filler waits for a deposit on this chain as the
    source; ``fill_s`` how long a fill takes with this chain as the destination.
    ``block_time_s`` (seconds) and ``base_fee`` (wei per gas) drive the simulated chain behind
    JSON-RPC (:mod:`toolkit.world.evm`); the parser fills them per chain id when the TOML
    leaves them out (:data:`BLOCK_TIMES`, :data:`BASE_FEES`).
    """

    id: int
    name: str
    confirmation_s: int
    fill_s: int
    fill_cost_usd: Decimal
    escrow: str
    output_settler: str
    oracle: str
    block_time_s: float = 12.0
    base_fee: int = 1_000_000_000


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

    quote_s: int = 15
    order_s: int = 60
    borrow_quote_s: int = 60
    exclusive_s: int = 60
    open_s: int = 300
    same_chain_expiry_buffer_s: int = 780
    cross_chain_expiry_buffer_s: int = 43_200
    settlement_delay_s: int = 300


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
