"""Table contracts of intent orders seen on chain: the input settler escrow's ``Open``,
``Finalised`` and ``Refunded`` (on the origin chain), each opened order's inputs and outputs,
and the output settler's ``OutputFilled`` (on the destination chain).

Every row sits at its log's place (``chain, block_number, log_index``), so a reorg deletes it
with its block. Token addresses are lowercase (an output's ``bytes32`` token as its address
when its upper 12 bytes are zero, else the 32-byte hex); amounts are exact (``amount_text``
always, ``amount`` HUGEINT unless it exceeds it)."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _BIG,
    _I,
    _LOG_KEY,
    _LOG_PLACE,
    _V,
    ESCROW_EVENTS,
    ORDER_LEGS,
    TableSpec,
    _amount,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "escrow_events",
        (
            *_LOG_PLACE,
            _c("escrow", _V, required=True),
            _c("event", _V, required=True, choices=ESCROW_EVENTS),
            _c("order_id", _V, required=True),
            # open: the order's terms
            _c("user_address", _V),
            _c("nonce", _V),
            _c("expires", _BIG),
            _c("fill_deadline", _BIG),
            _c("input_oracle", _V),
            # finalised: who solved it and where the inputs went
            _c("solver", _V),
            _c("destination", _V),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "escrow_order_legs",
        (
            *_LOG_PLACE,
            _c("escrow", _V, required=True),
            _c("order_id", _V, required=True),
            _c("leg", _V, required=True, choices=ORDER_LEGS),
            _c("position", _I, required=True),
            _c("leg_chain", _BIG),
            _c("token", _V, required=True),
            _amount("amount"),
            _c("amount_text", _V, required=True),
            _c("recipient", _V),
            _c("settler", _V),
            _c("run_id", _V, required=True),
        ),
        (*_LOG_KEY, "leg", "position"),
    ),
    TableSpec(
        "output_fills",
        (
            *_LOG_PLACE,
            _c("settler", _V, required=True),
            _c("order_id", _V, required=True),
            _c("solver", _V, required=True),
            _c("filled_at", _BIG),
            _c("token", _V, required=True),
            _amount("amount"),
            _c("amount_text", _V, required=True),
            _amount("ordered_amount"),
            _c("recipient", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
)
