"""Auto top-up executed by the service: the operator's caller refills cards from credit.

A record (``enable``/``update`` of the credit API; :class:`TopUp`) says: when the receiver's
balance of the credit asset falls below ``threshold``, draw for the account through the operator
contract (``openCreditLine(account, receiver, amount)`` sent by the operator's ``caller``) so
that the receiver holds ``targetBalance`` after the origination fee — no more than keeps the
account's health factor at or above the record's ``healthFactor`` (bps, 10000 = 1.0) and within
its credit capacity, so a top-up may be partial, or none. Only accounts whose operator is the
hub's operator contract, with the receiver whitelisted and no revocation past, are topped up.

:class:`AutoTopUps` runs as part of :class:`~toolkit.world.relay.Relay` (before every JSON-RPC
method and after time moves; a pass is skipped when neither the hub chain's head nor the
second has changed since the last): one transaction per record that needs one, and none while
its previous one is still unmined. The seeded book's cards start full (their target), so they draw
only once spent.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from toolkit.codecs.functions import encode_call
from toolkit.credit import BPS
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm import ERC20, Chains, CreditHub, CreditOperator, Ledger
from toolkit.world.evm.credit import book_account, book_topup
from toolkit.world.sender import send

__all__ = ["AutoTopUps", "TopUp", "TopUpMove", "top_up_amount"]

log = logging.getLogger(__name__)

#: The gas limit of the caller's ``openCreditLine`` transactions.
CALLER_GAS: Final = 300_000


@dataclass(frozen=True)
class TopUp:
    """An auto top-up record: refill the receiver to ``target_balance`` below ``threshold``
    while the health factor stays at or above ``health_factor`` (bps); strings of digits."""

    threshold: str
    target_balance: str
    health_factor: str


@dataclass(frozen=True, slots=True)
class TopUpMove:
    """One top-up sent: the credit asset, account, receiver, amount drawn and transaction."""

    asset: str
    account: str
    receiver: str
    amount: int
    tx_hash: str


def top_up_amount(need: int, fee_bps: int) -> int:
    """The smallest draw that delivers at least ``need`` after a fee of ``fee_bps`` (rounded
    up on the draw, as the hub does).

    >>> top_up_amount(995, 50), top_up_amount(0, 50)
    (1000, 0)
    """
    amount = need * BPS // (BPS - fee_bps)
    while amount - -(-amount * fee_bps // BPS) < need:
        amount += 1
    return amount


@dataclass(frozen=True, slots=True)
class _Hub:
    settings: CreditSettings
    ledger: Ledger
    hub: CreditHub
    operator: CreditOperator
    token: ERC20
    stamp: int


@dataclass
class AutoTopUps:
    """The service's auto top-up records and their execution (see the module docstring)."""

    chains: Chains
    records: dict[tuple[str, str, str], TopUp] = field(default_factory=dict)
    moves: list[TopUpMove] = field(default_factory=list)
    _inflight: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: The hub chain's head and the second of the last pass (a pass with neither changed
    #: would find what the last one found: skipped).
    _last: tuple[int, int] = (-1, -1)

    def __post_init__(self) -> None:
        credit = self.chains.scenario.credit
        self.settings: CreditSettings | None = credit
        if credit is not None and not self.records:
            self.records.update(self._seeded(credit))

    def _seeded(self, s: CreditSettings) -> dict[tuple[str, str, str], TopUp]:
        """The seeded book's cards: one record per whitelisted receiver (:func:`book_topup`)."""
        if s.book_accounts == 0:
            return {}
        operator = self.chains.ledger(s.chain).contract(s.operator.lower())
        if not isinstance(operator, CreditOperator):
            return {}
        book = {book_account(s, i) for i in range(s.book_accounts)}
        out = {}
        for (account, receiver), on in operator.whitelist.items():
            if on and account in book:
                threshold, target = book_topup(s, account)
                out[(s.asset.lower(), account, receiver)] = TopUp(
                    str(threshold), str(target), "13000"
                )
        return out

    def save(self) -> tuple[Any, ...]:
        """The records, moves and transactions in flight, for a snapshot."""
        return copy.deepcopy((self.records, self.moves, self._inflight))

    def restore(self, state: tuple[Any, ...]) -> None:
        """Go back to a :meth:`save` (the records are changed in place: the service's view)."""
        records, self.moves, self._inflight = copy.deepcopy(state)
        self._last = (-1, -1)
        self.records.clear()
        self.records.update(records)

    def run(self, now: float) -> list[TopUpMove]:
        """Send every top-up due at ``now``; the ones sent."""
        if self.settings is None or not self.records:
            return []
        mark = (self.chains.ledger(self.settings.chain).block_number(now), int(now))
        if mark == self._last:
            return []
        self._last = mark
        hubs: dict[str, _Hub | None] = {}
        done: list[TopUpMove] = []
        for key, record in list(self.records.items()):
            if key[0] not in hubs:
                hubs[key[0]] = self._hub(key[0], now)
            hub = hubs[key[0]]
            if hub is None:
                continue
            move = self._one(hub, key, record, now)
            if move is not None:
                done.append(move)
        self.moves += done
        return done

    def _hub(self, asset: str, now: float) -> _Hub | None:
        """The contracts of the hub lending ``asset`` and the latest block's time."""
        assert self.settings is not None
        s = self.settings.hub_for(asset)
        if s is None:
            return None
        ledger = self.chains.ledger(s.chain)
        hub = ledger.contract(s.hub.lower())
        operator = ledger.contract(s.operator.lower())
        token = ledger.contract(s.asset_address.lower())
        if not (
            isinstance(hub, CreditHub)
            and isinstance(operator, CreditOperator)
            and isinstance(token, ERC20)
        ):
            return None
        stamp = ledger.block_timestamp(ledger.block_number(now))
        return _Hub(s, ledger, hub, operator, token, stamp)

    def _one(
        self, h: _Hub, key: tuple[str, str, str], record: TopUp, now: float
    ) -> TopUpMove | None:
        _, account, receiver = key
        balance = h.token.balances.get(receiver, 0)
        if balance >= int(record.threshold):
            return None
        sent = self._inflight.get(key)
        if sent is not None:
            if h.ledger.receipt(sent, now) is None:
                return None  # the last top-up is not mined yet
            del self._inflight[key]
        if h.hub.operators.get(account) != h.operator.address:
            return None
        if not h.operator.whitelist.get((account, receiver)):
            return None
        until = h.operator.access_until.get(account)
        if until is not None and h.stamp > until:
            return None
        s = h.settings
        wanted = top_up_amount(int(record.target_balance) - balance, s.rules.origination_fee_bps)
        amount = min(wanted, self._room(h.hub, s, account, h.stamp, int(record.health_factor)))
        if amount <= 0:
            return None
        data = encode_call("operator.openCreditLine", account, receiver, amount)
        tx_hash = send(h.ledger, s.operator_caller.lower(), h.operator.address, data, now,
                       gas=CALLER_GAS, label=b"toolkit top-up tx")  # fmt: skip
        self._inflight[key] = tx_hash
        log.info("top-up of %s for %s to %s (tx %s)", amount, account, receiver, tx_hash)
        return TopUpMove(s.asset.lower(), account, receiver, amount, tx_hash)

    @staticmethod
    def _room(hub: CreditHub, s: CreditSettings, account: str, now: int, hf_bps: int) -> int:
        """How much more the account may draw: within its credit capacity, and keeping its
        health factor (Σ value × maintenance LTV / debt) at or above ``hf_bps``."""
        f = hub.figures(account, now)
        values = hub.values(account, now)
        weighted = sum(
            (Fraction(v * s.rules.rule(k).maintenance_ltv_bps, BPS) for k, v in values.items()),
            Fraction(0),
        )
        by_health = int(weighted * BPS / max(hf_bps, 1))
        return min(by_health, f.total_credit_capacity) - f.debt
