"""Table contracts of a backtest's inventory per chain and token and its rebalancing transfers
(:mod:`toolkit.backtest.inventory` builds the frames; migration 13 creates the tables)."""

from __future__ import annotations

from toolkit.store.schema.columns import _B, _BIG, _D, _V, TableSpec, _amount, _c

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "backtest_inventory",
        (
            _c("run_id", _V, required=True),
            _c("t", _D, required=True),
            _c("chain", _BIG, required=True),
            _c("token", _V, required=True),
            _amount("on_chain"),
            _amount("unallocated"),
            _amount("reserved"),
            _amount("outstanding"),
            _amount("receivable_in"),
            _amount("in_flight_in"),
            _amount("in_flight_out"),
            _c("attributes", _V),
        ),
        ("run_id", "t", "chain", "token"),
    ),
    TableSpec(
        "backtest_transfers",
        (
            _c("run_id", _V, required=True),
            _c("transfer_id", _BIG, required=True),
            _c("token", _V),
            _c("src_chain", _BIG),
            _c("dst_chain", _BIG),
            _amount("amount"),
            _amount("fee"),
            _c("sent_at", _D),
            _c("arrives_at", _D),
            _c("arrived", _B),
            _c("bridge", _V),
            _c("gas_usd", _D),
            _c("attributes", _V),
        ),
        ("run_id", "transfer_id"),
    ),
)
