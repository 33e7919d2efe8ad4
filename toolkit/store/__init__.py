"""The toolkit's DuckDB store: versioned schema, idempotent Arrow appends, runs, queries.

Amounts are exact (DuckDB ``HUGEINT`` <-> polars ``Int128``), times are UTC
(``TIMESTAMPTZ`` <-> ``Datetime("us", "UTC")``), and secrets never reach the database:
URLs are stored without credentials and secret-looking run parameters are refused.

**Reading while writing.** A collector follows a chain all day while a notebook and
``toolkit report`` read the same file. DuckDB locks a database file per process: one process
may hold it read-write, and then no other may open it at all; read-only processes share it,
and while any holds it no process may open it read-write. So a file :class:`Store` holds the
file only while one call (or one :meth:`Store.session` of calls: a follower's flush) reads or
writes, and closes it after, which checkpoints the write-ahead log into the file. Opening waits
for another process's call with jittered backoff (5 ms growing to 100 ms) up to
``lock_timeout_s`` (30 s), then raises :class:`StoreBusy`; a writer keeps the rows it could not
write and writes them at its next flush. A reader sees every committed flush: no cache, no
copy. DuckDB's own documentation lists this pattern among its ways to share a file between
processes ("retry the connection if another process is already connected ... close the
connection upon query completion").

Why this and not the alternatives the issue named: Parquet segments per flush read through
views would change how every table is written, deleted (a reorg rewrites segments) and kept
unique (the idempotent anti-join would read every segment), and the frozen migrations would no
longer describe the data; a reader endpoint served by the writer would leave notebooks unable
to read when no writer runs, and put a server into the store layer. Holding the file per call
keeps exact integers, appends, migrations and every reader's code as they were, at the cost of
opening the file per call (about 15-25 ms on the development machine: DuckDB starts an
instance) and of a writer waiting while a long query reads. Measured by
``bench/bench_read_write.py`` (2 cores shared, load average about 8): 2,000-row flushes twice a
second, flush p50 193 ms alone and 166 ms with a reader querying every 0.5 s (p99 316 and
695 ms), reader query p50 81 ms alone and 82 ms next to the writer (wait for the file: p50 1 ms,
p99 357 ms), no failed read or flush; flushing back to back, 13,200 rows/s alone and 7,200
rows/s with the reader.

Example:
    >>> from toolkit.store import MIGRATIONS, Store
    >>> with Store(":memory:") as store:
    ...     store.schema_version == MIGRATIONS[-1].version
    True
"""

from toolkit.store.connection import DATA_DIR_ENV, data_dir, default_path
from toolkit.store.errors import StoreBusy, StoreError
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
    "StoreBusy",
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
