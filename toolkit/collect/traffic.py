"""Background RFQ traffic against the embedded service, so that its event stream has news.

The embedded service only changes when someone asks it for quotes. When ``toolkit collect
liquidity`` follows the embedded service, a :class:`Traffic` thread meanwhile requests quotes
over the sweep's grid (and turns some into transactions, which hold their reservations for 60
s), so reservations are created and lapse and the stream carries events. It is never used
against a real service. Its requests are not recorded: they are load, not observations.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from types import TracebackType

from toolkit.arguments import number
from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient, ServiceError
from toolkit.collect.grid import GridPoint
from toolkit.collect.rfq import DEFAULT_USER

__all__ = ["Traffic"]


class Traffic:
    """A daemon thread sending one RFQ every ``interval`` seconds to an embedded service.

    Every ``transaction_every``-th successful quote is converted with the transaction endpoint.
    ``seed`` fixes the order in which grid points are drawn.

    >>> import time
    >>> from toolkit.collect import discover_routes, grid_for
    >>> grid = grid_for(discover_routes(client))
    >>> with Traffic(client.embedded, grid, interval=0.01) as traffic:
    ...     time.sleep(0.2)
    >>> traffic.sent > 0 and traffic.sent == traffic.quotes + traffic.errors
    True
    """

    def __init__(
        self,
        embedded: EmbeddedService,
        grid: Sequence[GridPoint],
        *,
        interval: float = 0.25,
        transaction_every: int = 3,
        seed: int = 0,
    ) -> None:
        if not isinstance(embedded, EmbeddedService):
            raise ValueError("embedded: traffic is only driven into the embedded service")
        if not grid:
            raise ValueError("grid: must hold at least one point")
        self.embedded = embedded
        self.grid = list(grid)
        self.interval = number(interval, "interval", above=0)
        self.transaction_every = max(1, int(transaction_every))
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sent = 0
        self.quotes = 0
        self.errors = 0

    def _loop(self) -> None:
        with ServiceClient(embedded=self.embedded, retry=RetryPolicy.no_retries()) as client:
            while not self._stop.is_set():
                point = self._rng.choice(self.grid)
                self.sent += 1
                try:
                    quote = client.rfq(
                        src_chain=point.src_chain,
                        dst_chain=point.dst_chain,
                        amount=point.amount,
                        token=point.dst_token,
                        src_token=point.src_token,
                        user=DEFAULT_USER,
                        type=point.quote_type,  # type: ignore[arg-type]
                    )
                    self.quotes += 1
                    if self.quotes % self.transaction_every == 0:
                        client.transaction(quote)
                except ServiceError:
                    self.errors += 1
                self._stop.wait(self.interval)

    def start(self) -> Traffic:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="toolkit-traffic", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> Traffic:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
