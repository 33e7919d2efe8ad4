"""The toolkit's DuckDB store: versioned schema, idempotent Arrow appends, runs, queries.

Amounts are exact (DuckDB ``HUGEINT`` <-> polars ``Int128``), times are UTC
(``TIMESTAMPTZ`` <-> ``Datetime("us", "UTC")``), and secrets never reach the database:
URLs are stored without credentials and secret-looking run parameters are refused.

Example:
    >>> from toolkit.store import MIGRATIONS, Store
    >>> with Store(":memory:") as store:
    ...     store.schema_version == MIGRATIONS[-1].version
    True
"""

from toolkit.store.connection import DATA_DIR_ENV, data_dir, default_path
from toolkit.store.errors import StoreError
from toolkit.store.migrations import MIGRATIONS, Migration, apply_migrations, schema_version
from toolkit.store.prices import (
    SOURCE_PRIORITY,
    latest_prices,
    load_prices,
    price_at,
    price_table,
    prices_at,
    store_tokens,
)
from toolkit.store.run_log import Recording
from toolkit.store.schema import (
    QUOTE_TYPES,
    RUN_KINDS,
    RUN_STATUSES,
    TABLES,
    Column,
    TableSpec,
    polars_schema,
    table_spec,
)
from toolkit.store.store import Store
from toolkit.store.urls import stored_url

__all__ = [
    "DATA_DIR_ENV",
    "MIGRATIONS",
    "QUOTE_TYPES",
    "RUN_KINDS",
    "RUN_STATUSES",
    "SOURCE_PRIORITY",
    "TABLES",
    "Column",
    "Migration",
    "Recording",
    "Store",
    "StoreError",
    "TableSpec",
    "apply_migrations",
    "data_dir",
    "default_path",
    "latest_prices",
    "load_prices",
    "polars_schema",
    "price_at",
    "price_table",
    "prices_at",
    "schema_version",
    "store_tokens",
    "stored_url",
    "table_spec",
]
