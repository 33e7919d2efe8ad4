"""Table contracts of what a chain holds: blocks, raw logs, token transfers and approvals,
WETH flows, the block ranges read."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _BIG,
    _I,
    _LOG_KEY,
    _LOG_PLACE,
    _V,
    FINALITIES,
    FLOW_KINDS,
    TableSpec,
    _amount,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "chain_blocks",
        (
            _c("chain", _BIG, required=True),
            _c("number", _BIG, required=True),
            _c("hash", _V, required=True),
            _c("parent_hash", _V),
            _c("timestamp", _BIG, required=True),
            _amount("base_fee"),
            _c("gas_used", _BIG),
            _c("gas_limit", _BIG),
            _c("tx_count", _I),
            _c("run_id", _V, required=True),
            _c("finality", _V, choices=FINALITIES),
        ),
        ("chain", "number"),
    ),
    TableSpec(
        "chain_logs",
        (
            *_LOG_PLACE,
            _c("tx_index", _I),
            _c("block_hash", _V),
            _c("address", _V, required=True),
            _c("topic0", _V),
            _c("topic1", _V),
            _c("topic2", _V),
            _c("topic3", _V),
            _c("data", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "token_transfers",
        (
            *_LOG_PLACE,
            _c("token", _V, required=True),
            _c("from_address", _V, required=True),
            _c("to_address", _V, required=True),
            _amount("amount"),
            _c("amount_text", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "token_approvals",
        (
            *_LOG_PLACE,
            _c("token", _V, required=True),
            _c("owner", _V, required=True),
            _c("spender", _V, required=True),
            _amount("amount"),
            _c("amount_text", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "weth_flows",
        (
            *_LOG_PLACE,
            _c("token", _V, required=True),
            _c("kind", _V, required=True, choices=FLOW_KINDS),
            _c("account", _V, required=True),
            _amount("amount"),
            _c("amount_text", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "chain_ranges",
        (
            _c("run_id", _V, required=True),
            _c("chain", _BIG, required=True),
            _c("from_block", _BIG, required=True),
            _c("to_block", _BIG, required=True),
            _c("logs", _BIG, required=True),
        ),
        ("run_id", "from_block"),
    ),
)
