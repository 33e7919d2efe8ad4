"""Card authorizations against a real credit service: the :class:`~toolkit.models.cards.CardBackend`
that calls the service's credit endpoints and its chain's JSON-RPC, with wall-clock latencies.

:class:`ServiceCardBackend` plugs into the authorizer of :mod:`toolkit.models.cards` (pass it
as ``backend`` to :func:`~toolkit.models.cards.simulate_cards`); each step is timed with
``time.perf_counter`` around the real calls:

- ``info``: ``GET /credit/accounts/{account}/info`` (principal and interest, exact) and, for each
  collateral token the account holds, ``GET /credit/v2/assets/usdc/collateral/{chain}/{token}``
  (its price). ``/info`` alone cannot give the health factor after a draw on an account with no
  debt (its liquidation limit is then 0), so the position's per-asset values are rebuilt from
  the holdings the program keeps (``holdings``: what it locked for each card account) at those
  prices, and the authorizer applies :func:`toolkit.credit.figures` to them. The rebuilt total
  must match ``/info``'s ``totalCollateralValue`` to within a unit per asset (the prices come as
  JSON numbers): otherwise the holdings are out of date and the step fails (the swipe declines,
  fail closed).
- ``draw``: ``GET /credit/v2/accounts/{account}/assets/usdc/draw``; a 400 (beyond the remaining
  capacity) is an error of the step.
- ``include``: every call sent with ``eth_sendTransaction`` as the account (impersonated on the
  development chain, the account being its own card program here), then
  ``eth_getTransactionReceipt`` polled every ``poll`` seconds until the receipt is there; a
  reverted call is an error of the step.

**How inclusion is timed.** The service must run on the wall clock (the default of
:func:`~toolkit.server.create_app`): its chains then produce a block on their slot grid every
``block_time_s`` seconds of real time (2 s on Base), mining the pool when the slot comes. Nothing
advances the chain's clock during a run (no ``evm_mine``, no ``evm_increaseTime``), so the time
from sending a draw to seeing its receipt is a real wait for the next 2 s block plus the
polling, and the measured answer latency is what a card program on this service would see.

:func:`run_cards` answers swipes at their arrival times in wall time: the backend holds each
swipe until its arrival (``pace``; the run's time ``t`` counted from the call), and each account's
swipes are answered by its own :class:`~toolkit.models.cards.Authorizer` in its own thread, so
swipes on different accounts are in flight together as at a card program, while one account's
wait for each other (the simulation's per-account queue; its idempotency store is per account
too, an authorization id belonging to one account). Answered one after another instead, every
draw would be sent just after the block that included the previous one and wait almost a whole
block. With :func:`~toolkit.models.cards.simulate_cards` and ``pace`` off the swipes go back to
back in one thread (what the tests do).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl
from web3 import Web3

from toolkit.arguments import ArgumentError, number, whole
from toolkit.client.credit import CreditClient
from toolkit.client.errors import ServiceError
from toolkit.codecs import functions
from toolkit.credit import DEFAULT_RULES, ProductRules
from toolkit.models.cards import (
    Authorizer,
    BackendError,
    Budget,
    CardRun,
    Decision,
    Lognormal,
    Position,
    Timed,
    card_receiver,
    card_run,
)
from toolkit.resources import ContractCall

__all__ = ["Receipt", "ServiceCardBackend", "run_cards"]

_ERC20 = functions.json_abi("erc20")


@dataclass(frozen=True)
class Receipt:
    """A draw the backend saw included: its ``account``, transaction ``hash``, ``block``
    number, and the wall ``seconds`` from sending the draw to seeing its receipt."""

    account: str
    hash: str
    block: int
    seconds: float


class ServiceCardBackend:
    """The card path on a credit service (module docstring): ``credit`` reads and builds the
    calls, ``w3`` is web3.py on the credit chain (``chain_web3(8453, url=...)``), ``holdings``
    maps each card account to the collateral it locked (token address → smallest units).

    Construction reads ``/credit/protocol`` (collateral tokens and their rule keys) and each
    token's ``decimals()``, and impersonates every account for sending. Use a client without
    retries (``RetryPolicy(error_retries=0)``): a card program fails closed instead of waiting.
    """

    def __init__(
        self,
        credit: CreditClient,
        w3: Web3,
        holdings: Mapping[str, Mapping[str, int]],
        *,
        poll: float = 0.02,
        timeout_s: float = 10.0,
        pace: bool = False,
        rules: ProductRules = DEFAULT_RULES,
        asset: str = "usdc",
    ) -> None:
        self.credit, self.w3, self.rules = credit, w3, rules
        self.asset = asset.lower()
        self.poll = number(poll, "poll", above=0)
        self.timeout_s = number(timeout_s, "timeout_s", above=0)
        self.pace = pace
        self._origin: float | None = None  # perf_counter() at the run's time 0, when pacing
        self._lock = threading.Lock()
        self.chain = int(w3.eth.chain_id)
        protocol = credit.protocol().chains.get(f"eip155:{self.chain}")
        if protocol is None:
            raise ArgumentError("w3", "web3 on the credit chain", f"chain {self.chain}")
        hub = protocol.credit_hubs.get(self.asset)
        if hub is None:
            hubs = ", ".join(sorted(protocol.credit_hubs)) or "none"
            raise ArgumentError("asset", f"a credit asset of the chain ({hubs})", asset)
        self.asset_decimals = self._decimals(hub.asset_address)
        self.keys: dict[str, str] = {}  # collateral token (lower case) -> rule key
        for key, config in protocol.collateral.items():
            token = key.removeprefix("erc20:")
            rules.rule(config.symbol)  # a collateral the rules do not know fails here
            self.keys[token] = config.symbol.lower()
        self.holdings: dict[str, dict[str, int]] = {}
        self._decimals_of: dict[str, int] = {}
        for account, held in holdings.items():
            kept = {}
            for token, amount in held.items():
                lower = token.lower()
                if lower not in self.keys:
                    raise ArgumentError(
                        f"holdings[{account!r}]", "supported collateral tokens only", token
                    )
                kept[lower] = whole(amount, f"holdings[{account!r}][{token!r}]", minimum=0)
                if lower not in self._decimals_of:
                    self._decimals_of[lower] = self._decimals(token)
            self.holdings[account.lower()] = kept
            self._rpc("anvil_impersonateAccount", account)
        self.receipts: list[Receipt] = []
        #: Every step's wall seconds: ``("info" | "draw" | "include", seconds)``, errors too.
        self.timings: list[tuple[str, float]] = []

    def _decimals(self, token: str) -> int:
        contract = self.w3.eth.contract(address=Web3.to_checksum_address(token), abi=_ERC20)
        return int(contract.functions.decimals().call())

    def _rpc(self, method: str, *params: Any) -> Any:
        answer = self.w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result")

    def _units(self, text: str) -> int:
        value = Decimal(text).scaleb(self.asset_decimals)
        return int(value.to_integral_value(rounding="ROUND_FLOOR"))

    def _value(self, token: str, amount: int) -> int:
        details = self.credit.collateral(self.chain, token)
        price = Fraction(details.collateral_price_usd)  # USD per whole token (the JSON number)
        scale = Fraction(10**self.asset_decimals, 10 ** self._decimals_of[token])
        return int(amount * price * scale)

    def info(self, account: str, at: float) -> Timed[Position]:
        """The account's position from ``/info`` and its collateral's prices."""
        if self.pace:
            with self._lock:
                if self._origin is None:
                    self._origin = time.perf_counter() - at
            wait = self._origin + at - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        started = time.perf_counter()
        held = self.holdings.get(account.lower())
        try:
            if held is None:
                raise ValueError(f"no holdings recorded for {account}")
            info = self.credit.info(account)[self.asset.upper()]
            values: dict[str, int] = {}
            for token, amount in held.items():
                if amount:
                    key = self.keys[token]
                    values[key] = values.get(key, 0) + self._value(token, amount)
            reported = self._units(str(info.total_collateral_value))
            if abs(sum(values.values()) - reported) > len(values):
                raise ValueError(
                    f"holdings out of date: {sum(values.values())} rebuilt, {reported} on /info"
                )
            position = Position(
                values,
                principal=self._units(str(info.principal)),
                interest=self._units(str(info.interest)),
            )
        except (ServiceError, ValueError) as error:
            raise BackendError("info", self._took("info", started), str(error)) from error
        return Timed(position, self._took("info", started))

    def draw(self, account: str, amount: int, receiver: str, at: float) -> Timed[Sequence[object]]:
        """The calls of ``GET .../draw``."""
        started = time.perf_counter()
        try:
            calls = self.credit.draw(account, amount, receiver)
        except ServiceError as error:
            raise BackendError("draw", self._took("draw", started), str(error)) from error
        return Timed([(account, call) for call in calls], self._took("draw", started))

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        """Send the draw's calls and wait for their receipts: ``at`` plus the wall seconds until
        the last receipt was seen."""
        started = time.perf_counter()
        sent: list[tuple[str, str]] = []
        try:
            for item in calls:
                if not (isinstance(item, tuple) and len(item) == 2):
                    raise TypeError("calls: expected (account, ContractCall) pairs from draw")
                account, call = item
                if not isinstance(call, ContractCall) or int(call.chain) != self.chain:
                    raise TypeError(f"calls: expected a ContractCall on chain {self.chain}")
                tx = {
                    "from": Web3.to_checksum_address(account),
                    "to": Web3.to_checksum_address(call.to),
                    "data": call.data,
                    "value": hex(int(call.value)),
                    "gas": hex(1_000_000),
                }
                sent.append((account, self._rpc("eth_sendTransaction", tx)))
            for account, tx_hash in sent:
                receipt = self._rpc("eth_getTransactionReceipt", tx_hash)
                while receipt is None:
                    if time.perf_counter() - started > self.timeout_s:
                        raise TimeoutError(f"no receipt for {tx_hash} in {self.timeout_s} s")
                    time.sleep(self.poll)
                    receipt = self._rpc("eth_getTransactionReceipt", tx_hash)
                seconds = time.perf_counter() - started
                if receipt["status"] != "0x1":
                    raise RuntimeError(f"draw {tx_hash} reverted")
                block = int(receipt["blockNumber"], 16)
                self.receipts.append(Receipt(account, tx_hash, block, seconds))
        except (RuntimeError, TimeoutError, TypeError, ValueError) as error:
            raise BackendError("broadcast", self._took("include", started), str(error)) from error
        seconds = self._took("include", started)
        return Timed(at + seconds, seconds)

    def _took(self, step: str, started: float) -> float:
        seconds = time.perf_counter() - started
        self.timings.append((step, seconds))
        return seconds


def run_cards(
    swipes: pl.DataFrame,
    backend: ServiceCardBackend,
    *,
    budget: Budget | None = None,
    min_health_factor: float = 1.3,
    receiver: Callable[[str], str] = card_receiver,
    workers: int = 64,
) -> CardRun:
    """Answer ``swipes`` (columns ``auth_id``, ``account``, ``t``, ``amount``; ``t`` in seconds
    from now, sorted) through ``backend`` at their arrival times: each account's swipes in order
    by its own :class:`~toolkit.models.cards.Authorizer` (``min_health_factor``, ``budget``,
    ``receiver``, the backend's rules; no simulated work of the program before ``/info``), up to
    ``workers`` accounts at a time. The run takes as long as the swipes' span plus the last
    answer; the summary is :func:`~toolkit.models.cards.card_run`'s, the decisions in arrival
    order.
    """
    needed = ["auth_id", "account", "t", "amount"]
    if any(c not in swipes.columns for c in needed):
        raise ArgumentError(
            "swipes", "a frame with columns auth_id, account, t, amount", swipes.columns
        )
    if swipes.height and not swipes["t"].is_sorted():
        raise ArgumentError("swipes", "sorted by t", "a row that is not")
    whole(workers, "workers", minimum=1)
    budget = budget or Budget()
    rows = list(swipes.select(needed).iter_rows())
    by_account: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_account.setdefault(str(row[1]), []).append(i)
    decisions: list[Decision | None] = [None] * len(rows)

    def answer(indices: list[int]) -> None:
        auth = Authorizer(
            backend,
            min_health_factor=min_health_factor,
            budget=budget,
            pre=Lognormal(0.0, 0.0),
            receiver=receiver,
            rules=backend.rules,
        )
        for i in indices:
            auth_id, account, t, amount = rows[i]
            decisions[i] = auth.authorize(str(auth_id), str(account), int(amount), float(t))

    paced = backend.pace
    backend.pace, backend._origin = True, time.perf_counter()
    try:
        with ThreadPoolExecutor(min(workers, max(1, len(by_account)))) as pool:
            for done in [pool.submit(answer, indices) for indices in by_account.values()]:
                done.result()
    finally:
        backend.pace, backend._origin = paced, None
    return card_run([d for d in decisions if d is not None], backend, budget)
