"""What a health watch reads: the hub it follows, the blocks, the oracles, the accounts.

:func:`plan_hub` reads once what the watch needs to know of one credit hub: from the service's
``/credit/protocol``, the hub and its collateral escrows on the chain, the collateral tokens
(remote chains' ones too: the hub books them under their addresses there) and their rules
(``ltv``, and the ``maintenanceLtv``/``liquidationBonus`` the embedded service adds, else the
published defaults of :data:`toolkit.credit.DEFAULT_RULES`); from the chain registry each
token's USD price feed (a remote token: the hub chain's feed of the same symbol) and the
credit asset's; on chain the tokens' and feeds' ``decimals()``.

:class:`BookReader` then reads, through web3.py and the service client:

- the accounts the hub's and escrows' events name in a range of blocks
  (:data:`WATCH_EVENTS`: locks, withdrawals, seizures, draws, repayments, bad debt,
  liquidations, operators), in chunks halved on a provider's refusal;
- the head block's number, time and hash, and every feed's ``latestRoundData`` at that block
  (one JSON-RPC batch): the unit prices of :func:`toolkit.models.health.unit_price`; read
  again at the new head when the head moved and the node refused the old block's state;
- accounts' positions: ``/info`` of the credit asset (principal, interest, due date, exact)
  and the hub's ``collateralOf`` for every token (batched), as the credit collector reads them.

>>> WATCH_EVENTS["creditHub.Repaid"], len(WATCH_EVENTS)
(1, 8)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from web3.types import RPCEndpoint

from toolkit.chain import default_registry
from toolkit.chain.errors import NotInRegistry
from toolkit.client import ServiceClient
from toolkit.client.credit import CreditClient
from toolkit.codecs.functions import decode_result, encode_call
from toolkit.collect.accounts import discover_accounts
from toolkit.collect.holdings import CollateralReader, Hub, Token
from toolkit.collect.rpc import RpcFailure, hex_int, rpc_result
from toolkit.credit import DEFAULT_RULES, CollateralRule, ProductRules
from toolkit.errors import InputError
from toolkit.models.health import Position, unit_price

__all__ = ["WATCH_EVENTS", "BookReader", "Head", "HubPlan", "plan_hub"]

#: Event key → the topic naming the account: every event that changes a position.
WATCH_EVENTS: Final = {
    "collateralEscrow.Deposited": 1,
    "collateralEscrow.Withdrawn": 1,
    "collateralEscrow.Seized": 1,
    "creditHub.CreditDrawn": 1,
    "creditHub.Repaid": 1,
    "creditHub.BadDebt": 1,
    "creditHub.Liquidated": 1,
    "creditHub.OperatorSet": 1,
}
_ROUND: Final = "priceFeed.latestRoundData"
#: Reads at a head before giving up on one that keeps moving.
_ATTEMPTS: Final = 3


@dataclass(frozen=True)
class HubPlan:
    """One credit hub as the watch reads it (module docstring): its chain, credit asset
    (symbol, token, decimals, feed), hub and escrow addresses, collateral tokens with their
    decimals, rule keys and feeds, and the product rules."""

    chain: int
    asset: str
    asset_token: str
    asset_decimals: int
    asset_feed: str
    hub: str
    escrows: tuple[str, ...]
    tokens: tuple[Token, ...]
    decimals: Mapping[str, int]
    keys: Mapping[str, str]
    feeds: Mapping[str, str]
    feed_decimals: Mapping[str, int]
    rules: ProductRules


@dataclass(frozen=True)
class Head:
    """A block the watch evaluates at: its number, time (Unix seconds) and hash."""

    number: int
    timestamp: int
    hash: str


def _feed(chain: int, token: str, symbol: str) -> str:
    registry = default_registry()
    try:
        return registry.price_feed(chain, token).address.lower()
    except NotInRegistry:
        for entry in registry.price_feeds(chain):
            if entry.symbol.lower() == symbol.lower():
                return entry.address.lower()
        raise InputError(
            f"asset: no USD price feed for {symbol} on chain {chain} in the chain registry",
            field="asset",
        ) from None


def _rule(symbol: str, raw: Mapping[str, Any], ltv: int) -> CollateralRule:
    """The collateral's rule: the protocol's LTV, its maintenance LTV and bonus where the
    service gives them, else the published defaults."""
    default = DEFAULT_RULES.collateral.get(symbol)
    extra = {w: raw.get(w) for w in ("maintenanceLtv", "liquidationBonus")}
    if all(isinstance(v, str) and v.isdigit() for v in extra.values()):
        m, b = int(str(extra["maintenanceLtv"])), int(str(extra["liquidationBonus"]))
    elif default is not None:
        m, b = default.maintenance_ltv_bps, default.liquidation_bonus_bps
    else:
        raise InputError(f"asset: collateral {symbol!r} has no maintenance LTV", field="asset")
    return CollateralRule(symbol, "collected", ltv, max(m, ltv), b)


def plan_hub(client: ServiceClient, w3: Any, *, chain: int, asset: str = "USDC") -> HubPlan:
    """The :class:`HubPlan` of the hub lending ``asset`` on ``chain`` (module docstring)."""
    config, document = CreditClient(client).protocol_document()
    caip = f"eip155:{chain}"
    if caip not in config.chains:
        raise InputError(f"chain: the credit protocol lists no chain {chain}", field="chain")
    hubs = {s.lower(): h for s, h in config.chains[caip].credit_hubs.items()}
    if asset.lower() not in hubs:
        known = ", ".join(sorted(hubs)) or "none"
        raise InputError(
            f"asset: no {asset} credit hub on chain {chain} (hubs: {known})", field="asset"
        )
    hub = hubs[asset.lower()]
    tokens: list[Token] = []
    rules: dict[str, CollateralRule] = {}
    escrows: set[str] = set()
    for chain_caip, chain_config in config.chains.items():
        on = int(chain_caip.split(":")[1])
        for key, c in chain_config.collateral.items():
            address = key.partition(":")[2].lower()
            tokens.append(Token(on, address, c.symbol.lower()))
            extra = document["chains"][chain_caip]["collateral"][key]
            rules[c.symbol.lower()] = _rule(c.symbol.lower(), extra, int(c.ltv))
            if on == chain:
                escrows.add(c.escrow_address.lower())
    asset_token = hub.asset_address.lower()
    feeds = {t.address: _feed(chain, t.address, t.symbol) for t in tokens}
    feeds[asset_token] = _feed(chain, asset_token, asset)
    # Decimals are read on the hub's chain; a remote chain's token takes those of the hub
    # chain's token of its symbol (the hub books it under that symbol's rule).
    local = {t.symbol: _decimals_of(w3, t.address) for t in tokens if t.chain == chain}
    decimals = {t.address: local[t.symbol] for t in tokens if t.symbol in local}
    decimals[asset_token] = _decimals_of(w3, asset_token)
    return HubPlan(
        chain=chain,
        asset=asset.upper(),
        asset_token=asset_token,
        asset_decimals=decimals[asset_token],
        asset_feed=feeds[asset_token],
        hub=hub.credit_hub_address.lower(),
        escrows=tuple(sorted(escrows)),
        tokens=tuple(tokens),
        decimals=decimals,
        keys={t.address: t.symbol for t in tokens},
        feeds=feeds,
        feed_decimals={f: _decimals_of(w3, f) for f in set(feeds.values())},
        rules=ProductRules(collateral=rules),
    )


def _decimals_of(w3: Any, contract: str) -> int:
    """A contract's ``decimals()`` (a feed's, a token's) at the latest block."""
    call = {"to": w3.to_checksum_address(contract), "data": encode_call("erc20.decimals")}
    answer = w3.provider.make_request(RPCEndpoint("eth_call"), [call, "latest"])
    return int(decode_result("erc20.decimals", rpc_result("eth_call", answer))[0])


def _units(text: str, decimals: int) -> int:
    """A human-unit decimal text as smallest units (exact: the service writes whole units)."""
    return int(Decimal(text).scaleb(decimals).to_integral_value())


def _unix(text: str | None) -> int | None:
    if text is None:
        return None
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


class BookReader:
    """The reads of a watch on one hub (module docstring), through ``client`` and ``w3``
    (the hub chain's ``Web3``); ``eth_getLogs`` ranges of up to ``chunk`` blocks."""

    def __init__(self, client: ServiceClient, w3: Any, plan: HubPlan, *, chunk: int = 2000) -> None:
        self.w3 = w3
        self.plan = plan
        self.chunk = chunk
        self.credit = CreditClient(client)
        self.holdings = CollateralReader(client, {plan.chain: w3})
        self.holdings.hubs = [Hub(plan.asset, plan.chain, plan.hub)]
        self.holdings.tokens = list(plan.tokens)

    def _call(self, method: str, params: list[Any]) -> Any:
        return rpc_result(method, self.w3.provider.make_request(RPCEndpoint(method), params))

    def head(self) -> int:
        """The chain's latest block number."""
        return hex_int(self._call("eth_blockNumber", []))

    def block(self, number: int) -> Head:
        """Block ``number``'s time and hash."""
        block = self._call("eth_getBlockByNumber", [hex(number), False])
        if block is None:
            raise RpcFailure("eth_getBlockByNumber", None, f"block {number} not found")
        return Head(number, hex_int(block["timestamp"]), str(block["hash"]).lower())

    def touched(self, first: int, last: int) -> list[str]:
        """The accounts the hub's and escrows' events name in ``first``..``last``."""
        plan = self.plan
        found = discover_accounts(
            self.w3,
            [plan.hub],
            list(plan.escrows),
            from_block=first,
            to_block=last,
            chunk=self.chunk,
            events=WATCH_EVENTS,
        )
        return found.accounts

    def at_head(self, confirmations: int) -> tuple[Head, dict[str, Fraction]]:
        """The block ``confirmations`` behind the head and the unit prices at it, read again
        at the new head when the head moved under the read and the node refused the block's
        state (a node that keeps the latest state only); at most three tries, as the price
        collector's."""
        for attempt in range(1, _ATTEMPTS + 1):
            number = self.head() - confirmations
            try:
                return self.block(number), self.prices(number)
            except RpcFailure:
                if attempt == _ATTEMPTS or self.head() - confirmations == number:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def prices(self, number: int) -> dict[str, Fraction]:
        """Unit prices (credit-asset smallest units per token smallest unit) of every token,
        from the feeds' ``latestRoundData`` at block ``number`` (one batch)."""
        plan = self.plan
        feeds = sorted(set(plan.feeds.values()))
        data = encode_call(_ROUND)
        calls = [
            (
                RPCEndpoint("eth_call"),
                [{"to": self.w3.to_checksum_address(f), "data": data}, hex(number)],
            )
            for f in feeds
        ]
        answers = self.w3.provider.make_batch_request(calls)
        if not isinstance(answers, list):
            rpc_result("eth_call", answers)  # raises the batch's error
            raise RpcFailure("eth_call", None, "batch answered by one object")
        answer_of = {
            feed: int(decode_result(_ROUND, rpc_result("eth_call", a))[1])
            for feed, a in zip(feeds, answers, strict=True)
        }
        asset = answer_of[plan.asset_feed]
        return {
            token: unit_price(
                answer_of[plan.feeds[token]],
                plan.feed_decimals[plan.feeds[token]],
                plan.decimals[token],
                asset,
                plan.feed_decimals[plan.asset_feed],
                plan.asset_decimals,
            )
            for token in plan.keys
            if token in plan.decimals
        }

    def positions(self, accounts: Iterable[str], read_at: int) -> dict[str, Position]:
        """The positions of ``accounts`` now: ``/info`` of the credit asset and the hub's
        ``collateralOf`` of every token (batched), stamped ``read_at`` (Unix seconds)."""
        chosen = sorted(set(accounts))
        found: dict[str, Position] = {}
        for start in range(0, len(chosen), HOLDINGS_BATCH):
            part = chosen[start : start + HOLDINGS_BATCH]
            held = self.holdings.holdings(part)
            for account in part:
                info = _for_asset(self.credit.info(account), self.plan.asset)
                decimals = self.plan.asset_decimals
                found[account] = Position(
                    holdings={row["token"]: int(row["amount"]) for row in held.get(account, ())},
                    principal=_units(info.principal, decimals) if info else 0,
                    interest=_units(info.interest, decimals) if info else 0,
                    due=_unix(info.due_date) if info else None,
                    read_at=read_at,
                )
        return found


#: Accounts read per holdings batch (each: tokens calls).
HOLDINGS_BATCH: Final = 100


def _for_asset(infos: Mapping[str, Any], asset: str) -> Any:
    return next((i for s, i in infos.items() if s.lower() == asset.lower()), None)
