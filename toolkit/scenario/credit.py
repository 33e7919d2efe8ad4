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
    revoke_delay_s = 604800
    origination_fee_bps = 50
    billing_cycle_s = 2592000
    grace_s = 604800
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
    # (with redeem_delay_s = 86400 in it: an ERC-7540 vault, asynchronous redemption;
    # with underlying = { symbol = "cbBTC", address = "0x...", decimals = 8 } a vault over
    # that token, priced along ``prices``)

Collateral may also be locked on the other chains of ``remote_chains`` (default: Ethereum, chain
1, when the hub is elsewhere and the scenario has a token there of a collateral's symbol): each
has a collateral escrow at ``credit.escrow``, and its collateral is the scenario's tokens there
whose symbols are collateral symbols (USDC on Ethereum), under the same rule and price path. The
hub counts such a lock once the source chain's ``confirmation_s`` have passed
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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Final, TypedDict

from pydantic import BeforeValidator, TypeAdapter

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.credit import DEFAULT_RULES, ProductRules
from toolkit.resources.declared import ConfigTable
from toolkit.scenario.collateral import (
    Collaterals,
    PricePath,
    build_collateral,
    default_collateral,
)
from toolkit.scenario.credit_settings import (
    CBBTC,
    EUR_USD,
    HUB_ADDRESS,
    CreditCollateral,
    CreditSettings,
    VaultYield,
    along,
    derive_address,
)
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import (
    Amount,
    PositiveAmount,
    check,
)
from toolkit.scenario.model import Token

__all__ = [
    "CBBTC",
    "EUR_USD",
    "HUB_ADDRESS",
    "CreditCollateral",
    "CreditDoc",
    "CreditSettings",
    "VaultYield",
    "along",
    "derive_address",
    "parse_credit",
]

_DAY: Final = 86_400


class EureDoc(ConfigTable):
    """``[credit.eure]``: the EURe hub's euro price path and liquidity."""

    eur_usd: PricePath | None = None
    liquidity: Amount | None = None


def _eure_flag(value: object) -> object:
    if value is True:
        return {}
    if value is False:
        return None
    if not isinstance(value, Mapping | EureDoc):
        raise ValueError("must be a table, or false for no EURe hub")
    return value


class CreditDoc(ConfigTable):
    """``[credit]``: every key optional, defaulting to the published product."""

    chain: PositiveAmount = 8453
    asset: str = "USDC"
    liquidity: Amount | None = None
    book_accounts: Amount = 0
    revoke_delay_s: Amount = 7 * _DAY
    origination_fee_bps: Amount = DEFAULT_RULES.origination_fee_bps
    billing_cycle_s: Amount = DEFAULT_RULES.billing_cycle_s
    grace_s: Amount = DEFAULT_RULES.grace_s
    overdue_apr_bps: Amount = DEFAULT_RULES.overdue_apr_bps
    collateral: Collaterals | None = None
    remote_chains: tuple[PositiveAmount, ...] | None = None
    eure: Annotated[EureDoc | None, BeforeValidator(_eure_flag)] = EureDoc()


_CREDIT: Final = TypeAdapter(CreditDoc)


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
    doc = value if isinstance(value, CreditDoc) else check(_CREDIT, value, "credit")
    chain = doc.chain
    asset = next((t for t in tokens if t.chain == chain and t.symbol == doc.asset), None)
    if asset is None:
        raise ScenarioError("credit.asset", f"no token {doc.asset} on chain {chain}")
    collateral = (
        default_collateral(scenario, asset)
        if doc.collateral is None
        else build_collateral(doc.collateral, scenario, asset)
    )
    try:
        rules = ProductRules(
            collateral={c.key: c.rule for c in collateral},
            origination_fee_bps=doc.origination_fee_bps,
            billing_cycle_s=doc.billing_cycle_s,
            grace_s=doc.grace_s,
            overdue_apr_bps=doc.overdue_apr_bps,
        )
    except ValueError as exc:
        raise ScenarioError("credit", str(exc)) from None
    roles = _roles(scenario, "")
    if chain == 8453 and asset.symbol == "USDC":
        roles["hub"] = HUB_ADDRESS
    first = CreditSettings(
        chain=chain,
        asset=asset.symbol,
        asset_address=asset.address,
        asset_decimals=asset.decimals,
        **roles,
        revoke_delay_s=doc.revoke_delay_s,
        liquidity=50_000_000 * 10**asset.decimals if doc.liquidity is None else doc.liquidity,
        rules=rules,
        collateral=collateral,
        book_accounts=doc.book_accounts,
        remote=_remote(doc.remote_chains, chain, collateral, tokens),
    )
    eure = None if doc.eure is None else _eure(doc.eure, first, scenario)
    return first if eure is None else replace(first, others=(eure,))


class _Roles(TypedDict):
    hub: str
    controller: str
    escrow: str
    escrow_controller: str
    escrow_helper: str
    operator: str
    operator_admin: str
    operator_caller: str


def _roles(scenario: str, prefix: str) -> _Roles:
    """A hub's contract addresses, derived from the scenario name and the role."""

    def role(name: str) -> str:
        return derive_address(scenario, prefix + name)

    return _Roles(
        hub=role("hub"),
        controller=role("hub-controller"),
        escrow=role("escrow"),
        escrow_controller=role("escrow-controller"),
        escrow_helper=role("escrow-helper"),
        operator=role("operator"),
        operator_admin=role("operator-admin"),
        operator_caller=role("operator-caller"),
    )


def _eure(doc: EureDoc, first: CreditSettings, scenario: str) -> CreditSettings | None:
    """The EURe hub beside ``first`` (None: no EURe on its chain, and no table asking for it)."""
    try:
        token = default_registry().token(first.chain, "EURe")
    except NotInRegistry:
        if doc.model_fields_set:
            raise ScenarioError("credit.eure", f"no EURe on chain {first.chain}") from None
        return None
    path = ((0, EUR_USD),) if doc.eur_usd is None else doc.eur_usd
    if any(p == 0 for _, p in path):
        raise ScenarioError("credit.eure.eur_usd", "prices must be above 0")
    return replace(
        first,
        asset=token.symbol,
        asset_address=token.address,
        asset_decimals=token.decimals,
        **_roles(scenario, "eure:"),
        liquidity=50_000_000 * 10**token.decimals if doc.liquidity is None else doc.liquidity,
        book_accounts=0,
        remote=(),
        asset_usd=path,
        vault_asset=(first.asset_address, first.asset_decimals),
    )


def _remote(
    chains: tuple[int, ...] | None,
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

    if chains is None:
        return () if hub_chain == 1 else tuple(matching(1))
    out: list[CreditCollateral] = []
    local = {c.address.lower() for c in collateral}
    for i, chain in enumerate(chains):
        path = f"credit.remote_chains[{i}]"
        if chain == hub_chain or any(c.chain == chain for c in out):
            raise ScenarioError(path, "must be distinct chains other than the hub's")
        found = matching(chain)
        if not found:
            raise ScenarioError(path, f"no token of a collateral symbol on chain {chain}")
        if any(c.address.lower() in local for c in found):
            raise ScenarioError(path, "a remote collateral's address is also a hub-chain one")
        out += found
    return tuple(out)
