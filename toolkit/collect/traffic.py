"""Other users' order flow on a live embedded service, so that collectors observe a market.

A :class:`Traffic` thread replays an order-flow frame (the backtests' flow: one row per RFQ with
``t``, route, token, amount, type, ``converts`` and ``convert_delay``; see
:func:`toolkit.backtest.generate_flow`) against an embedded service on the client's clock: each
RFQ at its time, and each converting quote ``convert_delay`` later through the transaction
endpoint, then on chain as a user would: the development account that asked approves the escrow
once per token and sends the ``open()`` transaction with ``eth_sendTransaction``. The escrow's
``Open`` event reaches the engine, the service's filler fills on the destination chain and the
escrow settles, so reservations are made, converted, filled and released at the scenario's
rates, and the liquidity stream carries what a real market would.

It is never used against a real service, and its requests are not recorded: they are the
market the collectors observe, not observations. What it did is counted (:attr:`counts`), so
a report can set the collectors' own requests against it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import Counter
from types import TracebackType
from typing import Any

import polars as pl
from web3 import Web3
from web3.types import Wei

from toolkit.client import (
    EmbeddedService,
    RetryPolicy,
    ServiceClient,
    ServiceError,
    chain_web3,
)
from toolkit.clock import Clock
from toolkit.codecs.functions import encode_call
from toolkit.resources import Quote
from toolkit.scenario import Scenario

__all__ = ["FLOW_COLUMNS", "Traffic"]

#: The columns of a flow frame that traffic reads.
FLOW_COLUMNS = (
    "t",
    "src_chain",
    "dst_chain",
    "token",
    "amount",
    "type",
    "converts",
    "convert_delay",
)
#: Gas sent with each transaction: above what approve and ``open()`` use on the simulated chains.
GAS = 500_000
MAX_APPROVAL = 2**256 - 1
#: Seconds behind schedule after which a step counts as ``late`` (the thread cannot keep up).
LATE = 1.0


class Traffic:
    """A daemon thread replaying ``flow`` against ``embedded`` on ``clock`` (default: the
    service's own clock).

    ``flow`` times are seconds from :meth:`start`; tokens are symbols of ``scenario`` (default:
    the scenario the service runs). Users are the chains' development accounts
    (``eth_accounts``), taken in turn. A step that falls due while the thread is still busy
    runs at once (counted as ``late`` when more than :data:`LATE` seconds behind).

    >>> import polars as pl
    >>> from toolkit.client import ServiceClient
    >>> from toolkit.clock import ScaledClock
    >>> flow = pl.DataFrame({"t": [0.0, 1.0], "src_chain": [8453, 1], "dst_chain": [1, 8453],
    ...     "token": ["USDC", "USDC"], "amount": [10**9, 10**9],
    ...     "type": ["ExactOutput", "ExactInput"], "converts": [True, False],
    ...     "convert_delay": [1.0, 0.0]})
    >>> with ServiceClient(clock=ScaledClock(50.0)) as fast:
    ...     with Traffic(fast.embedded, flow) as traffic:
    ...         traffic.join(timeout=20)
    >>> traffic.counts["rfq"], traffic.counts["quoted"], traffic.counts["opened"]
    (2, 2, 1)
    """

    def __init__(
        self,
        embedded: EmbeddedService,
        flow: pl.DataFrame,
        *,
        scenario: Scenario | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(embedded, EmbeddedService):
            raise ValueError("embedded: traffic is only driven into the embedded service")
        if not isinstance(flow, pl.DataFrame):
            raise ValueError(
                "flow: must be a polars DataFrame (see toolkit.backtest.generate_flow)"
            )
        missing = [c for c in FLOW_COLUMNS if c not in flow.columns]
        if missing:
            raise ValueError(f"flow: missing column(s) {', '.join(missing)}")
        scenario = embedded.scenario if scenario is None else scenario
        if not isinstance(scenario, Scenario):
            raise ValueError("scenario: give the Scenario the service runs (its tokens' addresses)")
        self.embedded = embedded
        self.scenario = scenario
        self.clock: Clock = embedded.clock if clock is None else clock
        self.flow = flow.select(FLOW_COLUMNS).sort("t")
        self.counts: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._approved: set[tuple[int, str, str]] = set()
        self._chains: dict[int, Web3] = {}

    # -- the loop ------------------------------------------------------------------------------

    def _run(self) -> None:
        if self.flow.is_empty():
            return
        start = self.clock()
        order = itertools.count()
        due: list[tuple[float, int, str, Any]] = []
        for row in self.flow.iter_rows(named=True):
            heapq.heappush(due, (start + float(row["t"]), next(order), "rfq", row))
        users = itertools.cycle(self._chain(int(self.flow["src_chain"][0])).eth.accounts)
        with ServiceClient(
            embedded=self.embedded, clock=self.clock, retry=RetryPolicy.no_retries()
        ) as client:
            while due and not self._stop.is_set():
                at, _, kind, payload = heapq.heappop(due)
                wait = at - self.clock()
                if wait > 0:
                    self.clock.sleep(wait)
                elif wait < -LATE:
                    self.counts["late"] += 1
                if self._stop.is_set():
                    break
                if kind == "rfq":
                    quote = self._rfq(client, payload, next(users))
                    if quote is not None and payload["converts"]:
                        then = self.clock() + float(payload["convert_delay"])
                        heapq.heappush(due, (then, next(order), "open", quote))
                else:
                    self._open(client, payload)

    def _rfq(self, client: ServiceClient, row: dict[str, Any], user: str) -> Quote | None:
        self.counts["rfq"] += 1
        src, dst, symbol = int(row["src_chain"]), int(row["dst_chain"]), str(row["token"])
        try:
            quote = client.rfq(
                src_chain=src,
                dst_chain=dst,
                amount=int(row["amount"]),
                token=self.scenario.token(dst, symbol).address,
                src_token=self.scenario.token(src, symbol).address,
                user=user,
                type=row["type"],
            )
        except ServiceError as exc:
            self.counts[f"rfq {exc.status}"] += 1
            return None
        self.counts["quoted"] += 1
        return quote

    def _open(self, client: ServiceClient, quote: Quote) -> None:
        try:
            built = client.transaction(quote)
        except ServiceError as exc:
            self.counts[f"transaction {exc.status}"] += 1
            return
        request = built.transaction_request
        assert request is not None  # the transaction endpoint always builds it
        w3 = self._chain(request.chain_id)
        sender = Web3.to_checksum_address(request.from_)
        escrow = Web3.to_checksum_address(request.to)
        for item in built.preview.inputs:
            self._approve(w3, request.chain_id, sender, item.asset_address, escrow)
        try:
            w3.eth.send_transaction(
                {
                    "from": sender,
                    "to": escrow,
                    "data": request.data,  # type: ignore[typeddict-item]
                    "value": Wei(int(request.value, 16)),
                    "gas": GAS,
                }
            )
        except ValueError as exc:  # a JSON-RPC error: the user's transaction was refused
            self.counts["open refused"] += 1
            self.counts[f"open refused: {exc}"[:80]] += 1
            return
        self.counts["opened"] += 1

    def _approve(self, w3: Web3, chain_id: int, owner: str, token: str, spender: str) -> None:
        key = (chain_id, owner, token)  # the chain id is known: no eth_chainId round trip
        if key in self._approved:
            return
        data = encode_call("erc20.approve", spender, MAX_APPROVAL)
        w3.eth.send_transaction({"from": owner, "to": token, "data": data, "gas": GAS})  # type: ignore[typeddict-item]
        self._approved.add(key)

    def _chain(self, chain_id: int) -> Web3:
        if chain_id not in self._chains:
            self._chains[chain_id] = chain_web3(chain_id, embedded=self.embedded)
        return self._chains[chain_id]

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Traffic:
        """Start the thread (once); flow times count from now."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="toolkit-traffic", daemon=True)
            self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        """Wait for the flow to be played out (or ``timeout`` real seconds)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        self._stop.set()
        self.join(timeout=10)

    def __enter__(self) -> Traffic:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
