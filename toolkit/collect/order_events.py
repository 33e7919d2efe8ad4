"""Rows of the partner-escrow settlers' logs, for the chain collector.

The input settler escrow (OIF ``InputSettlerEscrow``) emits, on the order's origin chain,
``Open(orderId, order)`` when a user escrows the inputs, ``Finalised(orderId, solver,
destination)`` when it releases them to the solver's ``destination`` (only for fills its input
oracle proved), and ``Refunded(orderId)`` when it returns them to the user after ``expires``.
The output settler emits ``OutputFilled(orderId, solver, timestamp, output, finalAmount)`` on
the destination chain when a solver delivers an output. They go to three tables:

- ``escrow_events``: one row per escrow log (``event`` ``open``, ``finalised`` or
  ``refunded``), with an opened order's terms (user, nonce, deadlines, input oracle) or a
  finalised one's solver and destination;
- ``escrow_order_legs``: one row per input and per output of an opened order (``leg``,
  ``position``), at the ``Open`` log's place: the chain it is paid on or owed on
  (``leg_chain``), the token, the exact amount, and an output's recipient and settler;
- ``output_fills``: one row per ``OutputFilled``: the solver, the fill's timestamp, the token,
  the amount delivered (``finalAmount``) and the amount the output asked (``ordered_amount``).

``bytes32`` words that hold an address (a solver, a token, a recipient) are stored as that
address when their upper 12 bytes are zero, else as the whole word; all lowercase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ORDER_TABLES", "order_event_rows"]

ORDER_TABLES = ("escrow_events", "escrow_order_legs", "output_fills")
_HUGEINT_MAX = 2**127 - 1
_BIGINT_MAX = 2**63 - 1
_ESCROW_EVENTS = {
    "escrow.Open": "open",
    "escrow.Finalised": "finalised",
    "escrow.Refunded": "refunded",
}

_Row = tuple[str, dict[str, Any]]


def _hex(value: bytes) -> str:
    return "0x" + bytes(value).hex()


def _word(value: bytes) -> str:
    """A bytes32 that holds an address as that address; any other word whole."""
    word = bytes(value)
    return _hex(word[12:]) if not any(word[:12]) else _hex(word)


def _amount(value: int) -> dict[str, Any]:
    return {"amount": value if value <= _HUGEINT_MAX else None, "amount_text": str(value)}


def _bigint(value: int) -> int | None:
    return value if value <= _BIGINT_MAX else None


def order_event_rows(
    key: str, args: Mapping[str, Any], address: str, place: Mapping[str, Any]
) -> list[_Row]:
    """The ``(table, row)`` pairs of one decoded settler log; empty for another event.

    >>> place = {"chain": 8453, "block_number": 9, "log_index": 0, "tx_hash": "0x"}
    >>> rows = order_event_rows("escrow.Refunded", {"orderId": bytes(31) + b"\\x07"}, "0xe", place)
    >>> [(table, row["event"], row["order_id"][-2:]) for table, row in rows]
    [('escrow_events', 'refunded', '07')]
    """
    if key == "outputSettler.OutputFilled":
        return [("output_fills", _fill_row(args, address, place))]
    event = _ESCROW_EVENTS.get(key)
    if event is None:
        return []
    order_id = _hex(args["orderId"])
    row: dict[str, Any] = {**place, "escrow": address, "event": event, "order_id": order_id}
    if event == "finalised":
        row |= {"solver": _word(args["solver"]), "destination": _word(args["destination"])}
    if event != "open":
        return [("escrow_events", row)]
    user, nonce, origin, expires, fill_deadline, oracle, inputs, outputs = args["order"]
    row |= {
        "user_address": str(user).lower(), "nonce": str(nonce), "expires": expires,
        "fill_deadline": fill_deadline, "input_oracle": str(oracle).lower(),
    }  # fmt: skip
    legs = {**place, "escrow": address, "order_id": order_id}
    return [("escrow_events", row), *_leg_rows(legs, origin, inputs, outputs)]


def _leg_rows(
    place: Mapping[str, Any], origin: int, inputs: Sequence[Any], outputs: Sequence[Any]
) -> list[_Row]:
    """One ``escrow_order_legs`` row per input (its token id is the token's address as a
    uint256) and per output of an opened order."""
    rows: list[_Row] = []
    for position, (token_id, amount) in enumerate(inputs):
        token = token_id.to_bytes(32, "big")
        rows.append(("escrow_order_legs", {
            **place, "leg": "input", "position": position, "leg_chain": _bigint(origin),
            "token": _word(token), **_amount(amount), "recipient": None, "settler": None,
        }))  # fmt: skip
    for position, output in enumerate(outputs):
        _oracle, settler, chain_id, token, amount, recipient, _callback, _context = output
        rows.append(("escrow_order_legs", {
            **place, "leg": "output", "position": position, "leg_chain": _bigint(chain_id),
            "token": _word(token), **_amount(amount), "recipient": _word(recipient),
            "settler": _word(settler),
        }))  # fmt: skip
    return rows


def _fill_row(args: Mapping[str, Any], address: str, place: Mapping[str, Any]) -> dict[str, Any]:
    _oracle, _settler, _chain, token, ordered, recipient, _callback, _context = args["output"]
    return {
        **place, "settler": address, "order_id": _hex(args["orderId"]),
        "solver": _word(args["solver"]), "filled_at": args["timestamp"], "token": _word(token),
        **_amount(args["finalAmount"]), "recipient": _word(recipient),
        "ordered_amount": ordered if ordered <= _HUGEINT_MAX else None,
    }  # fmt: skip
