"""The thread: :class:`Traffic` checks its flows, then plays them on its clock as they fall due,
each step followed by the steps it leads to; it counts what it did and ends with the flows, on
:meth:`Traffic.stop`, or when a served service goes away."""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections import Counter
from types import TracebackType
from typing import Any

import httpx
import polars as pl
from hexbytes import HexBytes
from web3 import Web3

from toolkit.client import EmbeddedService, TransportError
from toolkit.client.credit import CreditClient
from toolkit.client.target import check_url
from toolkit.clock import WALL, Clock
from toolkit.flows import (
    CREDIT_FLOW_COLUMNS,
    FLOW_COLUMNS,
    SWAP_FLOW_COLUMNS,
    check_credit,
    check_swaps,
    checked_frame,
)
from toolkit.resources import Quote
from toolkit.scenario import Scenario, load_scenario
from toolkit.scheduler import Handler, Scheduler
from toolkit.simulate.traffic.actions import Actions
from toolkit.simulate.traffic.clients import TrafficClients
from toolkit.simulate.traffic.schedule import feed_rows

__all__ = ["LATE_S", "WAIT_SLICE_S", "Traffic"]

#: Seconds behind schedule after which a step counts as ``late`` (the thread cannot keep up).
LATE_S = 1.0
#: The longest single wait, in clock seconds: how soon a waiting thread sees :meth:`Traffic.stop`.
WAIT_SLICE_S = 1.0


class Traffic(Actions):
    """A daemon thread replaying ``flow`` (and the optional ``swaps`` and ``credit`` flows)
    against ``embedded``, or the embedded service served at ``base_url`` (exactly one of the
    two), on ``clock`` (default: the service's own clock in-process, the wall clock over HTTP).

    Flow times are seconds from :meth:`start`; tokens are symbols of ``scenario`` (a Scenario,
    or a name or path to load; default in-process: the scenario the service runs; required
    with ``base_url``, whose requests carry the scenario's first API key). Users are the
    chains' development accounts (``eth_accounts``), taken in turn for RFQs and swaps; credit
    borrower ``i`` is development account ``i``. A step that falls due while the thread is
    still busy runs at once (counted as ``late`` when more than :data:`LATE_S` seconds behind).

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
    >>> with ServiceClient(embedded=True, clock=ScaledClock(50.0)) as fast:
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
            url = check_url(base_url, "base_url")
            if scenario is None:
                raise ValueError(
                    "scenario: give the Scenario (or its name) the service at base_url runs"
                )
            scenario = load_scenario(scenario, env=os.environ)  # its key may be TOOLKIT_API_KEY
            self.target = TrafficClients(
                url, scenario.auth.api_keys[0], WALL if clock is None else clock
            )
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
            self.target = TrafficClients(embedded, None, embedded.clock if clock is None else clock)
        self.embedded = embedded
        self.base_url = self.target.base_url
        self.scenario = scenario
        self.clock: Clock = self.target.clock
        self.flow = checked_frame(flow, "flow", FLOW_COLUMNS, "toolkit.backtest.generate_flow")
        self.swaps = checked_frame(
            swaps, "swaps", SWAP_FLOW_COLUMNS, "toolkit.backtest.generate_swap_flow"
        )
        self.credit = checked_frame(
            credit, "credit", CREDIT_FLOW_COLUMNS, "toolkit.backtest.generate_credit_flow"
        )
        self._markets = check_swaps(self.swaps, scenario)
        self._credit = check_credit(self.credit, scenario)
        self.counts: Counter[str] = Counter()
        self.outcomes: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._approved: set[tuple[int, str, str, str]] = set()
        self._chains: dict[int, Web3] = {}
        self._block_time = {chain.id: chain.block_time_s for chain in scenario.chains}

    def __repr__(self) -> str:
        return f"Traffic({self.base_url!r}, {self.scenario.name!r})"

    # -- the loop ------------------------------------------------------------------------------

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
        # The flows' rows and the steps they lead to (an order to open, a receipt to read) on
        # one scheduler, its instants clock times; between steps the thread waits on its clock.
        start = self.clock()
        self._scheduler = sched = Scheduler(start)
        self._accounts = accounts = self._chain(self.scenario.chains[0].id).eth.accounts
        self._users = itertools.cycle(accounts)
        feed_rows(sched, start, self.flow, self._on_rfq)
        feed_rows(sched, start, self.swaps, self._on_swap)
        feed_rows(sched, start, self.credit, self._on_credit)
        with self.target.service() as client, self.target.swap() as swaps:
            self._client, self._swaps_client = client, swaps
            self._credit_client = CreditClient(client)
            while sched.peek() < math.inf and not self._stop.is_set():
                wait = sched.peek() - self.clock()
                if wait > 0:
                    self._wait(wait)
                elif wait < -LATE_S:
                    self.counts["late"] += 1
                if self._stop.is_set():
                    break
                sched.step()

    # -- one handler per kind of step ----------------------------------------------------------

    def _on_rfq(self, at: float, row: dict[str, Any]) -> None:
        quote = self._rfq(self._client, row, next(self._users))
        if quote is not None and row["converts"]:
            self._then([(float(row["convert_delay"]), "open", quote)])

    def _on_open(self, at: float, quote: Quote) -> None:
        self._open(self._client, quote)

    def _on_swap(self, at: float, row: dict[str, Any]) -> None:
        self._then(self._swap(self._swaps_client, row, next(self._users)))

    def _on_credit(self, at: float, row: dict[str, Any]) -> None:
        account = self._accounts[int(row["borrower"])]
        self._then(self._credit_action(self._credit_client, row, account))

    def _on_receipt(self, at: float, payload: tuple[int, HexBytes, str, int]) -> None:
        self._then(self._receipt(*payload))

    def _then(self, steps: list[tuple[float, str, Any]]) -> None:
        """Schedule the steps a step leads to, ``delay`` clock seconds from now (never before
        the step that led to them, should the clock read a hair early or step back)."""
        handlers: dict[str, Handler] = {"open": self._on_open, "receipt": self._on_receipt}
        sched = self._scheduler
        for delay, step, item in steps:
            sched.schedule(max(self.clock() + delay, sched.now), handlers[step], item)

    def _wait(self, seconds: float) -> None:
        """Sleep ``seconds`` on the clock, in slices of :data:`WAIT_SLICE_S`, until stopped."""
        end = self.clock() + seconds
        while not self._stop.is_set():
            left = end - self.clock()
            if left <= 0:
                return
            self.clock.sleep(min(left, WAIT_SLICE_S))

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
