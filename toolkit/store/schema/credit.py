"""Table contracts of the credit product: protocol parameters, accounts, operators, top-up
configurations, collateral."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _BIG,
    _CREDIT_PLACE,
    _DEC,
    _I,
    _TS,
    _V,
    TableSpec,
    _amount,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "credit_protocol",
        (
            *_CREDIT_PLACE,
            _c("chain", _BIG, required=True),
            _c("collateral", _V, required=True),
            _c("symbol", _V),
            _c("escrow", _V),
            _c("ltv_bps", _I),
            _c("maintenance_ltv_bps", _I),
            _c("liquidation_bonus_bps", _I),
            _c("strategy", _V),
        ),
        ("run_id", "round", "chain", "collateral"),
    ),
    TableSpec(
        "credit_accounts",
        (
            *_CREDIT_PLACE,
            _c("account", _V, required=True),
            _c("asset", _V, required=True),
            _c("debt", _DEC),
            _c("principal", _DEC),
            _c("interest", _DEC),
            _c("health_factor", _DEC),  # null: infinite (no debt)
            _c("m_health_factor", _DEC),
            _c("liquidation_limit", _DEC),
            _c("total_collateral_value", _DEC),
            _c("total_credit_capacity", _DEC),
            _c("remaining_credit_capacity", _DEC),
            _c("due_date", _TS),
        ),
        ("run_id", "round", "account", "asset"),
    ),
    TableSpec(
        "credit_operators",
        (
            *_CREDIT_PLACE,
            _c("account", _V, required=True),
            _c("receiver", _V, required=True),  # "" when the operator has no receivers
            _c("asset", _V),
            _c("operator", _V),
        ),
        ("run_id", "round", "account", "receiver"),
    ),
    TableSpec(
        "credit_topup_configs",
        (
            *_CREDIT_PLACE,
            _c("account", _V, required=True),
            _c("receiver", _V, required=True),
            _c("asset", _V),
            _amount("threshold"),
            _amount("target_balance"),
            _c("health_factor_bps", _I),
        ),
        ("run_id", "round", "account", "receiver"),
    ),
    TableSpec(
        "credit_collateral",
        (
            *_CREDIT_PLACE,
            _c("account", _V, required=True),
            _c("asset", _V, required=True),  # the credit hub's asset (USDC, EURE)
            _c("chain_id", _BIG, required=True),  # where the collateral is locked
            _c("token", _V, required=True),
            _c("symbol", _V),
            _amount("amount"),  # smallest units of the token
            _c("decimals", _I),
            _c("hub_chain", _BIG),  # where it was read: the credit hub's chain, at this block
            _c("block_number", _BIG),
            _c("block_hash", _V),
        ),
        ("run_id", "round", "account", "asset", "chain_id", "token"),
    ),
)
