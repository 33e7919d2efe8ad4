"""The table contract shared by the store, the collectors, the backtests and the models.

This package describes the *current* shape of every table: column names, DuckDB types, the
natural key and which columns must be present. ``append`` validates frames against it and
``polars_schema`` hands the same shape to writers. The DDL that creates the tables lives,
frozen, in :mod:`toolkit.store.migrations`; a test checks that both agree.

One module per family of tables (``service``, ``chain``, ``swap``, ``pools``, ``credit``,
``prices``, ``follow``, ``alerts``, ``inventory``, ``orders``); :data:`TABLES` lists them all,
in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import polars as pl

from toolkit.store.errors import StoreError
from toolkit.store.schema import (
    alerts,
    chain,
    credit,
    follow,
    inventory,
    orders,
    pools,
    prices,
    service,
    swap,
)
from toolkit.store.schema.columns import (
    AMM_KINDS,
    ESCROW_EVENTS,
    EVENT_KINDS,
    FINALITIES,
    FLOW_KINDS,
    FOLLOWER_STATES,
    ORDER_LEGS,
    POLARS_TYPES,
    PRICE_SOURCES,
    QUOTE_TYPES,
    RUN_KINDS,
    RUN_STATUSES,
    TARGET_KINDS,
    Column,
    TableSpec,
)
from toolkit.store.schema.follow import LEDGERS

__all__ = [
    "AMM_KINDS",
    "ESCROW_EVENTS",
    "EVENT_KINDS",
    "FINALITIES",
    "FLOW_KINDS",
    "FOLLOWER_STATES",
    "LEDGERS",
    "ORDER_LEGS",
    "POLARS_TYPES",
    "PRICE_SOURCES",
    "QUOTE_TYPES",
    "RUN_KINDS",
    "RUN_STATUSES",
    "TABLES",
    "TARGET_KINDS",
    "Column",
    "TableSpec",
    "polars_schema",
    "table_spec",
]

#: Every table of the contract, by name.
TABLES: Mapping[str, TableSpec] = MappingProxyType(
    {
        spec.name: spec
        for family in (
            service,
            chain,
            swap,
            pools,
            credit,
            prices,
            follow,
            alerts,
            inventory,
            orders,
        )
        for spec in family.SPECS
    }
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
