"""The ``[credit]`` section of a scenario: the credit hub, its collateral and the product rules.

Every setting has the published default (:data:`toolkit.credit.DEFAULT_RULES`), so a scenario
with USDC on Base and no ``[credit]`` section gets the card-spend product: a USDC credit hub on
Base (at the vendor's hub address), a collateral escrow, the operator contract and five
collateral assets: USDC itself, an ERC-4626 stable vault ``gtUSDCp`` over USDC whose share price
grows at ``apy_bps`` from ``epoch``, and three ERC-7540 vaults whose redemptions are claimable a
day after the request, as the vendor lists them (research §4.4): the yield vault ``yoUSD`` and
the super-vault ``superUSDC`` over USDC, and the BTC vault ``yoBTC`` over cbBTC (Base's
deployment; its USD price along the collateral's ``prices``). A section may set, all optional::

    [credit]
    chain = 8453                  # where the hub lives
    asset = "USDC"                # the credit asset (a scenario token on that chain)
    liquidity = "50000000000000"  # credit-asset units the hub holds for draws
    book_accounts = 1200          # a seeded book of accounts at genesis (default 0)
    revoke_delay_seconds = 604800
    origination_fee_bps = 50
    billing_cycle_seconds = 2592000
    grace_seconds = 604800
    overdue_apr_bps = 1500
    remote_chains = [1]           # chains with a collateral escrow of their own (see below)

    [[credit.collateral]]         # replaces the default collateral list when given
    symbol = "yoBTC"              # display symbol; the rule key is its lower case
    kind = "btc-vault"
    decimals = 8
    ltv_bps = 5500
    maintenance_ltv_bps = 7000
    liquidation_bonus_bps = 800
    prices = [[1760000000, "60000"], [1760086400, "48000"]]  # USD per token, linear in time
    # or, for an ERC-4626 vault over the credit asset:  vault = { apy_bps = 500, epoch = 0 }
    # (with redeem_delay_seconds = 86400 in it: an ERC-7540 vault, asynchronous redemption;
    # with underlying = { symbol = "cbBTC", address = "0x...", decimals = 8 } a vault over
    # that token, priced along ``prices``)

Collateral may also be locked on the other chains of ``remote_chains`` (default: Ethereum, chain
1, when the hub is elsewhere and the scenario has a token there of a collateral's symbol): each
has a collateral escrow at ``credit.escrow``, and its collateral is the scenario's tokens there
whose symbols are collateral symbols (USDC on Ethereum), under the same rule and price path. The
hub counts such a lock once the source chain's ``confirmation_seconds`` have passed
(:mod:`toolkit.world.collateral`).

A second credit hub lends EURe (the chain registry's EURe on the hub's chain, 18 decimals) under
the same rules against the same collateral, valued in euros: a USD price is divided by the
euro's USD price along ``eur_usd`` (a path like the collateral's). Its hub, escrow and operator
are contracts of their own. The table is optional (``eure = false``: no EURe hub)::

    [credit.eure]
    eur_usd = [[0, "1.08"]]        # USD per euro (default 1.08)
    liquidity = "50000000000000000000000000"  # EURe units for draws (default 50 million)

Addresses not given are derived from the scenario name and the role (``keccak``), so they are
stable run to run. A price path is a list of ``[unix seconds, USD]`` points: before the first
point the first price holds, after the last the last, linear in between.

>>> from toolkit.scenario import load_scenario
>>> credit = load_scenario("default").credit
>>> credit.asset, [c.symbol for c in credit.collateral]
('USDC', ['USDC', 'gtUSDCp', 'superUSDC', 'yoUSD', 'yoBTC'])
>>> credit.collateral_by_symbol("yobtc").price_usd(0)
Decimal('60000')
>>> [(c.chain, c.symbol) for c in credit.remote]
[(1, 'USDC')]
>>> [(h.asset, h.asset_decimals) for h in credit.hubs]
[('USDC', 6), ('EURe', 18)]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Final

from eth_utils import keccak, to_checksum_address

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.credit import DEFAULT_RULES, YEAR, CollateralRule, ProductRules
from toolkit.credit.rules import BPS
from toolkit.scenario.address import checksum
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.model import Token

__all__ = [
    "HUB_ADDRESS",
    "CreditCollateral",
    "CreditSettings",
    "VaultYield",
    "derive_address",
    "parse_credit",
]

#: The vendor's USDC credit hub on Base (research: supported assets).
HUB_ADDRESS: Final = "0xb5cf2A13E9aaE413E780379667274626fa9D49f6"
_DAY: Final = 86_400
_KEYS: Final = {
    "chain",
    "asset",
    "liquidity",
    "revoke_delay_seconds",
    "origination_fee_bps",
    "billing_cycle_seconds",
    "grace_seconds",
    "overdue_apr_bps",
    "collateral",
    "book_accounts",
    "remote_chains",
    "eure",
}
#: cbBTC on Base, the default BTC vault's underlying.
CBBTC: Final = "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf"
#: The euro's default USD price (``[credit.eure] eur_usd``).
EUR_USD: Final = Decimal("1.08")
_COLLATERAL_KEYS: Final = {
    "symbol",
    "kind",
    "decimals",
    "ltv_bps",
    "maintenance_ltv_bps",
    "liquidation_bonus_bps",
    "address",
    "prices",
    "vault",
}


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
    simply at ``apy_bps`` a year after it. With ``redeem_delay_seconds`` it is an ERC-7540 vault
    (asynchronous redemption: a request, then a claim once the delay has passed); without, an
    ERC-4626 vault (synchronous)."""

    apy_bps: int
    epoch: int
    redeem_delay_seconds: int | None = None
    underlying: tuple[str, str, int] | None = None

    @property
    def asynchronous(self) -> bool:
        """True for an ERC-7540 vault."""
        return self.redeem_delay_seconds is not None


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
    revoke_delay_seconds: int
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


def _int(value: object, path: str, minimum: int = 0) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if type(value) is not int or value < minimum:
        raise ScenarioError(path, f"must be an integer >= {minimum}")
    return value


def _decimal(value: object, path: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ScenarioError(path, "must be a decimal number (string or number)")
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        raise ScenarioError(path, "must be a decimal number (string or number)") from None
    if not result.is_finite() or result < 0:
        raise ScenarioError(path, "must be a finite decimal number >= 0")
    return result


def _keys(table: Mapping[str, Any], path: str, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            raise ScenarioError(f"{path}.{key}", "unknown key")


def _prices(value: object, path: str) -> tuple[tuple[int, Decimal], ...]:
    if not isinstance(value, list) or not value:
        raise ScenarioError(path, "must be a non-empty array of [unix seconds, USD] points")
    points = []
    for i, point in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(point, list) or len(point) != 2:
            raise ScenarioError(where, "must be a [unix seconds, USD] pair")
        points.append((_int(point[0], f"{where}[0]"), _decimal(point[1], f"{where}[1]")))
    if any(b[0] <= a[0] for a, b in itertools.pairwise(points)):
        raise ScenarioError(path, "times must increase strictly")
    return tuple(points)


def _underlying(value: object, path: str) -> tuple[str, str, int] | None:
    """A vault's own underlying token ``{symbol, address, decimals}`` (None: absent)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ScenarioError(path, "must be a table {symbol, address, decimals}")
    _keys(value, path, {"symbol", "address", "decimals"})
    symbol = value.get("symbol")
    if not isinstance(symbol, str) or not symbol.isascii() or not symbol.isalnum():
        raise ScenarioError(f"{path}.symbol", "must be an ASCII letters-and-digits symbol")
    address = checksum(value.get("address"), f"{path}.address")
    return symbol, address, _int(value.get("decimals", 18), f"{path}.decimals")


def _default_collateral(scenario: str, asset: Token) -> tuple[CreditCollateral, ...]:
    rules = DEFAULT_RULES.collateral
    one = ((0, Decimal(1)),)
    return (
        CreditCollateral("USDC", rules["usdc"], asset.address, asset.decimals, one),
        CreditCollateral(
            "gtUSDCp",
            rules["gtusdcp"],
            derive_address(scenario, "vault:gtusdcp"),
            18,
            vault=VaultYield(apy_bps=500, epoch=1_760_000_000),
        ),
        CreditCollateral(
            "superUSDC",
            rules["superusdc"],
            derive_address(scenario, "vault:superusdc"),
            6,
            vault=VaultYield(apy_bps=550, epoch=1_760_000_000, redeem_delay_seconds=86_400),
        ),
        CreditCollateral(
            "yoUSD",
            rules["yousd"],
            derive_address(scenario, "vault:yousd"),
            6,
            vault=VaultYield(apy_bps=600, epoch=1_760_000_000, redeem_delay_seconds=86_400),
        ),
        CreditCollateral(
            "yoBTC",
            rules["yobtc"],
            derive_address(scenario, "vault:yobtc"),
            8,
            ((0, Decimal(60_000)),),
            VaultYield(
                apy_bps=150,
                epoch=1_760_000_000,
                redeem_delay_seconds=86_400,
                underlying=("cbBTC", CBBTC, 8),
            ),
        ),
    )


def _collateral(value: object, scenario: str, asset: Token) -> tuple[CreditCollateral, ...]:
    if not isinstance(value, list) or not value:
        raise ScenarioError("credit.collateral", "must be a non-empty array of tables")
    out: list[CreditCollateral] = []
    for i, entry in enumerate(value):
        path = f"credit.collateral[{i}]"
        if not isinstance(entry, Mapping):
            raise ScenarioError(path, "must be a table")
        _keys(entry, path, _COLLATERAL_KEYS)
        symbol = entry.get("symbol")
        if not isinstance(symbol, str) or not symbol.isascii() or not symbol.isalnum():
            raise ScenarioError(f"{path}.symbol", "must be an ASCII letters-and-digits symbol")
        key = symbol.lower()
        default = DEFAULT_RULES.collateral.get(key)
        try:
            rule = CollateralRule(
                key,
                str(entry.get("kind", default.kind if default else "")),
                _int(entry.get("ltv_bps", default.ltv_bps if default else None), f"{path}.ltv_bps"),
                _int(
                    entry.get(
                        "maintenance_ltv_bps", default.maintenance_ltv_bps if default else None
                    ),
                    f"{path}.maintenance_ltv_bps",
                ),
                _int(
                    entry.get(
                        "liquidation_bonus_bps", default.liquidation_bonus_bps if default else None
                    ),
                    f"{path}.liquidation_bonus_bps",
                ),
            )
        except ValueError as exc:  # ArgumentError names the field and the rule
            raise ScenarioError(path, str(exc)) from None
        is_asset = key == asset.symbol.lower()
        decimals = (
            asset.decimals if is_asset else _int(entry.get("decimals", 18), f"{path}.decimals")
        )
        if "address" in entry:
            address = checksum(entry["address"], f"{path}.address")
        else:
            role = "vault" if "vault" in entry else "token"
            address = asset.address if is_asset else derive_address(scenario, f"{role}:{key}")
        vault = None
        prices: tuple[tuple[int, Decimal], ...] = ()
        if "vault" in entry:
            v = entry["vault"]
            if not isinstance(v, Mapping):
                raise ScenarioError(f"{path}.vault", "must be a table")
            _keys(v, f"{path}.vault", {"apy_bps", "epoch", "redeem_delay_seconds", "underlying"})
            delay = v.get("redeem_delay_seconds")
            underlying = _underlying(v.get("underlying"), f"{path}.vault.underlying")
            vault = VaultYield(
                _int(v.get("apy_bps", 0), f"{path}.vault.apy_bps"),
                _int(v.get("epoch", 0), f"{path}.vault.epoch"),
                None if delay is None else _int(delay, f"{path}.vault.redeem_delay_seconds"),
                underlying,
            )
            if decimals < (asset.decimals if underlying is None else underlying[2]):
                raise ScenarioError(f"{path}.decimals", "a vault's must be >= its asset's")
            if underlying is not None:
                prices = _prices(entry.get("prices", [[0, "1"]]), f"{path}.prices")
        else:
            prices = _prices(entry.get("prices", [[0, "1"]]), f"{path}.prices")
        out.append(CreditCollateral(symbol, rule, address, decimals, prices, vault))
    keys = [c.key for c in out]
    if len(set(keys)) != len(keys):
        raise ScenarioError("credit.collateral", "symbols must be distinct")
    return tuple(out)


def parse_credit(value: object, *, scenario: str, tokens: Sequence[Token]) -> CreditSettings | None:
    """The credit settings of a scenario from its ``[credit]`` table (None: absent).

    Absent, the defaults apply when the scenario has USDC on Base; otherwise the scenario has
    no credit product (None).

    >>> parse_credit({"chain": 8453, "asset": "EURC"}, scenario="x", tokens=())
    Traceback (most recent call last):
    ...
    toolkit.scenario.errors.ScenarioError: credit.asset: no token EURC on chain 8453
    """
    if value is None:
        if not any(t.chain == 8453 and t.symbol == "USDC" for t in tokens):
            return None
        value = {}
    if not isinstance(value, Mapping):
        raise ScenarioError("credit", "must be a table")
    _keys(value, "credit", _KEYS)
    chain = _int(value.get("chain", 8453), "credit.chain", 1)
    symbol = value.get("asset", "USDC")
    asset = next((t for t in tokens if t.chain == chain and t.symbol == symbol), None)
    if asset is None:
        raise ScenarioError("credit.asset", f"no token {symbol} on chain {chain}")
    d = DEFAULT_RULES
    collateral = (
        _collateral(value["collateral"], scenario, asset)
        if "collateral" in value
        else _default_collateral(scenario, asset)
    )
    try:
        rules = ProductRules(
            collateral={c.key: c.rule for c in collateral},
            origination_fee_bps=_int(
                value.get("origination_fee_bps", d.origination_fee_bps),
                "credit.origination_fee_bps",
            ),
            billing_cycle_seconds=_int(
                value.get("billing_cycle_seconds", d.billing_cycle_seconds),
                "credit.billing_cycle_seconds",
            ),
            grace_seconds=_int(value.get("grace_seconds", d.grace_seconds), "credit.grace_seconds"),
            overdue_apr_bps=_int(
                value.get("overdue_apr_bps", d.overdue_apr_bps), "credit.overdue_apr_bps"
            ),
        )
    except ValueError as exc:
        raise ScenarioError("credit", str(exc)) from None

    def role(name: str) -> str:
        return derive_address(scenario, name)

    remote = _remote(value, chain, collateral, tokens)

    first = CreditSettings(
        chain=chain,
        asset=asset.symbol,
        asset_address=asset.address,
        asset_decimals=asset.decimals,
        hub=HUB_ADDRESS if chain == 8453 and asset.symbol == "USDC" else role("hub"),
        controller=role("hub-controller"),
        escrow=role("escrow"),
        escrow_controller=role("escrow-controller"),
        escrow_helper=role("escrow-helper"),
        operator=role("operator"),
        operator_admin=role("operator-admin"),
        operator_caller=role("operator-caller"),
        revoke_delay_seconds=_int(
            value.get("revoke_delay_seconds", 7 * _DAY), "credit.revoke_delay_seconds"
        ),
        liquidity=_int(value.get("liquidity", 50_000_000 * 10**asset.decimals), "credit.liquidity"),
        rules=rules,
        collateral=collateral,
        book_accounts=_int(value.get("book_accounts", 0), "credit.book_accounts"),
        remote=remote,
    )
    eure = _eure(value.get("eure", True), first, scenario)
    return first if eure is None else replace(first, others=(eure,))


def _eure(value: object, first: CreditSettings, scenario: str) -> CreditSettings | None:
    """The EURe hub beside ``first`` (None: ``eure = false``, or no EURe on its chain)."""
    if value is False:
        return None
    if value is True:
        value = {}
    if not isinstance(value, Mapping):
        raise ScenarioError("credit.eure", "must be a table, or false for no EURe hub")
    _keys(value, "credit.eure", {"eur_usd", "liquidity"})
    try:
        token = default_registry().token(first.chain, "EURe")
    except NotInRegistry:
        if value:
            raise ScenarioError("credit.eure", f"no EURe on chain {first.chain}") from None
        return None
    path = _prices(value.get("eur_usd", [[0, str(EUR_USD)]]), "credit.eure.eur_usd")
    if any(p == 0 for _, p in path):
        raise ScenarioError("credit.eure.eur_usd", "prices must be above 0")

    def role(name: str) -> str:
        return derive_address(scenario, f"eure:{name}")

    return replace(
        first,
        asset=token.symbol,
        asset_address=token.address,
        asset_decimals=token.decimals,
        hub=role("hub"),
        controller=role("hub-controller"),
        escrow=role("escrow"),
        escrow_controller=role("escrow-controller"),
        escrow_helper=role("escrow-helper"),
        operator=role("operator"),
        operator_admin=role("operator-admin"),
        operator_caller=role("operator-caller"),
        liquidity=_int(
            value.get("liquidity", 50_000_000 * 10**token.decimals), "credit.eure.liquidity"
        ),
        book_accounts=0,
        remote=(),
        asset_usd=path,
        vault_asset=(first.asset_address, first.asset_decimals),
    )


def _remote(
    value: Mapping[str, Any],
    hub_chain: int,
    collateral: tuple[CreditCollateral, ...],
    tokens: Sequence[Token],
) -> tuple[CreditCollateral, ...]:
    """The remote escrows' collateral: on each of ``remote_chains``, the scenario's tokens whose
    symbols are collateral symbols (not vaults), with that collateral's rule and prices."""
    by_key = {c.key: c for c in collateral if c.vault is None}

    def matching(chain: int) -> list[CreditCollateral]:
        return [
            replace(by_key[t.symbol.lower()], address=t.address, decimals=t.decimals, chain=chain)
            for t in tokens
            if t.chain == chain and t.symbol.lower() in by_key
        ]

    if "remote_chains" not in value:
        return () if hub_chain == 1 else tuple(matching(1))
    chains = value["remote_chains"]
    if not isinstance(chains, list):
        raise ScenarioError("credit.remote_chains", "must be an array of chain ids")
    out: list[CreditCollateral] = []
    local = {c.address.lower() for c in collateral}
    for i, entry in enumerate(chains):
        path = f"credit.remote_chains[{i}]"
        chain = _int(entry, path, 1)
        if chain == hub_chain or any(c.chain == chain for c in out):
            raise ScenarioError(path, "must be distinct chains other than the hub's")
        found = matching(chain)
        if not found:
            raise ScenarioError(path, f"no token of a collateral symbol on chain {chain}")
        if any(c.address.lower() in local for c in found):
            raise ScenarioError(path, "a remote collateral's address is also a hub-chain one")
        out += found
    return tuple(out)
