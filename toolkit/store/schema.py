"""The table contract shared by the store, the collectors, the backtests and the models.

This module describes the *current* shape of every table: column names, DuckDB types, the
natural key and which columns must be present. ``append`` validates frames against it and
``polars_schema`` hands the same shape to writers. The DDL that creates the tables lives,
frozen, in :mod:`toolkit.store.migrations`; a test checks that both agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import polars as pl

from toolkit.store.errors import StoreError

__all__ = [
    "QUOTE_TYPES",
    "RUN_KINDS",
    "RUN_STATUSES",
    "TABLES",
    "Column",
    "TableSpec",
    "polars_schema",
    "table_spec",
]

RUN_KINDS: tuple[str, ...] = (
    "rfq",
    "borrow",
    "liquidity",
    "snapshot",
    "backtest",
    "chain",
    "swap",
    "credit",
    "traffic",
    "pools",
    "prices",
)
FLOW_KINDS: tuple[str, ...] = ("deposit", "withdrawal")
RUN_STATUSES: tuple[str, ...] = ("running", "completed", "interrupted", "failed")
#: What a run observed: the embedded (simulated) service in-process, a service on a loopback
#: host, any other host, or a backtest (simulated).
TARGET_KINDS: tuple[str, ...] = ("embedded", "served", "real", "simulated")
PRICE_SOURCES: tuple[str, ...] = ("scenario", "oracle", "pool", "user")
QUOTE_TYPES: tuple[str, ...] = ("ExactInput", "ExactOutput")
EVENT_KINDS: tuple[str, ...] = ("liquidity", "fee")
AMM_KINDS: tuple[str, ...] = ("v2", "v3")

#: polars dtype each DuckDB column type maps to, both ways.
POLARS_TYPES: Mapping[str, pl.DataType] = MappingProxyType(
    {
        "VARCHAR": pl.String(),
        "BOOLEAN": pl.Boolean(),
        "INTEGER": pl.Int32(),
        "BIGINT": pl.Int64(),
        "HUGEINT": pl.Int128(),
        "DOUBLE": pl.Float64(),
        "TIMESTAMPTZ": pl.Datetime("us", "UTC"),
        # Human-unit figures (credit info): exact, 20 integer digits and 18 decimals.
        "DECIMAL(38,18)": pl.Decimal(38, 18),
    }
)


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, DuckDB type, and the rules ``append`` enforces.

    ``required`` columns must be present in every appended frame and hold no nulls;
    ``choices`` restricts a VARCHAR column to a closed set (nulls allowed unless required);
    ``nonnegative`` refuses values below zero (on-chain amounts are unsigned).

    Example:
        >>> Column("status", "INTEGER", required=True).dtype
        Int32
    """

    name: str
    sql_type: str
    required: bool = False
    choices: tuple[str, ...] | None = None
    nonnegative: bool = False

    @property
    def dtype(self) -> pl.DataType:
        """The polars dtype of this column."""
        return POLARS_TYPES[self.sql_type]


@dataclass(frozen=True)
class TableSpec:
    """A table of the contract: ordered columns and the natural key.

    Natural-key columns are always required. Appending a row whose key is already stored is a
    no-op, so re-running a write never duplicates rows.

    Example:
        >>> spec = TABLES["token_snapshots"]
        >>> spec.key
        ('snapshot_id', 'chain', 'symbol')
    """

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    by_name: Mapping[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", MappingProxyType({c.name: c for c in self.columns}))
        for name in self.key:
            if not self.by_name[name].required:
                raise ValueError(f"{self.name}.{name}: natural-key columns must be required")

    @property
    def names(self) -> tuple[str, ...]:
        """Column names in table order."""
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        """Columns every appended frame must carry, without nulls."""
        return tuple(c.name for c in self.columns if c.required)

    @property
    def schema(self) -> pl.Schema:
        """The polars schema of the table (what ``append`` casts frames to)."""
        return pl.Schema({c.name: c.dtype for c in self.columns})


def _c(
    name: str, sql_type: str, *, required: bool = False, choices: tuple[str, ...] | None = None
) -> Column:
    return Column(name, sql_type, required, choices)


def _amount(name: str) -> Column:
    return Column(name, "HUGEINT", nonnegative=True)


_V, _B, _I, _BIG, _HUGE, _D, _TS = (
    "VARCHAR",
    "BOOLEAN",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "DOUBLE",
    "TIMESTAMPTZ",
)

# Where a log sits on a chain: its natural key, then its transaction.
_LOG_PLACE = (
    _c("chain", _BIG, required=True),
    _c("block_number", _BIG, required=True),
    _c("log_index", _I, required=True),
    _c("tx_hash", _V, required=True),
)
_LOG_KEY = ("chain", "block_number", "log_index")
_DEC = "DECIMAL(38,18)"
# Where a credit snapshot sits: its run, the round of the run and when it was read.
_CREDIT_PLACE = (
    _c("run_id", _V, required=True),
    _c("round", _I, required=True),
    _c("observed_at", _TS, required=True),
)

_SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "collection_runs",
        (
            _c("run_id", _V, required=True),
            _c("kind", _V, required=True, choices=RUN_KINDS),
            _c("parameters", _V, required=True),
            _c("target_url", _V),
            _c("started_at", _TS, required=True),
            _c("ended_at", _TS),
            _c("status", _V, required=True, choices=RUN_STATUSES),
            _c("rows_written", _BIG),
            _c("target_kind", _V, choices=TARGET_KINDS),
        ),
        ("run_id",),
    ),
    TableSpec(
        "rfq_observations",
        (
            _c("run_id", _V, required=True),
            _c("attempt_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("round", _I),
            _c("retry", _I),
            _c("src_chain", _BIG),
            _c("dst_chain", _BIG),
            _c("token", _V),
            _c("src_token", _V),
            _c("dst_token", _V),
            _c("quote_type", _V, choices=QUOTE_TYPES),
            _amount("amount"),
            _c("status", _I, required=True),
            _c("latency_ms", _D),
            _c("quote_id", _V),
            _c("valid_until", _BIG),
            _c("eta", _BIG),
            _amount("input_amount"),
            _amount("output_amount"),
            _c("fee_bps", _D),
            _c("error", _V),
        ),
        ("run_id", "attempt_id"),
    ),
    TableSpec(
        "transactions",
        (
            _c("run_id", _V, required=True),
            _c("quote_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("order_id", _V),
            _c("tx_from", _V),
            _c("tx_to", _V),
            _c("chain_id", _BIG),
            _c("value", _V),
            _c("data", _V),
            _c("nonce", _V),
            _c("fill_deadline", _BIG),
            _c("expires", _BIG),
            _c("exclusive_for", _V),
            _amount("input_amount"),
            _amount("output_amount"),
            _c("findings", _V),
            _c("status", _I),
            _c("error", _V),
        ),
        ("run_id", "quote_id"),
    ),
    TableSpec(
        "borrow_quotes",
        (
            _c("run_id", _V, required=True),
            _c("attempt_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("src_chain", _BIG),
            _c("dst_chain", _BIG),
            _c("token", _V),
            _c("quote_type", _V, choices=QUOTE_TYPES),
            _amount("amount"),
            _c("exclusive", _B),
            _c("status", _I, required=True),
            _c("latency_ms", _D),
            _c("quote_id", _V),
            _amount("borrow_cost"),
            _c("fee_bps", _D),
            _amount("required_input"),
            _amount("required_output"),
            _c("liquidity_pool", _V),
            _c("quote_duration", _BIG),
            _c("estimated_fill_duration", _BIG),
            _c("error", _V),
        ),
        ("run_id", "attempt_id"),
    ),
    TableSpec(
        "liquidity_events",
        (
            _c("source", _V, required=True),
            _c("event_id", _BIG, required=True),
            _c("event", _V, required=True, choices=EVENT_KINDS),
            _c("received_at", _TS, required=True),
            _c("run_id", _V),
            _c("chain", _BIG),
            _c("token", _V),
            _c("pool_type", _V),
            _c("address", _V),
            _amount("balance"),
            _amount("reserved"),
            _amount("outstanding"),
            _c("reason", _V),
            _c("payload", _V),
        ),
        ("source", "event_id"),
    ),
    TableSpec(
        "fee_tiers",
        (
            _c("snapshot_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("src_chain", _BIG, required=True),
            _c("dst_chain", _BIG, required=True),
            _c("token", _V, required=True),
            _c("tier", _I, required=True),
            _c("fee_bps", _D),
            _amount("min_amount"),
            _amount("max_amount"),
        ),
        ("snapshot_id", "src_chain", "dst_chain", "token", "tier"),
    ),
    TableSpec(
        "pool_snapshots",
        (
            _c("snapshot_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("chain", _BIG, required=True),
            _c("token", _V, required=True),
            _c("pool_type", _V, required=True),
            _c("address", _V),
            _amount("balance"),
        ),
        ("snapshot_id", "chain", "token", "pool_type"),
    ),
    TableSpec(
        "token_snapshots",
        (
            _c("snapshot_id", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("chain", _BIG, required=True),
            _c("symbol", _V, required=True),
            _c("address", _V),
            _c("decimals", _I),
        ),
        ("snapshot_id", "chain", "symbol"),
    ),
    TableSpec(
        "backtest_requests",
        (
            _c("run_id", _V, required=True),
            _c("request_id", _V, required=True),
            _c("t", _D, required=True),
            _c("kind", _V),
            _c("src_chain", _BIG),
            _c("dst_chain", _BIG),
            _c("token", _V),
            _c("quote_type", _V, choices=QUOTE_TYPES),
            _c("amount", _HUGE),
            _c("outcome", _V),
            _c("status", _I),
            _c("quote_id", _V),
            _c("order_id", _V),
            _c("input_amount", _HUGE),
            _c("output_amount", _HUGE),
            _c("fee_bps", _D),
            _c("quoted_at", _D),
            _c("ordered_at", _D),
            _c("filled_at", _D),
            _c("settled_at", _D),
            _c("error", _V),
            _c("attributes", _V),
        ),
        ("run_id", "request_id"),
    ),
    TableSpec(
        "backtest_pools",
        (
            _c("run_id", _V, required=True),
            _c("pool", _V, required=True),
            _c("t", _D, required=True),
            _c("chain", _BIG),
            _c("token", _V),
            _c("pool_type", _V),
            _c("capacity", _HUGE),
            _c("available", _HUGE),
            _c("reserved", _HUGE),
            _c("outstanding", _HUGE),
            _c("utilization", _D),
            _c("attributes", _V),
        ),
        ("run_id", "pool", "t"),
    ),
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
    TableSpec(
        "amm_pool_snapshots",
        (
            _c("snapshot_id", _V, required=True),
            _c("chain", _BIG, required=True),
            _c("pool", _V, required=True),
            _c("observed_at", _TS, required=True),
            _c("block_number", _BIG),
            _c("kind", _V),
            _c("token0", _V),
            _c("token1", _V),
            _c("fee", _BIG),
            _amount("reserve0"),
            _amount("reserve1"),
            _c("sqrt_price_x96", _V),
            _c("tick", _BIG),
            _c("liquidity", _V),
            _c("tick_spacing", _BIG),
            _c("fee_growth_global0_x128", _V),
            _c("fee_growth_global1_x128", _V),
            _c("depth_ticks", _BIG),
            _c("min_tick", _BIG),
            _c("max_tick", _BIG),
            _c("tick_count", _I),
        ),
        ("snapshot_id", "chain", "pool"),
    ),
    TableSpec(
        "pool_swaps",
        (
            *_LOG_PLACE,
            _c("pool", _V, required=True),
            _c("kind", _V, required=True, choices=AMM_KINDS),
            _c("sender", _V),
            _c("recipient", _V),
            _c("amount0", _HUGE),
            _c("amount1", _HUGE),
            _c("sqrt_price_x96", _V),
            _c("liquidity", _V),
            _c("tick", _I),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "pool_liquidity",
        (
            *_LOG_PLACE,
            _c("pool", _V, required=True),
            _c("kind", _V, required=True, choices=AMM_KINDS),
            _c("event", _V, required=True, choices=("mint", "burn", "collect")),
            _c("owner", _V),
            _c("counterparty", _V),
            _c("tick_lower", _I),
            _c("tick_upper", _I),
            _c("liquidity", _V),
            _amount("amount0"),
            _amount("amount1"),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "pool_syncs",
        (
            *_LOG_PLACE,
            _c("pool", _V, required=True),
            Column("reserve0", _HUGE, required=True, nonnegative=True),
            Column("reserve1", _HUGE, required=True, nonnegative=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "pool_flashes",
        (
            *_LOG_PLACE,
            _c("pool", _V, required=True),
            _c("sender", _V),
            _c("recipient", _V),
            _amount("amount0"),
            _amount("amount1"),
            _amount("paid0"),
            _amount("paid1"),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "nft_transfers",
        (
            *_LOG_PLACE,
            _c("token", _V, required=True),
            _c("from_address", _V, required=True),
            _c("to_address", _V, required=True),
            _c("token_id", _V, required=True),
            _c("run_id", _V, required=True),
        ),
        _LOG_KEY,
    ),
    TableSpec(
        "amm_pools",
        (
            _c("chain", _BIG, required=True),
            _c("pool", _V, required=True),
            _c("kind", _V, required=True, choices=AMM_KINDS),
            _c("token0", _V, required=True),
            _c("token1", _V, required=True),
            _c("fee", _BIG, required=True),
            _c("tick_spacing", _I),
            _c("factory", _V, required=True),
            _c("created_block", _BIG, required=True),
            _c("log_index", _I),
            _c("tx_hash", _V),
            _c("run_id", _V, required=True),
        ),
        ("chain", "pool"),
    ),
    TableSpec(
        "amm_pool_ticks",
        (
            _c("snapshot_id", _V, required=True),
            _c("chain", _BIG, required=True),
            _c("pool", _V, required=True),
            _c("tick", _I, required=True),
            _c("liquidity_net", _HUGE, required=True),
            _c("liquidity_gross", _HUGE, required=True),
            _c("fee_growth_outside0_x128", _V),
            _c("fee_growth_outside1_x128", _V),
        ),
        ("snapshot_id", "chain", "pool", "tick"),
    ),
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
        ),
        ("run_id", "round", "account", "asset", "chain_id", "token"),
    ),
)

_PRICE_SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "prices",
        (
            _c("source", _V, required=True, choices=PRICE_SOURCES),
            _c("chain", _BIG, required=True),
            _c("token", _V, required=True),
            _c("symbol", _V),
            _c("observed_at", _TS, required=True),
            _c("usd", "DECIMAL(38,18)", required=True),
        ),
        ("source", "chain", "token", "observed_at"),
    ),
    TableSpec(
        "tokens",
        (
            _c("chain", _BIG, required=True),
            _c("address", _V, required=True),
            _c("symbol", _V, required=True),
            _c("decimals", _I, required=True),
            _c("source", _V, required=True),
        ),
        ("chain", "address"),
    ),
)

#: Every table of the contract, by name.
TABLES: Mapping[str, TableSpec] = MappingProxyType(
    {spec.name: spec for spec in (*_SPECS, *_PRICE_SPECS)}
)


def table_spec(table: str) -> TableSpec:
    """Return the contract of ``table``; an unknown name raises ``StoreError`` listing the known.

    Example:
        >>> table_spec("pool_snapshots").key
        ('snapshot_id', 'chain', 'token', 'pool_type')
    """
    spec = TABLES.get(table) if isinstance(table, str) else None
    if spec is None:
        known = ", ".join(TABLES)
        raise StoreError(f"table: unknown table {table!r}; known tables: {known}")
    return spec


def polars_schema(table: str) -> pl.Schema:
    """The polars schema a frame for ``table`` should have (amounts Int128, times UTC µs).

    Example:
        >>> polars_schema("token_snapshots")["decimals"]
        Int32
    """
    return table_spec(table).schema
