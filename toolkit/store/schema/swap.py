"""Table contracts: the swap surface's routes and their legs."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _B,
    _BIG,
    _D,
    _I,
    _TS,
    _V,
    TableSpec,
    _amount,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "swap_routes",
        (
            _c("run_id", _V, required=True),
            _c("attempt_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("network", _V),
            _c("token_in", _V),
            _c("token_out", _V),
            _amount("amount_in"),
            _c("slippage_bps", _I),
            _c("status", _I, required=True),
            _c("latency_ms", _D),
            _c("request_id", _V),
            _amount("amount_out"),
            _amount("min_amount_out"),
            _c("target", _V),
            _c("call_data", _V),
            _c("gas_used", _BIG),
            _c("gas_limit", _BIG),
            _c("error", _V),
            _c("chain", _BIG),
            _amount("gas_price_wei"),
        ),
        ("run_id", "attempt_id"),
    ),
    TableSpec(
        "swap_route_legs",
        (
            _c("run_id", _V, required=True),
            _c("attempt_id", _V, required=True),
            _c("leg", _I, required=True),
            _c("command", _V, required=True),
            _c("path", _V),
            _c("fees", _V),
            _c("hops", _I),
            _amount("amount_in"),
            _amount("amount_min"),
            _c("payer_is_user", _B),
            _c("recipient", _V),
        ),
        ("run_id", "attempt_id", "leg"),
    ),
)
