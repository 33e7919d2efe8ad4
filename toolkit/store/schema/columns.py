"""The vocabulary of the table contracts: the enumerated values, :class:`Column` and
:class:`TableSpec`, and the column groups several tables share (a log's place on a chain, a
credit snapshot's place in its run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import polars as pl

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
    "health",
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
#: How final a stored block is: at or below the node's ``finalized`` (or, on a node without the
#: tag, the follower's confirmation depth), at or below its ``safe`` block, or neither.
FINALITIES: tuple[str, ...] = ("finalized", "safe", "unsafe")
#: The escrow's events an order goes through on its origin chain (OIF ``InputSettlerEscrow``),
#: and the two sides of an opened order (what the user escrows, what they are owed).
ESCROW_EVENTS: tuple[str, ...] = ("open", "finalised", "refunded")
ORDER_LEGS: tuple[str, ...] = ("input", "output")
#: What a follower is doing, as ``collector_status`` says.
FOLLOWER_STATES: tuple[str, ...] = ("running", "stopped", "failed")

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
        >>> from toolkit.store.schema import TABLES
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
