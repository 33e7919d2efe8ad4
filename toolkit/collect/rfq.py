"""The RFQ sweep: every attempt into ``rfq_observations``, quotes optionally followed through
the transaction endpoint and the calldata guard into ``transactions``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from toolkit.client import Attempt, ServiceClient, ServiceError, Unauthorized
from toolkit.collect.grid import (
    GridPoint,
)
from toolkit.collect.rows import rfq_rows, transaction_row
from toolkit.collect.sweep import Sweep, SweepOptions
from toolkit.collect.writer import BatchWriter
from toolkit.resources import HexAddress, Quote, parse_value
from toolkit.store import Store

__all__ = ["DEFAULT_USER", "RfqSweep"]

#: The user (payer and receiver) the sweep quotes for: a fixed, key-less analytics address.
DEFAULT_USER = "0x00000000000000000000000000000000C011EC70"


class RfqSweep(Sweep):
    """Sweep ``GET /partner-intents/rfq`` over a grid of routes × amounts × quote types.

    Every attempt is a row of ``rfq_observations`` (200, 400, 404, 5xx and transport errors
    alike; the client's retry policy decides what is retried). With ``follow_transactions``,
    each 200 quote goes on to ``POST /partner-intents/transaction`` (which holds its
    reservation for 60 s) and the answer is decoded and checked with
    :func:`toolkit.chain.guard.check_transaction` into ``transactions``. With no ``grid`` the
    grid is discovered from the target (:func:`toolkit.collect.grid.discover_routes`). A 401 ends
    the run as failed.

    >>> from toolkit.store import Store
    >>> RfqSweep(client, Store(":memory:"), rounds=2, interval_s=15, progress=False).run().status
    'completed'
    """

    kind = "rfq"
    table = "rfq_observations"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        follow_transactions: bool = False,
        user: str = DEFAULT_USER,
        **options: Unpack[SweepOptions],
    ) -> None:
        super().__init__(client, store, **options)
        self.follow_transactions = bool(follow_transactions)
        self.user = str(parse_value(HexAddress, user, "user"))

    def parameters(self) -> dict[str, Any]:
        return {
            **self.sweep_parameters(),
            "follow_transactions": self.follow_transactions,
            "user": self.user,
            "protocol": self.client.protocol,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        super().restore(parameters)
        self.follow_transactions = bool(parameters.get("follow_transactions", False))
        self.user = str(parameters.get("user") or self.user)

    def visit(
        self, run_id: str, round_no: int, index: int, point: GridPoint, writer: BatchWriter
    ) -> None:
        attempts: list[tuple[Attempt, float]] = []
        quote: Quote | None = None
        failure: ServiceError | None = None
        try:
            quote = self.client.rfq(
                src_chain=point.src_chain,
                dst_chain=point.dst_chain,
                amount=point.amount,
                token=point.dst_token,
                src_token=point.src_token,
                user=self.user,
                type=point.quote_type,  # type: ignore[arg-type]
                on_attempt=self.stamp(attempts),
            )
        except ServiceError as exc:
            failure = exc
        finally:
            self.note(quote is not None, None if failure is None else str(failure))
            # Also on Ctrl-C: the attempts that happened are observations.
            writer.add(self.table, rfq_rows(run_id, round_no, index, point, attempts, quote))
        if isinstance(failure, Unauthorized):
            raise failure
        if quote is not None and self.follow_transactions and quote.quote_id is not None:
            self._follow(run_id, quote, writer)

    def _follow(self, run_id: str, quote: Quote, writer: BatchWriter) -> None:
        built: Quote | None = None
        error: ServiceError | None = None
        try:
            built = self.client.transaction(quote)
        except ServiceError as exc:
            error = exc
        writer.add("transactions", [transaction_row(run_id, quote, self.clock(), built, error)])
