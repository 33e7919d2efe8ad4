"""The credit product's settings as a scenario holds them: hubs, collateral, vaults, price paths.

Built from a scenario's ``[credit]`` table by :func:`toolkit.scenario.credit.parse_credit`
(where the table's keys and defaults are described); frozen, so chain snapshots share them.

>>> from toolkit.scenario import load_scenario
>>> [(h.asset, h.asset_decimals) for h in load_scenario("default").credit.hubs]
[('USDC', 6), ('EURe', 18)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from eth_utils import keccak, to_checksum_address

from toolkit.credit import YEAR, CollateralRule, ProductRules
from toolkit.credit.rules import BPS

__all__ = [
    "CBBTC",
    "EUR_USD",
    "HUB_ADDRESS",
    "CreditCollateral",
    "CreditSettings",
    "VaultYield",
    "along",
    "derive_address",
]

#: The vendor's USDC credit hub on Base (research: supported assets).
HUB_ADDRESS: Final = "0xb5cf2A13E9aaE413E780379667274626fa9D49f6"
#: cbBTC on Base, the default BTC vault's underlying.
CBBTC: Final = "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf"
#: The euro's default USD price (``[credit.eure] eur_usd``).
EUR_USD: Final = Decimal("1.08")


def along(points: Sequence[tuple[int, Decimal]], now: int) -> Decimal:
    """The value of a ``[unix seconds, value]`` path at ``now``: the first value before the
    first point, the last after the last, linear in between.

    >>> along(((0, Decimal(1)), (10, Decimal(2))), 5)
    Decimal('1.5')
    """
    if now <= points[0][0]:
        return points[0][1]
    for (t0, p0), (t1, p1) in itertools.pairwise(points):
        if now <= t1:
            return p0 + (p1 - p0) * Decimal(now - t0) / Decimal(t1 - t0)
    return points[-1][1]


def derive_address(scenario: str, role: str) -> str:
    """A stable checksummed address for ``role`` in scenario ``scenario``.

    >>> derive_address("default", "escrow") == derive_address("default", "escrow")
    True
    """
    return to_checksum_address(keccak(text=f"toolkit credit:{scenario}:{role}")[-20:])


@dataclass(frozen=True, slots=True)
class VaultYield:
    """A vault over the credit asset (or over ``underlying``: symbol, address, decimals): its
    share price is ``10**-(decimals - asset decimals)`` assets per share at ``epoch``, growing
    simply at ``apy_bps`` a year after it. With ``redeem_delay_s`` it is an ERC-7540 vault
    (asynchronous redemption: a request, then a claim once the delay has passed); without, an
    ERC-4626 vault (synchronous)."""

    apy_bps: int
    epoch: int
    redeem_delay_s: int | None = None
    underlying: tuple[str, str, int] | None = None

    @property
    def asynchronous(self) -> bool:
        """True for an ERC-7540 vault."""
        return self.redeem_delay_s is not None


@dataclass(frozen=True, slots=True)
class CreditCollateral:
    """One collateral asset, on the hub's chain (``chain`` None) or on a remote escrow's.

    ``prices`` is the USD price path (of the underlying for a vault over a token of its own;
    ignored for a vault over the credit asset, whose price is its share price in the credit
    asset, taken at one USD).
    """

    symbol: str
    rule: CollateralRule
    address: str
    decimals: int
    prices: tuple[tuple[int, Decimal], ...] = ()
    vault: VaultYield | None = None
    #: The chain it is locked on when that is not the hub's (a remote escrow's collateral).
    chain: int | None = None

    @property
    def key(self) -> str:
        """The rule key: the symbol in lower case."""
        return self.symbol.lower()

    def price_usd(self, now: int) -> Decimal:
        """The USD price of one whole token at ``now`` along the path (not for vaults).

        >>> from toolkit.credit import DEFAULT_RULES
        >>> c = CreditCollateral("X", DEFAULT_RULES.rule("yobtc"), "0x" + "11" * 20, 8,
        ...                      ((0, Decimal(100)), (10, Decimal(50))))
        >>> c.price_usd(-5), c.price_usd(4), c.price_usd(99)
        (Decimal('100'), Decimal('80'), Decimal('50'))
        """
        return along(self.prices, now)

    def share_price(self, now: int, asset_decimals: int) -> Fraction:
        """A vault's assets (smallest units) per share (smallest unit) at ``now``."""
        assert self.vault is not None
        base = Fraction(10**asset_decimals, 10**self.decimals)
        elapsed = max(0, now - self.vault.epoch)
        return base * (1 + Fraction(self.vault.apy_bps * elapsed, BPS * YEAR))

    def unit_price(self, now: int, asset_decimals: int) -> Fraction:
        """Credit-asset smallest units per smallest unit of this collateral at ``now`` (the
        credit asset is taken at one USD)."""
        if self.vault is not None and self.vault.underlying is not None:
            decimals = self.vault.underlying[2]
            usd = Fraction(self.price_usd(now)) * self.share_price(now, decimals)
            return usd * Fraction(10**asset_decimals, 10**decimals)
        if self.vault is not None:
            return self.share_price(now, asset_decimals)
        usd = Fraction(self.price_usd(now))
        return usd * Fraction(10**asset_decimals, 10**self.decimals)


@dataclass(frozen=True)
class CreditSettings:
    """The credit product of a scenario: where its contracts are and what its rules are."""

    chain: int
    asset: str
    asset_address: str
    asset_decimals: int
    hub: str
    controller: str
    escrow: str
    escrow_controller: str
    escrow_helper: str
    operator: str
    operator_admin: str
    operator_caller: str
    revoke_delay_s: int
    liquidity: int
    rules: ProductRules
    collateral: tuple[CreditCollateral, ...]
    book_accounts: int = 0
    #: Collateral locked on other chains' escrows (each with its ``chain``).
    remote: tuple[CreditCollateral, ...] = ()
    #: The credit asset's USD price path (one USD for USDC; the euro's for EURe).
    asset_usd: tuple[tuple[int, Decimal], ...] = ((0, Decimal(1)),)
    #: The vaults' underlying (address, decimals) when it is not the credit asset (EURe hub).
    vault_asset: tuple[str, int] | None = None
    #: The other credit assets' hubs (on the first hub's settings only; see :attr:`hubs`).
    others: tuple[CreditSettings, ...] = ()
    _by_address: dict[str, CreditCollateral] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        index = {c.address.lower(): c for c in (*self.collateral, *self.remote)}
        object.__setattr__(self, "_by_address", index)

    @property
    def hubs(self) -> tuple[CreditSettings, ...]:
        """Every credit hub of the scenario: this one first, then the other credit assets'."""
        return (self, *self.others)

    def hub_for(self, asset: str) -> CreditSettings | None:
        """The hub lending ``asset`` (a symbol, any case), or None."""
        return next((h for h in self.hubs if h.asset.lower() == asset.lower()), None)

    @property
    def vault_asset_address(self) -> str:
        """The address of what the earn vaults hold (the first hub's credit asset)."""
        return self.asset_address if self.vault_asset is None else self.vault_asset[0]

    def underlying_of(self, c: CreditCollateral) -> tuple[str, int]:
        """A vault's underlying (address, decimals): its own token or the vaults' asset."""
        assert c.vault is not None
        if c.vault.underlying is not None:
            return c.vault.underlying[1], c.vault.underlying[2]
        decimals = self.asset_decimals if self.vault_asset is None else self.vault_asset[1]
        return self.vault_asset_address, decimals

    def usd_per_unit(self, c: CreditCollateral, now: int) -> Fraction:
        """USD per smallest unit of collateral ``c`` at ``now`` (a vault's underlying is taken
        at one USD)."""
        if c.vault is not None and c.vault.underlying is not None:
            decimals = c.vault.underlying[2]
            return Fraction(c.price_usd(now)) * c.share_price(now, decimals) / 10**decimals
        if c.vault is not None:
            decimals = self.asset_decimals if self.vault_asset is None else self.vault_asset[1]
            return c.share_price(now, decimals) / 10**decimals
        return Fraction(c.price_usd(now)) / 10**c.decimals

    def unit_price(self, c: CreditCollateral, now: int) -> Fraction:
        """Credit-asset smallest units per smallest unit of ``c`` at ``now``: its USD value
        over the credit asset's USD price.

        >>> from toolkit.scenario import load_scenario
        >>> usdc, eure = load_scenario("default").credit.hubs
        >>> c = usdc.collateral_by_symbol("usdc")
        >>> usdc.unit_price(c, 0), eure.unit_price(c, 0) * Fraction("1.08") == 10**12
        (Fraction(1, 1), True)
        """
        if self.vault_asset is None and self.asset_usd == ((0, Decimal(1)),):
            return c.unit_price(now, self.asset_decimals)  # exact, no detour through USD
        usd = Fraction(along(self.asset_usd, now))
        return self.usd_per_unit(c, now) * 10**self.asset_decimals / usd

    @property
    def remote_chains(self) -> tuple[int, ...]:
        """The chains other than the hub's with a collateral escrow, ascending."""
        return tuple(sorted({c.chain for c in self.remote if c.chain is not None}))

    def chain_of(self, c: CreditCollateral) -> int:
        """The chain collateral ``c`` is locked on."""
        return self.chain if c.chain is None else c.chain

    def collateral_on(self, chain: int) -> tuple[CreditCollateral, ...]:
        """The collateral lockable on ``chain`` (none on a chain without an escrow)."""
        if chain == self.chain:
            return self.collateral
        return tuple(c for c in self.remote if c.chain == chain)

    def __deepcopy__(self, memo: dict[int, Any]) -> CreditSettings:
        return self  # immutable: chain snapshots share it

    def collateral_at(self, address: str, chain: int | None = None) -> CreditCollateral | None:
        """The collateral at ``address`` (any case), or None; with ``chain``, only collateral
        locked on that chain."""
        found = self._by_address.get(address.lower())
        if found is None or (chain is not None and self.chain_of(found) != chain):
            return None
        return found

    def collateral_by_symbol(self, symbol: str) -> CreditCollateral | None:
        """The collateral named ``symbol`` (any case), or None."""
        for c in self.collateral:
            if c.key == symbol.lower():
                return c
        return None
