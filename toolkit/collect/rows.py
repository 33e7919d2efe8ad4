"""Rows of the store's tables built from what the clients return (no I/O).

Every HTTP attempt becomes one row, whatever its outcome; amounts stay Python ints (HUGEINT in
DuckDB); times are UTC datetimes. Column names follow the table contract of
:mod:`toolkit.store`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from toolkit.chain.finding import Finding
from toolkit.chain.guard import check_transaction
from toolkit.client import Attempt, ServiceError, StreamEvent
from toolkit.codecs import caip2
from toolkit.codecs.context import parse_context
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import decode_open, order_id
from toolkit.collect.grid import GridPoint
from toolkit.resources import BorrowQuote, FeeEvent, FeeTier, LiquidityEvent, Quote

__all__ = [
    "Row",
    "attempt_id",
    "borrow_rows",
    "event_row",
    "fee_tier_rows",
    "findings_json",
    "parse_attempt_id",
    "resume_round",
    "rfq_rows",
    "rounds_recorded",
    "transaction_row",
    "utc",
]

Row = dict[str, Any]


def utc(seconds: float) -> datetime:
    """A UTC datetime from unix seconds.

    >>> utc(0).isoformat()
    '1970-01-01T00:00:00+00:00'
    """
    return datetime.fromtimestamp(seconds, UTC)


def attempt_id(round_no: int, index: int, retry: int) -> str:
    """The deterministic id of an attempt: ``round:grid_index:retry``.

    >>> attempt_id(3, 17, 0)
    '3:17:0'
    """
    return f"{round_no}:{index}:{retry}"


def parse_attempt_id(text: str) -> tuple[int, int, int] | None:
    """``(round, grid_index, retry)`` of an attempt id, or None if it is not one of ours.

    >>> parse_attempt_id("3:17:0"), parse_attempt_id("x")
    ((3, 17, 0), None)
    """
    parts = text.split(":")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def rounds_recorded(attempt_ids: Iterable[str]) -> dict[int, set[int]]:
    """The grid points each round recorded (round → grid indices), from attempt ids.

    >>> rounds_recorded(["0:0:0", "0:1:0", "0:1:1", "1:0:0", "x"])
    {0: {0, 1}, 1: {0}}
    """
    done: dict[int, set[int]] = {}
    for text in attempt_ids:
        parsed = parse_attempt_id(text)
        if parsed is not None:
            done.setdefault(parsed[0], set()).add(parsed[1])
    return done


def resume_round(done: Mapping[int, set[int]], points: int) -> tuple[int, set[int]]:
    """Where a followed sweep of ``points`` grid points resumes: its last round and the points
    that round recorded, or the next round when the last one is whole.

    >>> resume_round({0: {0, 1}, 1: {0}}, 2), resume_round({0: {0, 1}}, 2), resume_round({}, 2)
    ((1, {0}), (1, set()), (0, set()))
    """
    if not done:
        return 0, set()
    last = max(done)
    return (last + 1, set()) if len(done[last]) >= points else (last, set(done[last]))


def _base(
    run_id: str, point: GridPoint, round_no: int, index: int, attempt: Attempt, observed: float
) -> Row:
    return {
        "run_id": run_id,
        "attempt_id": attempt_id(round_no, index, attempt.retry),
        "observed_at": utc(observed),
        "status": attempt.status,
        "latency_ms": attempt.latency_ms,
        "error": attempt.error,
    }


def rfq_rows(
    run_id: str,
    round_no: int,
    index: int,
    point: GridPoint,
    attempts: list[tuple[Attempt, float]],
    quote: Quote | None,
) -> list[Row]:
    """``rfq_observations`` rows of one grid point: one per attempt, the quote on the last.

    ``attempts`` pairs each attempt with the unix time it ended. ``fee_bps`` is
    ``(input − output) / input × 10⁴`` (the routes are same-token) and only set on a 200.
    """
    rows: list[Row] = []
    for position, (attempt, observed) in enumerate(attempts):
        row = _base(run_id, point, round_no, index, attempt, observed)
        row.update(
            round=round_no,
            retry=attempt.retry,
            src_chain=point.src_chain,
            dst_chain=point.dst_chain,
            token=point.token,
            src_token=point.src_token,
            dst_token=point.dst_token,
            quote_type=point.quote_type,
            amount=point.amount,
        )
        if quote is not None and position == len(attempts) - 1 and attempt.ok:
            total_in = sum(i.amount_int for i in quote.preview.inputs)
            total_out = sum(o.amount_int for o in quote.preview.outputs)
            row.update(
                quote_id=quote.quote_id,
                valid_until=quote.valid_until,
                eta=quote.eta,
                input_amount=total_in,
                output_amount=total_out,
                fee_bps=(total_in - total_out) / total_in * 1e4 if total_in else None,
            )
        rows.append(row)
    return rows


def findings_json(findings: list[Finding]) -> str:
    """Guard findings as a JSON list of ``{field, message, severity}``; ``[]`` means safe.

    >>> findings_json([Finding("to", "is not the escrow")])
    '[{"field": "to", "message": "is not the escrow", "severity": "error"}]'
    """
    return json.dumps([asdict(f) for f in findings])


def transaction_row(
    run_id: str,
    quote: Quote,
    observed: float,
    built: Quote | None,
    error: ServiceError | None,
) -> Row:
    """The ``transactions`` row of one quote followed through the transaction endpoint.

    The calldata is decoded (orderId as the escrow computes it) and checked with the guard
    at the time the answer arrived; an error answer keeps its status and message.
    """
    row: Row = {
        "run_id": run_id,
        "quote_id": quote.quote_id,
        "observed_at": utc(observed),
        "input_amount": sum(i.amount_int for i in quote.preview.inputs),
        "output_amount": sum(o.amount_int for o in quote.preview.outputs),
    }
    if built is None or built.transaction_request is None:
        row.update(
            status=None if error is None else error.status,
            error=None if error is None else str(error),
        )
        return row
    tx = built.transaction_request
    findings = check_transaction(quote, tx, now=int(observed))
    row.update(
        status=200,
        tx_from=tx.from_,
        tx_to=tx.to,
        chain_id=tx.chain_id,
        value=tx.value,
        data=tx.data,
        findings=findings_json(findings),
        exclusive_for=None if quote.metadata is None else quote.metadata.exclusive_for,
    )
    try:
        order = decode_open(tx.data)
    except InvalidValue as exc:
        row["error"] = f"data: {exc.rule}"
        return row
    row.update(
        order_id=order_id(order, tx.to),
        nonce=str(order.nonce),
        fill_deadline=order.fill_deadline,
        expires=order.expires,
    )
    if order.outputs:
        try:
            context = parse_context(order.outputs[0].context)
        except InvalidValue:
            context = None  # the guard has already reported the context
        if context is not None:
            row["exclusive_for"] = context.filler
    return row


def borrow_rows(
    run_id: str,
    round_no: int,
    index: int,
    point: GridPoint,
    exclusive: bool | None,
    attempts: list[tuple[Attempt, float]],
    quote: BorrowQuote | None,
) -> list[Row]:
    """``borrow_quotes`` rows of one grid point: one per attempt, the quote on the last."""
    rows: list[Row] = []
    for position, (attempt, observed) in enumerate(attempts):
        row = _base(run_id, point, round_no, index, attempt, observed)
        row.update(
            src_chain=point.src_chain,
            dst_chain=point.dst_chain,
            token=point.dst_token,
            quote_type=point.quote_type,
            amount=point.amount,
            exclusive=exclusive,
        )
        if quote is not None and position == len(attempts) - 1 and attempt.ok:
            row.update(
                quote_id=quote.id,
                borrow_cost=quote.borrow_cost_int,
                fee_bps=float(quote.fee_bps),
                required_input=quote.required_input_int,
                required_output=quote.required_output_int,
                liquidity_pool=quote.liquidity_pool,
                quote_duration=quote.quote_duration,
                estimated_fill_duration=quote.estimated_fill_duration,
            )
        rows.append(row)
    return rows


def event_row(source: str, run_id: str, event: StreamEvent, received: float) -> Row:
    """The ``liquidity_events`` row of one change event (``fee`` events: ``chain`` is the
    source chain, the tiers are in ``payload``)."""
    row: Row = {
        "source": source,
        "event_id": event.id,
        "event": event.event,
        "received_at": utc(received),
        "run_id": run_id,
        "payload": event.raw,
    }
    data = event.data
    if isinstance(data, LiquidityEvent):
        row.update(
            chain=data.chain_id,
            token=data.token,
            pool_type=data.pool_type,
            address=data.address,
            balance=int(data.balance),
            reserved=int(data.reserved),
            outstanding=int(data.outstanding),
            reason=data.reason,
        )
    elif isinstance(data, FeeEvent):
        row.update(chain=caip2.parse(data.src_chain), token=data.token, reason="fee")
    return row


def fee_tier_rows(
    snapshot_id: str,
    observed: float,
    src_chain: int,
    dst_chain: int,
    token: str,
    tiers: list[FeeTier],
) -> list[Row]:
    """``fee_tiers`` rows of one route, tiers numbered from 0 in the service's order."""
    return [
        {
            "snapshot_id": snapshot_id,
            "observed_at": utc(observed),
            "src_chain": src_chain,
            "dst_chain": dst_chain,
            "token": token,
            "tier": number,
            "fee_bps": float(tier.fee_bps),
            "min_amount": tier.min_amount,
            "max_amount": tier.max_amount,
        }
        for number, tier in enumerate(tiers)
    ]
