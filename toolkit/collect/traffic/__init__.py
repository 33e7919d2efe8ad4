"""Other users' order flow, swaps and credit activity on a live embedded service, so that
collectors observe a market.

A :class:`Traffic` thread replays an order-flow frame (the backtests' flow: one row per RFQ with
``t``, route, token, amount, type, ``converts`` and ``convert_delay``; see
:func:`toolkit.backtest.generate_flow`) against an embedded service, in-process or served over
HTTP (``toolkit serve --traffic``), on the client's clock: each
RFQ at its time, and each converting quote ``convert_delay`` later through the transaction
endpoint, then on chain as a user would: the development account that asked approves the escrow
once per token and sends the ``open()`` transaction with ``eth_sendTransaction``. The escrow's
``Open`` event reaches the engine, the service's filler fills on the destination chain and the
escrow settles, so reservations are made, converted, filled and released at the scenario's
rates, and the liquidity stream carries what a real market would.

Optional swap and credit flows (:func:`toolkit.backtest.generate_swap_flow` and
:func:`toolkit.backtest.generate_credit_flow`) join the same time-ordered schedule. A swap asks
the swap endpoint for a route, approves the route's ``target`` for ``tokenIn`` (a plain ERC-20
allowance, once per account, token and spender) and sends the route's ``callData``. A credit
action (lock, draw, repay, unlock) asks the credit endpoint for its calls and sends them. Both
send from the development accounts with ``eth_sendTransaction``; their receipts are read a
couple of blocks later on the same schedule, so a reverted swap or call is counted without
the thread waiting for a block.

It is never used against a real service, and its requests are not recorded: they are the
market the collectors observe, not observations. What it did is counted (:attr:`counts`), so
a report can set the collectors' own requests against it.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
from collections import Counter
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import httpx
import polars as pl
from hexbytes import HexBytes
from web3 import Web3
from web3.exceptions import TransactionNotFound
from web3.types import Wei

from toolkit.arguments import ArgumentError
from toolkit.client import (
    EmbeddedService,
    RetryPolicy,
    ServiceClient,
    ServiceError,
    SwapClient,
    TransportError,
    chain_web3,
)
from toolkit.client.config import resolve_base_url
from toolkit.client.credit import CreditClient
from toolkit.clock import WALL, Clock
from toolkit.codecs.functions import encode_call
from toolkit.resources import Quote
from toolkit.scenario import Scenario, Secret, load_scenario
from toolkit.world.chain.accounts import DEV_ACCOUNTS
from toolkit.world.chain.markets import MARKET_CHAINS, Market, market_for

__all__ = ["CREDIT_FLOW_COLUMNS", "FLOW_COLUMNS", "SWAP_FLOW_COLUMNS", "Traffic"]

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
#: The columns of a swap flow that traffic reads (see :func:`toolkit.backtest.generate_swap_flow`).
SWAP_FLOW_COLUMNS = ("t", "chain", "token_in", "token_out", "amount_in")
#: The columns of a credit flow that traffic reads (see
#: :func:`toolkit.backtest.generate_credit_flow`).
CREDIT_FLOW_COLUMNS = ("t", "borrower", "action", "amount")
#: What a credit flow's borrowers do (the rows' ``action``).
CREDIT_ACTIONS = ("lock", "draw", "repay", "unlock")
#: Gas sent with each transaction: above what approve and ``open()`` use on the simulated chains.
GAS = 500_000
MAX_APPROVAL = 2**256 - 1
#: Seconds behind schedule after which a step counts as ``late`` (the thread cannot keep up).
LATE = 1.0
#: Blocks after which a sent swap's or credit call's receipt is read, and how often it is read
#: again while the transaction is not mined yet.
RECEIPT_BLOCKS = 2
RECEIPT_TRIES = 10
#: The longest single wait, in clock seconds: how soon a waiting thread sees :meth:`Traffic.stop`.
WAIT_SLICE = 1.0


class Traffic:
    """A daemon thread replaying ``flow`` (and the optional ``swaps`` and ``credit`` flows)
    against ``embedded``, or the embedded service served at ``base_url`` (exactly one of the
    two), on ``clock`` (default: the service's own clock in-process, the wall clock over HTTP).

    Flow times are seconds from :meth:`start`; tokens are symbols of ``scenario`` (a Scenario,
    or a name or path to load; default in-process: the scenario the service runs; required
    with ``base_url``, whose requests carry the scenario's first API key). Users are the
    chains' development accounts (``eth_accounts``), taken in turn for RFQs and swaps; credit
    borrower ``i`` is development account ``i``. A step that falls due while the thread is
    still busy runs at once (counted as ``late`` when more than :data:`LATE` seconds behind).

    :attr:`counts` holds ``rfq``, ``quoted`` and ``opened`` for the order flow; ``swap_quoted``,
    ``swap_sent`` and ``swap_reverted`` for swaps; ``credit_<action>`` (actions whose calls were
    sent), ``credit_calls`` and ``credit_reverted`` for credit; refusals by endpoint and status
    (``rfq 404``, ``swap 400``, ``credit draw 400``, ...); ``unreachable`` when a served service
    stopped answering (the thread then ends).

    >>> import polars as pl
    >>> from toolkit.client import ServiceClient
    >>> from toolkit.clock import ScaledClock
    >>> flow = pl.DataFrame({"t": [0.0, 1.0], "src_chain": [8453, 1], "dst_chain": [1, 8453],
    ...     "token": ["USDC", "USDC"], "amount": [10**9, 10**9],
    ...     "type": ["ExactOutput", "ExactInput"], "converts": [True, False],
    ...     "convert_delay": [1.0, 0.0]})
    >>> swaps = pl.DataFrame({"t": [0.5], "chain": [8453], "token_in": ["USDC"],
    ...     "token_out": ["WETH"], "amount_in": [2_000 * 10**6]})
    >>> credit = pl.DataFrame({"t": [0.0, 30.0], "borrower": [0, 0], "action": ["lock", "draw"],
    ...     "amount": [1_000 * 10**6, 100 * 10**6]})
    >>> with ServiceClient(clock=ScaledClock(50.0)) as fast:
    ...     with Traffic(fast.embedded, flow, swaps=swaps, credit=credit) as traffic:
    ...         traffic.join(timeout=20)
    >>> traffic.counts["rfq"], traffic.counts["quoted"], traffic.counts["opened"]
    (2, 2, 1)
    >>> traffic.counts["swap_sent"], traffic.counts["credit_draw"], traffic.counts["credit_calls"]
    (1, 1, 3)
    """

    def __init__(
        self,
        embedded: EmbeddedService | None = None,
        flow: pl.DataFrame | None = None,
        *,
        base_url: str | None = None,
        swaps: pl.DataFrame | None = None,
        credit: pl.DataFrame | None = None,
        scenario: Scenario | str | os.PathLike[str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        if embedded is not None and base_url is not None:
            raise ValueError("base_url: give an embedded service or the base_url of one, not both")
        if base_url is not None:
            url = resolve_base_url(base_url, env={})
            assert url is not None  # a URL was given
            if scenario is None:
                raise ValueError(
                    "scenario: give the Scenario (or its name) the service at base_url runs"
                )
            scenario = load_scenario(scenario)
            self.target = _Target(url, scenario.auth.api_keys[0], WALL if clock is None else clock)
        else:
            if not isinstance(embedded, EmbeddedService):
                raise ValueError(
                    "embedded: traffic is only driven into the embedded service (in-process, "
                    "or served: give its base_url)"
                )
            scenario = embedded.scenario if scenario is None else load_scenario(scenario)
            if not isinstance(scenario, Scenario):
                raise ValueError(
                    "scenario: give the Scenario the service runs (its tokens' addresses)"
                )
            self.target = _Target(embedded, None, embedded.clock if clock is None else clock)
        self.embedded = embedded
        self.base_url = self.target.base_url
        self.scenario = scenario
        self.clock: Clock = self.target.clock
        self.flow = _frame(flow, "flow", FLOW_COLUMNS, "toolkit.backtest.generate_flow")
        self.swaps = _frame(
            swaps, "swaps", SWAP_FLOW_COLUMNS, "toolkit.backtest.generate_swap_flow"
        )
        self.credit = _frame(
            credit, "credit", CREDIT_FLOW_COLUMNS, "toolkit.backtest.generate_credit_flow"
        )
        self._markets = _check_swaps(self.swaps, scenario)
        self._credit = _check_credit(self.credit, scenario)
        self.counts: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._approved: set[tuple[int, str, str, str]] = set()
        self._chains: dict[int, Web3] = {}
        self._block_time = {chain.id: chain.block_time for chain in scenario.chains}

    def __repr__(self) -> str:
        return f"Traffic({self.base_url!r}, {self.scenario.name!r})"

    # -- the loop ------------------------------------------------------------------------------

    def _schedule(self) -> Iterator[tuple[float, int, str, Any]]:
        """The flows' rows as ``(due, 0, kind, row)`` in time order, each read from its frame
        when its turn comes (a day of flow at scale is millions of rows: heaping them all first
        would hold the start up for seconds)."""
        start = self.clock()

        def rows(kind: str, frame: pl.DataFrame) -> Iterator[tuple[float, int, str, Any]]:
            for row in frame.iter_rows(named=True):
                yield start + float(row["t"]), 0, kind, row

        streams = [rows("rfq", self.flow), rows("swap", self.swaps), rows("credit", self.credit)]
        return heapq.merge(*streams, key=lambda item: item[0])

    def _run(self) -> None:
        if self.flow.is_empty() and self.swaps.is_empty() and self.credit.is_empty():
            return
        try:
            self._play()
        except (TransportError, httpx.TransportError):
            # Only a served service goes away (``toolkit serve`` stopping): the market ends.
            self.counts["unreachable"] += 1
        finally:
            for w3 in self._chains.values():
                w3.provider.close()  # type: ignore[attr-defined]  # a ChainProvider
            self._chains.clear()

    def _play(self) -> None:
        flows = self._schedule()
        upcoming = next(flows, None)
        # Steps the played ones lead to (an order to open, a receipt to read), in time order.
        later: list[tuple[float, int, str, Any]] = []
        order = itertools.count(1)
        accounts = self._chain(self.scenario.chains[0].id).eth.accounts
        users = itertools.cycle(accounts)
        with self.target.service() as client, self.target.swap() as swaps:
            credit = CreditClient(client)
            while (upcoming is not None or later) and not self._stop.is_set():
                if upcoming is not None and (not later or upcoming[0] <= later[0][0]):
                    at, _, kind, payload = upcoming
                    upcoming = next(flows, None)
                else:
                    at, _, kind, payload = heapq.heappop(later)
                wait = at - self.clock()
                if wait > 0:
                    self._wait(wait)
                elif wait < -LATE:
                    self.counts["late"] += 1
                if self._stop.is_set():
                    break
                steps: list[tuple[float, str, Any]] = []
                if kind == "rfq":
                    quote = self._rfq(client, payload, next(users))
                    if quote is not None and payload["converts"]:
                        steps.append((float(payload["convert_delay"]), "open", quote))
                elif kind == "open":
                    self._open(client, payload)
                elif kind == "swap":
                    steps.extend(self._swap(swaps, payload, next(users)))
                elif kind == "credit":
                    account = accounts[int(payload["borrower"])]
                    steps.extend(self._credit_action(credit, payload, account))
                else:
                    steps.extend(self._receipt(*payload))
                for delay, step, item in steps:
                    heapq.heappush(later, (self.clock() + delay, next(order), step, item))

    def _wait(self, seconds: float) -> None:
        """Sleep ``seconds`` on the clock, in slices of :data:`WAIT_SLICE`, until stopped."""
        end = self.clock() + seconds
        while not self._stop.is_set():
            left = end - self.clock()
            if left <= 0:
                return
            self.clock.sleep(min(left, WAIT_SLICE))

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
        value = int(request.value, 16)
        if self._send(w3, sender, escrow, request.data, value, GAS, "open") is None:
            return
        self.counts["opened"] += 1

    def _swap(
        self, swaps: SwapClient, row: dict[str, Any], user: str
    ) -> list[tuple[float, str, Any]]:
        chain = int(row["chain"])
        tokens = self._markets[chain].tokens
        token_in = tokens[str(row["token_in"])].address
        try:
            route = swaps.route(
                MARKET_CHAINS[chain],
                amount_in=int(row["amount_in"]),
                token_in=token_in,
                token_out=tokens[str(row["token_out"])].address,
            )
        except ServiceError as exc:
            self.counts[f"swap {exc.status}"] += 1
            return []
        self.counts["swap_quoted"] += 1
        w3 = self._chain(chain)
        target = Web3.to_checksum_address(route.target)
        self._approve(w3, chain, user, token_in, target)
        sent = self._send(w3, user, target, route.call_data, 0, route.gas_limit, "swap")
        if sent is None:
            return []
        self.counts["swap_sent"] += 1
        return [self._receipt_due(chain, sent, "swap_reverted")]

    def _credit_action(
        self, credit: CreditClient, row: dict[str, Any], account: str
    ) -> list[tuple[float, str, Any]]:
        action, amount = str(row["action"]), int(row["amount"])
        asset = self._credit
        try:
            if action == "lock":
                calls = credit.lock(account, amount, asset)
            elif action == "draw":
                calls = credit.draw(account, amount, account)
            elif action == "repay":
                calls = credit.repay(account, amount)
            else:
                calls = credit.unlock(account, amount, asset)
        except ServiceError as exc:
            self.counts[f"credit {action} {exc.status}"] += 1
            return []
        later: list[tuple[float, str, Any]] = []
        for call in calls:
            w3 = self._chain(call.chain_id)
            to = Web3.to_checksum_address(call.to)
            sent = self._send(w3, account, to, call.data, int(call.value), GAS, "credit")
            if sent is None:
                return later  # the later calls of the action depend on this one
            self.counts["credit_calls"] += 1
            later.append(self._receipt_due(call.chain_id, sent, "credit_reverted"))
        self.counts[f"credit_{action}"] += 1
        return later

    def _send(
        self, w3: Web3, sender: str, to: str, data: str, value: int, gas: int, what: str
    ) -> HexBytes | None:
        """Send a transaction as ``sender`` (a development account): its hash, or None (counted
        as ``<what> refused``) when the node refuses it."""
        try:
            return w3.eth.send_transaction(
                {"from": sender, "to": to, "data": data, "value": Wei(value), "gas": gas}  # type: ignore[typeddict-item]
            )
        except ValueError as exc:  # a JSON-RPC error: the user's transaction was refused
            self.counts[f"{what} refused"] += 1
            self.counts[f"{what} refused: {exc}"[:80]] += 1
            return None

    def _receipt_due(
        self, chain_id: int, tx_hash: HexBytes, counter: str
    ) -> tuple[float, str, Any]:
        return (
            RECEIPT_BLOCKS * self._block_time[chain_id],
            "receipt",
            (chain_id, tx_hash, counter, 1),
        )

    def _receipt(
        self, chain_id: int, tx_hash: HexBytes, counter: str, tries: int
    ) -> list[tuple[float, str, Any]]:
        """Count ``counter`` when the transaction reverted; read again a block later while it is
        not mined (``unmined`` after :data:`RECEIPT_TRIES` reads)."""
        try:
            receipt = self._chain(chain_id).eth.get_transaction_receipt(tx_hash)
        except TransactionNotFound:
            if tries >= RECEIPT_TRIES:
                self.counts["unmined"] += 1
                return []
            again = (chain_id, tx_hash, counter, tries + 1)
            return [(self._block_time[chain_id], "receipt", again)]
        if receipt["status"] != 1:
            self.counts[counter] += 1
        return []

    def _approve(self, w3: Web3, chain_id: int, owner: str, token: str, spender: str) -> None:
        # The chain id is known: no eth_chainId round trip.
        key = (chain_id, owner, token.lower(), spender.lower())
        if key in self._approved:
            return
        data = encode_call("erc20.approve", spender, MAX_APPROVAL)
        w3.eth.send_transaction({"from": owner, "to": token, "data": data, "gas": GAS})  # type: ignore[typeddict-item]
        self._approved.add(key)

    def _chain(self, chain_id: int) -> Web3:
        if chain_id not in self._chains:
            self._chains[chain_id] = self.target.chain(chain_id)
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


class _Target:
    """Where traffic goes, and the one place its clients are built: an embedded service
    in-process, or one served at a base URL (``{base_url}``, ``{base_url}/swap`` and
    ``{base_url}/rpc/{chainId}``) with ``key``, which only the clients see."""

    def __init__(self, service: EmbeddedService | str, key: Secret | None, clock: Clock) -> None:
        self.embedded = service if isinstance(service, EmbeddedService) else None
        self.base_url = service.base_url if isinstance(service, EmbeddedService) else service
        self._key = key
        self.clock = clock

    def service(self) -> ServiceClient:
        """The main surface's client (no retries: a refusal is part of the market)."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return ServiceClient(embedded=self.embedded, clock=self.clock, retry=retry)
        return ServiceClient(
            self.base_url, api_key=self._key, env={}, clock=self.clock, retry=retry
        )

    def swap(self) -> SwapClient:
        """The swap surface's client."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return SwapClient(embedded=self.embedded, env={}, clock=self.clock, retry=retry)
        url = f"{self.base_url}/swap"
        return SwapClient(url, api_key=self._key, env={}, clock=self.clock, retry=retry)

    def chain(self, chain_id: int) -> Web3:
        """``Web3`` on chain ``chain_id`` of the service (no retries either: a node that does
        not answer is a service that went away)."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return chain_web3(chain_id, embedded=self.embedded, retry=retry)
        return chain_web3(chain_id, url=f"{self.base_url}/rpc/{chain_id}", retry=retry)


def _frame(
    frame: pl.DataFrame | None, name: str, columns: tuple[str, ...], generator: str
) -> pl.DataFrame:
    """``frame``'s ``columns``, sorted by ``t`` (an empty frame for None)."""
    if frame is None:
        return pl.DataFrame(schema=list(columns))
    if not isinstance(frame, pl.DataFrame):
        raise ValueError(f"{name}: must be a polars DataFrame (see {generator})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)}")
    out = frame.select(columns)
    t = out["t"]
    if not t.dtype.is_numeric():
        raise ArgumentError(f"{name}.t", "seconds from the start (numbers)", str(t.dtype))
    bad = out.filter(pl.col("t").is_null() | ~pl.col("t").cast(pl.Float64).is_finite())
    bad = bad if not bad.is_empty() else out.filter(pl.col("t") < 0)
    if not bad.is_empty():
        raise ArgumentError(f"{name}.t", "finite seconds >= 0", bad["t"][0])
    return out.sort("t")


def _integers(
    frame: pl.DataFrame, name: str, column: str, minimum: int, maximum: int | None, rule: str
) -> None:
    values = frame[column]
    if not values.dtype.is_integer():
        raise ArgumentError(f"{name}.{column}", rule, str(values.dtype))
    low = values.is_null() | (values < minimum)
    bad = values.filter(low if maximum is None else low | (values > maximum))
    if len(bad):
        raise ArgumentError(f"{name}.{column}", rule, bad[0])


def _check_swaps(swaps: pl.DataFrame, scenario: Scenario) -> dict[int, Market]:
    """The market of every chain ``swaps`` trades on, each row's tokens checked against it."""
    if swaps.is_empty():
        return {}
    _integers(swaps, "swaps", "chain", 1, None, "a chain id")
    _integers(swaps, "swaps", "amount_in", 1, None, "an integer >= 1 (smallest units)")
    markets: dict[int, Market] = {}
    for chain in swaps["chain"].unique().sort().to_list():
        market = market_for(scenario, chain) if chain in MARKET_CHAINS else None
        if market is None:
            names = ", ".join(f"{c} ({n})" for c, n in sorted(MARKET_CHAINS.items()))
            raise ArgumentError("swaps.chain", f"a chain with an AMM market: {names}", chain)
        markets[chain] = market
    for column in ("token_in", "token_out"):
        for chain, symbol in swaps.select("chain", column).unique().sort("chain", column).rows():
            tokens = markets[chain].tokens
            if symbol not in tokens:
                rule = f"a token of the {MARKET_CHAINS[chain]} market ({', '.join(sorted(tokens))})"
                raise ArgumentError(f"swaps.{column}", rule, symbol)
    same = swaps.filter(pl.col("token_in") == pl.col("token_out"))
    if not same.is_empty():
        raise ArgumentError("swaps.token_out", "another token than token_in", same["token_out"][0])
    return markets


def _check_credit(credit: pl.DataFrame, scenario: Scenario) -> str:
    """The credit asset's address; every row of ``credit`` checked."""
    if credit.is_empty():
        return ""
    if scenario.credit is None:
        raise ValueError(f"credit: scenario {scenario.name!r} has no credit product")
    actions = credit["action"]
    bad = actions.filter(actions.is_null() | ~actions.cast(pl.String).is_in(CREDIT_ACTIONS))
    if len(bad):
        raise ArgumentError("credit.action", f"one of {', '.join(CREDIT_ACTIONS)}", bad[0])
    rule = f"the index of a development account, 0 to {DEV_ACCOUNTS - 1}"
    _integers(credit, "credit", "borrower", 0, DEV_ACCOUNTS - 1, rule)
    _integers(credit, "credit", "amount", 1, None, "an integer >= 1 (smallest units)")
    return scenario.credit.asset_address
