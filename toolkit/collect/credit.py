"""Periodic snapshots of the credit surface: ``/credit/protocol``, each account's ``/info``,
operator status and auto top-up configs, into ``credit_protocol``, ``credit_accounts``,
``credit_operators`` and ``credit_topup_configs``; and each account's collateral mix, read on
chain, into ``credit_collateral``.

``/info`` reports an account's totals only. The mix is read through web3.py from each credit
hub (the protocol's ``creditHubs``): ``collateralOf(account, token)`` for every collateral token
the protocol lists on any chain (remote chains' tokens are booked on the hub under their
addresses there), batched as JSON-RPC arrays of :data:`HOLDINGS_BATCH` accounts, with each
token's ``decimals()`` read once per run on its own chain. A web3 per chain comes from
``web3s`` (chain id → ``Web3``), else the embedded service's chains, else
``$TOOLKIT_RPC_URL_<chainId>``; a hub on a chain with none of these is not read. Only tokens
held (a non-zero amount) leave a row.

Figures are stored exactly as the service wrote them (human-unit decimal text into
``DECIMAL(38,18)``, never a float); an infinite health factor (no debt) is stored as null.
Each round reads everything once under its round number; a resumed run starts again at its
last stored round (the writes are idempotent, so nothing is counted twice). The credit surface
needs no key: against the real service only its URL is needed.

>>> from toolkit.client import ServiceClient
>>> from toolkit.clock import VirtualClock
>>> from toolkit.store import Store
>>> with ServiceClient(embedded=True, clock=VirtualClock()) as client, Store(":memory:") as store:
...     result = CreditCollector(client, store, accounts=["0x" + "11" * 20], progress=False).run()
...     store.query("SELECT asset, health_factor FROM credit_accounts ORDER BY asset").rows()
[('EURE', None), ('USDC', None)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import httpx

from toolkit.arguments import number, whole
from toolkit.client import NotFound, ServiceClient
from toolkit.client.credit import CreditClient
from toolkit.client.operations import Operation, read_model
from toolkit.collect.accounts import discover_into, scanned_to, stored_accounts
from toolkit.collect.holdings import CollateralReader, Hub, Token
from toolkit.collect.rows import utc
from toolkit.collect.run import Collector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.resources import (
    CreditAccountInfo,
    HexAddress,
    InvalidInput,
    ProtocolConfig,
    parse_value,
)
from toolkit.store import Store

__all__ = ["HOLDINGS_BATCH", "CreditCollector", "known_accounts"]

#: Accounts whose holdings go in one JSON-RPC batch (each account: hubs × tokens calls).
HOLDINGS_BATCH: Final = 100


def _account(value: str) -> str:
    try:
        checked: str = parse_value(HexAddress, value, "accounts")
    except InvalidInput as exc:
        raise InputError(f"accounts: {value!r} {exc.rule}", field="accounts") from None
    return checked.lower()


def known_accounts(store: Store) -> list[str]:
    """Accounts the store has seen in earlier credit runs."""
    found: set[str] = set()
    for table in ("credit_accounts", "credit_operators"):
        frame = store.query(f"SELECT DISTINCT account FROM {table}")
        found.update(str(a) for a in frame["account"].to_list())
    return sorted(found)


def _read_protocol(response: httpx.Response) -> tuple[ProtocolConfig, dict[str, Any]]:
    config = read_model(ProtocolConfig, response, "credit protocol")
    body: dict[str, Any] = response.json()
    return config, body


_PROTOCOL: Operation[tuple[ProtocolConfig, dict[str, Any]]] = Operation(
    "credit protocol", "GET", "/credit/protocol", auth=False, parse=_read_protocol
)


def _decimal(text: str) -> Decimal | None:
    value = Decimal(text)
    return value if value.is_finite() else None


def _due(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


class CreditCollector(Collector):
    """``rounds`` snapshots, ``interval_s`` seconds apart, of the credit surface for ``accounts``
    (``all_known`` adds :func:`known_accounts` and every account the hubs' events name,
    :func:`~toolkit.collect.accounts.discover_accounts`); ``web3s`` (chain id → ``Web3``) reads the
    collateral mix where the defaults (module docstring) do not reach. The discovery reads
    ``chunk`` blocks per ``eth_getLogs`` request, storing each range read, so an interrupted
    run resumes it by range and a later run scans only the blocks after the last one read."""

    kind = "credit"
    unit = "account"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        accounts: Sequence[str] = (),
        all_known: bool = False,
        rounds: int = 1,
        interval_s: float = 60.0,
        asset: str = "usdc",
        web3s: Mapping[int, Any] | None = None,
        chunk: int = 5000,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        super().__init__(client, store, progress=progress, batch_size=batch_size)
        self.chunk = whole(chunk, "chunk", minimum=1)
        web3s = {whole(chain, "web3s", minimum=1): w3 for chain, w3 in (web3s or {}).items()}
        self.mix = CollateralReader(client, web3s)
        self._held: dict[str, list[dict[str, Any]]] = {}
        if isinstance(accounts, str):
            raise InputError(
                "accounts: must be a list of addresses, not one string", field="accounts"
            )
        self.accounts = sorted({_account(a) for a in accounts})
        self.all_known = bool(all_known)
        self.rounds = whole(rounds, "rounds", minimum=1)
        self.interval_s = float(number(interval_s, "interval_s", minimum=0))
        self.asset = asset
        self.credit = CreditClient(client)
        self.start_round = 0
        #: chain id → (hubs, escrows) whose events name the accounts (``all_known``).
        self._scan: dict[int, tuple[list[str], list[str]]] = {}
        #: chain id → the first block this run scans for accounts (``all_known``).
        self.discover_from: dict[int, int] = {}

    def prepare(self) -> None:
        if self.all_known:
            self._plan_discovery()
            known = set(known_accounts(self.store))
            known |= set(stored_accounts(self.store, self.target_url()))
            self.accounts = sorted(set(self.accounts) | known)
        elif not self.accounts:
            raise InputError("accounts: give at least one account, or all_known", field="accounts")

    def _plan_discovery(self) -> None:
        """The chains to scan for accounts, each from the block after the last one an earlier
        credit run on this target scanned (the whole chain the first time)."""
        config, _ = self.client.call(_PROTOCOL)
        unread: list[int] = []
        for caip, chain in config.chains.items():
            chain_id = int(caip.split(":")[1])
            if self.mix.web3(chain_id) is None:
                unread.append(chain_id)
                continue
            hubs = [hub.credit_hub_address for hub in chain.credit_hubs.values()]
            escrows = sorted({c.escrow_address.lower() for c in chain.collateral.values()})
            self._scan[chain_id] = (hubs, escrows)
            last = scanned_to(self.store, chain_id, self.target_url())
            self.discover_from[chain_id] = 0 if last is None else last + 1
        if unread and not self._scan and not self.accounts:
            variables = ", ".join(f"TOOLKIT_RPC_URL_{c}" for c in sorted(unread))
            raise InputError(
                "all_known: accounts are discovered from the credit hubs' events on chain, "
                f"and no JSON-RPC URL is set for {variables}; set it or give accounts",
                field="all_known",
            )

    def _discover(self, run_id: str, writer: BatchWriter, resumed: bool) -> None:
        """Scan each planned chain for accounts (a resumed run after its last stored range)
        and add every account found, by this run or an earlier one, to the run's accounts."""
        for chain_id, (hubs, escrows) in self._scan.items():
            start = self.discover_from.get(chain_id, 0)
            if resumed:
                done = scanned_to(self.store, chain_id, self.target_url(), run_id)
                start = start if done is None else max(start, done + 1)
            w3 = self.mix.web3(chain_id)
            discover_into(self.store, writer, w3, chain=chain_id, hubs=hubs, escrows=escrows,
                          run_id=run_id, from_block=start, chunk=self.chunk)  # fmt: skip
        found = stored_accounts(self.store, self.target_url())
        self.accounts = sorted(set(self.accounts) | set(found))
        if not self.accounts:
            raise InputError(
                "all_known: no credit run stored an account before and the credit hubs' "
                "events name none; give accounts",
                field="all_known",
            )

    def parameters(self) -> dict[str, Any]:
        return {
            "accounts": self.accounts,
            "all_known": self.all_known,
            "discover_from": {str(k): v for k, v in self.discover_from.items()},
            "rounds": self.rounds,
            "interval": self.interval_s,
            "asset": self.asset,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        self.accounts = [_account(str(a)) for a in parameters.get("accounts") or []]
        self.rounds = int(parameters.get("rounds", self.rounds))
        self.interval_s = float(parameters.get("interval", self.interval_s))
        self.asset = str(parameters.get("asset", self.asset))
        self.all_known = bool(parameters.get("all_known", False))
        if self.all_known:
            self._plan_discovery()
            stored = parameters.get("discover_from") or {}
            self.discover_from.update({int(k): int(v) for k, v in stored.items()})

    def total(self) -> int | None:
        return (self.rounds - self.start_round) * (len(self.accounts) + 1)

    def next_round(self, run_id: str) -> tuple[int, set[int]]:
        """Where a run resumes: its last stored round, read again whole (the writes are
        idempotent), or round 0."""
        frame = self.store.query(
            "SELECT max(round) AS r FROM credit_protocol WHERE run_id = $run", {"run": run_id}
        )
        last = frame["r"][0]
        return (0 if last is None else int(last)), set()

    def discover(self, run_id: str, writer: BatchWriter, resumed: bool) -> None:
        """With ``all_known``, find the accounts to read (once, before the first round)."""
        if self.all_known:
            self._discover(run_id, writer, resumed)

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        first = self.next_round(run_id)[0] if resumed else 0
        if first == 0:
            self.discover(run_id, writer, resumed)
            bar.total = self.total()
            bar.refresh()
        for round_ in range(first, self.rounds):
            started = self.clock()
            for part in range(self.round_size()):
                bar.update(self.visit_part(run_id, round_, part, writer))
            if round_ + 1 < self.rounds:
                wait = started + self.interval_s - self.clock()
                if wait > 0:
                    self.clock.sleep(wait)

    def round_size(self) -> int:
        """The parts of a round: the protocol, then each batch of :data:`HOLDINGS_BATCH`
        accounts (a follower visits them one poll at a time)."""
        return 1 + -(-len(self.accounts) // HOLDINGS_BATCH)

    def visit_part(self, run_id: str, round_: int, part: int, writer: BatchWriter) -> int:
        """Read part ``part`` of round ``round_`` (:meth:`round_size`); the reads made."""
        if part == 0:
            self._protocol(run_id, round_, writer)
            self.note(True)
            return 1
        chunk = self.accounts[(part - 1) * HOLDINGS_BATCH : part * HOLDINGS_BATCH]
        self._held = self.mix.holdings(chunk)
        for account in chunk:
            self._account(run_id, round_, account, writer)
        return len(chunk)

    def place(self, run_id: str, round_: int) -> dict[str, Any]:
        return {"run_id": run_id, "round": round_, "observed_at": utc(self.clock())}

    def _protocol(self, run_id: str, round_: int, writer: BatchWriter) -> None:
        config, body = self.client.call(_PROTOCOL)
        place = self.place(run_id, round_)
        rows = []
        self.mix.hubs, self.mix.tokens = [], []
        for caip, chain in config.chains.items():
            chain_id = int(caip.split(":")[1])
            self.mix.hubs += [
                Hub(symbol.upper(), chain_id, hub.credit_hub_address.lower())
                for symbol, hub in chain.credit_hubs.items()
            ]
            raw = body["chains"][caip]["collateral"]
            for key, c in chain.collateral.items():
                self.mix.tokens.append(Token(chain_id, key.partition(":")[2].lower(), c.symbol))
                # maintenanceLtv and liquidationBonus: the embedded service's additions.
                extra = {
                    column: int(text)
                    for wire, column in (
                        ("maintenanceLtv", "maintenance_ltv_bps"),
                        ("liquidationBonus", "liquidation_bonus_bps"),
                    )
                    if isinstance(text := raw[key].get(wire), str)
                    and text.isascii()
                    and text.isdigit()
                }
                rows.append(
                    {
                        **place,
                        "chain": int(caip.split(":")[1]),
                        "collateral": key,
                        "symbol": c.symbol,
                        "escrow": c.escrow_address.lower(),
                        "ltv_bps": int(c.ltv),
                        "strategy": c.strategy,
                        **extra,
                    }
                )
        writer.add("credit_protocol", rows)

    def _account(self, run_id: str, round_: int, account: str, writer: BatchWriter) -> None:
        infos = self.credit.info(account)
        place = self.place(run_id, round_)
        writer.add(
            "credit_accounts",
            [self._info_row(place, account, symbol, info) for symbol, info in infos.items()],
        )
        status = self.credit.operator(account, self.asset)
        receivers = status.receivers or [""]
        writer.add(
            "credit_operators",
            [
                {
                    **place,
                    "account": account,
                    "receiver": r.lower(),
                    "asset": self.asset,
                    "operator": status.operator.lower(),
                }
                for r in receivers
            ],
        )
        configs = []
        for receiver in status.receivers:
            try:
                settings = self.credit.topup_config(account, receiver)
            except NotFound:
                continue
            configs.append(
                {
                    **place,
                    "account": account,
                    "receiver": receiver.lower(),
                    "asset": self.asset,
                    "threshold": int(settings.threshold),
                    "target_balance": int(settings.target_balance),
                    "health_factor_bps": int(settings.health_factor),
                }
            )
        writer.add("credit_topup_configs", configs)
        writer.add("credit_collateral", [place | row for row in self._held.get(account, ())])

    @staticmethod
    def _info_row(
        place: dict[str, Any], account: str, symbol: str, info: CreditAccountInfo
    ) -> dict[str, Any]:
        return {
            **place,
            "account": account,
            "asset": symbol,
            "debt": Decimal(info.debt),
            "principal": Decimal(info.principal),
            "interest": Decimal(info.interest),
            "health_factor": _decimal(info.health_factor),
            "m_health_factor": _decimal(info.m_health_factor),
            "liquidation_limit": Decimal(info.liquidation_limit),
            "total_collateral_value": Decimal(info.total_collateral_value),
            "total_credit_capacity": Decimal(info.total_credit_capacity),
            "remaining_credit_capacity": Decimal(info.remaining_credit_capacity),
            "due_date": _due(info.due_date),
        }
