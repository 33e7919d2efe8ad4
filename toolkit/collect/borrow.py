"""The borrow-quote sweep: every attempt of the liquidity API's borrow quote into
``borrow_quotes``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from toolkit.client import Attempt, ServiceClient, ServiceError, Unauthorized
from toolkit.collect.grid import (
    GridPoint,
)
from toolkit.collect.rows import borrow_rows
from toolkit.collect.sweep import Sweep, SweepOptions
from toolkit.collect.writer import BatchWriter
from toolkit.resources import BorrowQuote
from toolkit.store import Store

__all__ = ["BorrowSweep"]


class BorrowSweep(Sweep):
    """Sweep the borrow quote endpoint over routes × amounts × quote types.

    Each returned quote id reserves liquidity for its ``quoteDuration``; like RFQs, a dense
    sweep therefore changes the capacity it measures, which the rows make visible. ``exclusive``
    is sent as the ``exclusive`` flag when not None. A 401 ends the run as failed.

    >>> BorrowSweep(client, Store(":memory:"), rounds=1, progress=False).run().status
    'completed'
    """

    kind = "borrow"
    table = "borrow_quotes"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        exclusive: bool | None = None,
        **options: Unpack[SweepOptions],
    ) -> None:
        super().__init__(client, store, **options)
        if exclusive is not None and not isinstance(exclusive, bool):
            raise ValueError("exclusive: must be true, false or None")
        self.exclusive = exclusive

    def parameters(self) -> dict[str, Any]:
        return {
            **self.sweep_parameters(),
            "exclusive": self.exclusive,
            "protocol": self.client.protocol,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        super().restore(parameters)
        exclusive = parameters.get("exclusive")
        self.exclusive = exclusive if isinstance(exclusive, bool) else None

    def visit(
        self, run_id: str, round_no: int, index: int, point: GridPoint, writer: BatchWriter
    ) -> None:
        attempts: list[tuple[Attempt, float]] = []
        quote: BorrowQuote | None = None
        failure: ServiceError | None = None
        try:
            quote = self.client.borrow_quote(
                src_chain=point.src_chain,
                dst_chain=point.dst_chain,
                amount=point.amount,
                token=point.dst_token,
                type=point.quote_type,  # type: ignore[arg-type]
                exclusive=self.exclusive,
                on_attempt=self.stamp(attempts),
            )
        except ServiceError as exc:
            failure = exc
        finally:
            self.note(quote is not None, None if failure is None else str(failure))
            writer.add(
                self.table,
                borrow_rows(run_id, round_no, index, point, self.exclusive, attempts, quote),
            )
        if isinstance(failure, Unauthorized):
            raise failure
