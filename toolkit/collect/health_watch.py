"""A health-factor watch for risk teams: the credit book kept current from the hub's events and
the oracles' prices, block by block, threshold crossings written to ``alerts`` and posted to a
webhook.

:class:`HealthWatch` follows one credit hub (:func:`~toolkit.collect.health_book.plan_hub`).
It is a follower: a ``name``, a ``cadence_s`` and one :meth:`~HealthWatch.poll` step that reads
the blocks since the last one and flushes once, and a :attr:`~HealthWatch.status`; ``toolkit
watch`` (or a notebook, with :meth:`~HealthWatch.run`) calls it on its cadence. Each poll:

1. the head (less ``confirmations``); nothing more when no block is new;
2. the accounts the hub's and escrows' events name in the new blocks (all of them since
   ``from_block`` on the first poll, every known one each ``refresh_s``): their positions
   are read again (``/info`` and ``collateralOf``);
3. every feed's price at the head block, and every account's health factor at it,
   :func:`toolkit.credit.figures`' (via :func:`toolkit.models.health.breaches`), with its
   interest accrued to the block's time;
4. the crossings of the rules (:data:`~toolkit.models.health.DEFAULT_ALERT_RULES`: below 1.1,
   below 1.0, the concentration caps) since the last poll, appended to ``alerts`` in one write,
   keyed by watch, chain, rule, subject and block, so a crossing is one row however often it
   is written;
5. every alert not yet delivered posted to the webhook (retried under the one retry policy),
   each attempt appended to ``alert_deliveries`` in one write.

A restart takes back what was in breach from ``alerts`` (the last state of each rule and
subject) and re-reads the book, so a crossing written before is not written or posted again;
an alert whose delivery was not recorded is posted again with the same ``alert_id`` (at least
once: the receiver keeps one per id). Prices and positions are read at each poll's head: a
breach that opened and closed between two polls is not seen.

Webhook body (JSON; amounts and figures as exact decimal text, human units; no URL, no key)::

    {"alert_id": "health:8453:hf_below_1.0:0xabc...:1234", "watch": "health", "chain": 8453,
     "rule": "hf_below_1.0", "kind": "health_below", "subject": "0xabc...", "state": "breached",
     "block_number": 1234, "block_time": "2025-10-09T09:00:00Z", "asset": "USDC",
     "threshold": "1.0", "value": "0.987654321098765432", "debt": "1653.965635",
     "collateral_value": "2869.84"}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

import httpx
import polars as pl
from web3.types import RPCEndpoint

from toolkit.arguments import number, whole
from toolkit.client import ServiceClient, ServiceError
from toolkit.client.webhook import Webhook
from toolkit.clock import WALL, Clock
from toolkit.collect.health_book import BookReader, Head, HubPlan, plan_hub
from toolkit.collect.rpc import RpcFailure, hex_int, rpc_result
from toolkit.credit import figures
from toolkit.errors import ChainError
from toolkit.models.health import (
    DEFAULT_ALERT_RULES,
    AlertRule,
    Crossing,
    Position,
    breaches,
    crossings,
)
from toolkit.store import Store, polars_schema

__all__ = ["HealthWatch", "WatchStatus"]

#: Errors of a poll that leave the watch running (the next poll tries again).
_TRANSIENT: Final = (ServiceError, httpx.HTTPError, RpcFailure, ChainError)
#: Figures past DECIMAL(38,18)'s 20 integer digits are stored as null (no debt to speak of).
_FIGURE_MAX: Final = Decimal(10) ** 19


@dataclass(frozen=True)
class WatchStatus:
    """What a watch is doing: the block it evaluated last and the chain head, the accounts it
    holds and how many (rule, subject) are in breach, the alerts it wrote and those still
    owed to the webhook, the last error (None after a good poll) and when it last polled and
    flushed (Unix seconds)."""

    name: str
    chain: int | None
    block: int | None
    head: int | None
    accounts: int
    in_breach: int
    alerts_written: int
    undelivered: int
    last_error: str | None
    last_poll_s: float | None
    last_flush_s: float | None

    @property
    def lag_blocks(self) -> int | None:
        """Blocks between the head and the block last evaluated."""
        return None if self.block is None or self.head is None else self.head - self.block


def _figure(value: Fraction | Decimal | None) -> Decimal | None:
    if value is None:
        return None
    exact = value if isinstance(value, Decimal) else Decimal(value.numerator) / value.denominator
    return None if exact >= _FIGURE_MAX else exact.quantize(Decimal("1e-18"))


def _human(units: int | None, decimals: int) -> str | None:
    return None if units is None else str(Decimal(units).scaleb(-decimals))


class HealthWatch:
    """The watch (module docstring) of the hub lending ``asset`` on the chain of ``w3``.

    ``client`` reads the credit surface, ``w3`` the hub's chain; ``webhook`` (optional) gets
    the alerts; ``rules`` are the thresholds; ``name`` tells the watch's alerts apart in the
    store; ``from_block`` is where the first poll starts reading events; ``confirmations``
    keeps that many blocks back from the head; ``refresh_s`` re-reads every account that
    often; ``clock`` stamps rows (default: the client's).
    """

    def __init__(
        self,
        client: ServiceClient,
        w3: Any,
        store: Store,
        *,
        webhook: Webhook | None = None,
        rules: Sequence[AlertRule] = DEFAULT_ALERT_RULES,
        name: str = "health",
        asset: str = "USDC",
        cadence_s: float = 2.0,
        from_block: int = 0,
        confirmations: int = 0,
        refresh_s: float = 3600.0,
        chunk: int = 2000,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(store, Store):
            raise ValueError("store: must be a toolkit.store.Store")
        names = [r.name for r in rules]
        if not rules or len(set(names)) != len(names):
            raise ValueError("rules: give at least one rule, each name once")
        if not isinstance(name, str) or not name.strip() or ":" in name:
            raise ValueError("name: must be a non-empty name without ':'")
        self.client, self.w3, self.store, self.webhook = client, w3, store, webhook
        self.rules = tuple(rules)
        self.name = name
        self.asset = asset
        self.cadence_s = float(number(cadence_s, "cadence_s", above=0))
        self.from_block = whole(from_block, "from_block", minimum=0)
        self.confirmations = whole(confirmations, "confirmations", minimum=0)
        self.refresh_s = float(number(refresh_s, "refresh_s", above=0))
        self.chunk = whole(chunk, "chunk", minimum=1)
        self.clock: Clock = getattr(client, "clock", WALL) if clock is None else clock
        self.plan: HubPlan | None = None
        self.reader: BookReader | None = None
        self.positions: dict[str, Position] = {}
        self.breached: dict[tuple[str, str], Fraction] = {}
        self.block: int | None = None
        self._head: int | None = None
        self._refreshed_s = 0.0
        self._written = 0
        self._undelivered = 0
        self._error: str | None = None
        self._poll_s: float | None = None
        self._flush_s: float | None = None

    def __repr__(self) -> str:
        return f"HealthWatch(name={self.name!r}, asset={self.asset!r}, block={self.block})"

    @property
    def status(self) -> WatchStatus:
        """The watch's :class:`WatchStatus`."""
        return WatchStatus(
            name=self.name,
            chain=None if self.plan is None else self.plan.chain,
            block=self.block,
            head=self._head,
            accounts=len(self.positions),
            in_breach=len(self.breached),
            alerts_written=self._written,
            undelivered=self._undelivered,
            last_error=self._error,
            last_poll_s=self._poll_s,
            last_flush_s=self._flush_s,
        )

    # -- one step ------------------------------------------------------------------------

    def poll(self, now: float) -> WatchStatus:
        """Read the blocks since the last poll, write and post the crossings (module
        docstring); ``now`` (Unix seconds) decides when every account is read again. A failed
        read leaves the watch as it was, its error in :attr:`status`."""
        try:
            self.step(now)
        except _TRANSIENT as exc:
            self._error = f"{type(exc).__name__}: {exc}"
        else:
            self._error = None
        return self.status

    def step(self, now: float) -> WatchStatus:
        """:meth:`poll`, its errors raised rather than kept (for a loop that tells transient
        errors from the rest itself: ``toolkit watch``'s, :mod:`toolkit.collect.follow`)."""
        self._poll_s = now
        self._advance(now)
        return self.status

    def _start(self) -> BookReader:
        if self.reader is None:
            answer = self.w3.provider.make_request(RPCEndpoint("eth_chainId"), [])
            chain = hex_int(rpc_result("eth_chainId", answer))
            self.plan = plan_hub(self.client, self.w3, chain=chain, asset=self.asset)
            self.reader = BookReader(self.client, self.w3, self.plan, chunk=self.chunk)
            self.breached = self._stored_breaches()
        return self.reader

    def _advance(self, now: float) -> None:
        reader = self._start()
        head = reader.head() - self.confirmations
        self._head = head + self.confirmations
        if head < self.from_block or (self.block is not None and head <= self.block):
            self._deliver()
            return
        block, prices = reader.at_head(self.confirmations)
        first = self.from_block if self.block is None else self.block + 1
        touched = set(reader.touched(first, block.number))
        refresh = self.block is None or now - self._refreshed_s >= self.refresh_s
        if refresh:
            touched |= set(self.positions)
            self._refreshed_s = now
        self.positions.update(reader.positions(touched, block.timestamp))
        self._evaluate(block, prices)
        self.block = block.number
        self._deliver()

    def _book(
        self, prices: Mapping[str, Fraction], at: int
    ) -> dict[str, tuple[dict[str, int], int]]:
        assert self.plan is not None
        rules, keys = self.plan.rules, self.plan.keys
        return {
            account: (p.values(prices, keys), p.debt(at, rules))
            for account, p in self.positions.items()
        }

    def _evaluate(self, block: Head, prices: Mapping[str, Fraction]) -> None:
        """Crossings at ``block``, appended to ``alerts`` in one write."""
        assert self.plan is not None
        book = self._book(prices, block.timestamp)
        now_breached = breaches(book, self.rules, product=self.plan.rules)
        found = crossings(self.breached, now_breached)
        if found:
            rows = [self._row(c, block, book) for c in found]
            frame = pl.DataFrame(rows, schema=polars_schema("alerts"))
            self._written += self.store.append("alerts", frame)
            self._flush_s = self.clock()
        self.breached = now_breached

    def _row(
        self, crossing: Crossing, block: Head, book: Mapping[str, tuple[dict[str, int], int]]
    ) -> dict[str, Any]:
        assert self.plan is not None
        rule = next(r for r in self.rules if r.name == crossing.rule)
        values, debt = book.get(crossing.subject, ({}, 0))
        value: Fraction | None = crossing.value
        if value is None and rule.kind == "health_below" and debt:
            value = figures(values, principal=debt, rules=self.plan.rules).health_factor
        chain = self.plan.chain
        key = f"{self.name}:{chain}:{crossing.rule}:{crossing.subject}:{block.number}"
        return {
            "watch": self.name,
            "chain": chain,
            "rule": crossing.rule,
            "subject": crossing.subject,
            "block_number": block.number,
            "alert_id": key,
            "state": crossing.state,
            "kind": rule.kind,
            "threshold": rule.threshold,
            "value": _figure(value),
            "asset": self.plan.asset,
            "debt": debt if rule.kind == "health_below" else None,
            "collateral_value": sum(values.values()) if rule.kind == "health_below" else None,
            "block_time": datetime.fromtimestamp(block.timestamp, UTC),
            "observed_at": datetime.fromtimestamp(self.clock(), UTC),
        }

    def _stored_breaches(self) -> dict[tuple[str, str], Fraction]:
        """What this watch's alerts say is in breach: the last state of each rule and subject."""
        assert self.plan is not None
        frame = self.store.query(
            "SELECT rule, subject, state, value FROM alerts WHERE watch = $w AND chain = $c "
            "QUALIFY row_number() OVER (PARTITION BY rule, subject ORDER BY block_number DESC) = 1",
            {"w": self.name, "c": self.plan.chain},
        )
        return {
            (rule, subject): Fraction(value if value is not None else 0)
            for rule, subject, state, value in frame.iter_rows()
            if state == "breached"
        }

    # -- the webhook ---------------------------------------------------------------------

    def _deliver(self) -> None:
        """Post every alert of this watch not yet delivered, oldest first, stopping at the
        first the webhook does not take (order kept; the next poll tries again); each
        attempt appended to ``alert_deliveries`` in one write."""
        if self.webhook is None or self.plan is None:
            return
        pending = self.store.query(
            "SELECT a.*, (SELECT count(*) FROM alert_deliveries d WHERE d.alert_id = a.alert_id)"
            " AS tries FROM alerts a WHERE a.watch = $w AND a.chain = $c AND NOT EXISTS (SELECT"
            " 1 FROM alert_deliveries d WHERE d.alert_id = a.alert_id AND d.delivered)"
            " ORDER BY a.block_number, a.state, a.rule, a.subject",
            {"w": self.name, "c": self.plan.chain},
        )
        rows = []
        for alert in pending.iter_rows(named=True):
            delivery = self.webhook.send(self.body(alert))
            rows.append(
                {
                    "alert_id": alert["alert_id"],
                    "attempt": int(alert["tries"]) + 1,
                    "delivered": delivery.delivered,
                    "status": delivery.status,
                    "sent_at": datetime.fromtimestamp(self.clock(), UTC),
                    "endpoint": self.webhook.url,
                    "error": delivery.error,
                }
            )
            if not delivery.delivered:
                break
        if rows:
            frame = pl.DataFrame(rows, schema=polars_schema("alert_deliveries"))
            self.store.append("alert_deliveries", frame)
            self._flush_s = self.clock()
        self._undelivered = pending.height - sum(1 for r in rows if r["delivered"])

    def body(self, alert: Mapping[str, Any]) -> dict[str, Any]:
        """The webhook's JSON body of an ``alerts`` row (module docstring): no URL, no key."""
        assert self.plan is not None
        decimals = self.plan.asset_decimals
        when: datetime = alert["block_time"]
        value, threshold = alert["value"], alert["threshold"]
        return {
            "alert_id": alert["alert_id"],
            "watch": alert["watch"],
            "chain": alert["chain"],
            "rule": alert["rule"],
            "kind": alert["kind"],
            "subject": alert["subject"],
            "state": alert["state"],
            "block_number": alert["block_number"],
            "block_time": when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "asset": alert["asset"],
            "threshold": str(Decimal(threshold).normalize()),
            "value": None if value is None else str(value),
            "debt": _human(alert["debt"], decimals),
            "collateral_value": _human(alert["collateral_value"], decimals),
        }

    # -- for a notebook ------------------------------------------------------------------

    def run(self, *, polls: int | None = None, duration_s: float | None = None) -> WatchStatus:
        """Poll every ``cadence_s`` on the watch's clock until ``polls`` polls or
        ``duration_s`` seconds (one of them); the last status. ``toolkit watch`` runs the
        watch itself (``name``, ``cadence_s``, :meth:`poll`)."""
        if (polls is None) == (duration_s is None):
            raise ValueError("polls: give polls or duration_s, not both")
        deadline = (
            None if duration_s is None else self.clock() + number(duration_s, "duration_s", above=0)
        )
        done = 0
        while True:
            started = self.clock()
            self.poll(started)
            done += 1
            if (polls is not None and done >= whole(polls, "polls", minimum=1)) or (
                deadline is not None and self.clock() >= deadline
            ):
                return self.status
            wait = started + self.cadence_s - self.clock()
            if wait > 0:
                self.clock.sleep(wait)
