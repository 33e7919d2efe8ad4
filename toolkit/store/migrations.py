"""Versioned schema migrations: an ordered list of frozen SQL scripts.

A migration, once released, is never edited: a database created by an older toolkit is
brought up to date by running the scripts it has not seen, each in its own transaction, and
recording it in ``schema_migrations``. A new column or table is a new entry at the end.

Keys and indexes: the data tables declare no PRIMARY KEY and no CHECK. A primary key is an
ART index, which must fit in memory and which made ``ON CONFLICT DO NOTHING`` appends 3-4x
slower than a plain insert at a few million rows (``bench/bench_store.py``). The store keeps
natural keys unique itself: every append drops rows repeated within the frame and anti-joins
the rest against the stored rows of the same partition (run, snapshot or source), under a
per-file lock. Value rules (non-negative amounts, closed vocabularies) are checked on the
frame before it reaches DuckDB, where the error can name the column. No other index is
created: reads are scans and aggregates, which DuckDB serves from columnar storage and zone
maps. ``collection_runs`` is small and keeps its primary key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from toolkit.store.errors import StoreError
from toolkit.store.sql import first_row, rollback

__all__ = [
    "MIGRATIONS",
    "Migration",
    "apply_migrations",
    "pending_migrations",
    "schema_version",
]


@dataclass(frozen=True)
class Migration:
    """One schema step: a version (1, 2, ...), a short name and the SQL it runs.

    Example:
        >>> MIGRATIONS[0].version, MIGRATIONS[0].name
        (1, 'collection tables')
    """

    version: int
    name: str
    sql: str


_COLLECTION_TABLES = """
CREATE TABLE collection_runs (
    run_id       VARCHAR PRIMARY KEY,
    kind         VARCHAR NOT NULL,
    parameters   VARCHAR NOT NULL,   -- JSON object, never with secrets
    target_url   VARCHAR,            -- never with credentials
    started_at   TIMESTAMPTZ NOT NULL,
    ended_at     TIMESTAMPTZ,
    status       VARCHAR NOT NULL,
    rows_written BIGINT
);

CREATE TABLE rfq_observations (
    run_id        VARCHAR NOT NULL,
    attempt_id    VARCHAR NOT NULL,
    observed_at   TIMESTAMPTZ NOT NULL,
    round         INTEGER,
    retry         INTEGER,
    src_chain     BIGINT,
    dst_chain     BIGINT,
    token         VARCHAR,
    src_token     VARCHAR,
    dst_token     VARCHAR,
    quote_type    VARCHAR,
    amount        HUGEINT,
    status        INTEGER NOT NULL,
    latency_ms    DOUBLE,
    quote_id      VARCHAR,
    valid_until   BIGINT,
    eta           BIGINT,
    input_amount  HUGEINT,
    output_amount HUGEINT,
    fee_bps       DOUBLE,
    error         VARCHAR
);

CREATE TABLE transactions (
    run_id        VARCHAR NOT NULL,
    quote_id      VARCHAR NOT NULL,
    observed_at   TIMESTAMPTZ NOT NULL,
    order_id      VARCHAR,
    tx_from       VARCHAR,
    tx_to         VARCHAR,
    chain_id      BIGINT,
    value         VARCHAR,
    data          VARCHAR,
    nonce         VARCHAR,
    fill_deadline BIGINT,
    expires       BIGINT,
    exclusive_for VARCHAR,
    input_amount  HUGEINT,
    output_amount HUGEINT,
    findings      VARCHAR,           -- JSON list of guard findings; '[]' means safe
    status        INTEGER,
    error         VARCHAR
);

CREATE TABLE borrow_quotes (
    run_id                  VARCHAR NOT NULL,
    attempt_id              VARCHAR NOT NULL,
    observed_at             TIMESTAMPTZ NOT NULL,
    src_chain               BIGINT,
    dst_chain               BIGINT,
    token                   VARCHAR,
    quote_type              VARCHAR,
    amount                  HUGEINT,
    exclusive               BOOLEAN,
    status                  INTEGER NOT NULL,
    latency_ms              DOUBLE,
    quote_id                VARCHAR,
    borrow_cost             HUGEINT,
    fee_bps                 DOUBLE,
    required_input          HUGEINT,
    required_output         HUGEINT,
    liquidity_pool          VARCHAR,
    quote_duration          BIGINT,
    estimated_fill_duration BIGINT,
    error                   VARCHAR
);

CREATE TABLE liquidity_events (
    source      VARCHAR NOT NULL,    -- stream URL without credentials, plus protocol
    event_id    BIGINT NOT NULL,
    event       VARCHAR NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    run_id      VARCHAR,
    chain       BIGINT,
    token       VARCHAR,
    pool_type   VARCHAR,
    address     VARCHAR,
    balance     HUGEINT,
    reserved    HUGEINT,
    outstanding HUGEINT,
    reason      VARCHAR,
    payload     VARCHAR              -- raw JSON data of the event
);

CREATE TABLE fee_tiers (
    snapshot_id VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    src_chain   BIGINT NOT NULL,
    dst_chain   BIGINT NOT NULL,
    token       VARCHAR NOT NULL,
    tier        INTEGER NOT NULL,
    fee_bps     DOUBLE,
    min_amount  HUGEINT,
    max_amount  HUGEINT
);

CREATE TABLE pool_snapshots (
    snapshot_id VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    chain       BIGINT NOT NULL,
    token       VARCHAR NOT NULL,
    pool_type   VARCHAR NOT NULL,
    address     VARCHAR,
    balance     HUGEINT
);

CREATE TABLE token_snapshots (
    snapshot_id VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    chain       BIGINT NOT NULL,
    symbol      VARCHAR NOT NULL,
    address     VARCHAR,
    decimals    INTEGER
);
"""

# Backtest results are generic on purpose: ``t`` is virtual time in seconds since the replay
# started, and ``attributes`` (a JSON object) carries replay columns the contract does not name.
_BACKTEST_TABLES = """
CREATE TABLE backtest_requests (
    run_id        VARCHAR NOT NULL,
    request_id    VARCHAR NOT NULL,
    t             DOUBLE NOT NULL,
    kind          VARCHAR,
    src_chain     BIGINT,
    dst_chain     BIGINT,
    token         VARCHAR,
    quote_type    VARCHAR,
    amount        HUGEINT,
    outcome       VARCHAR,
    status        INTEGER,
    quote_id      VARCHAR,
    order_id      VARCHAR,
    input_amount  HUGEINT,
    output_amount HUGEINT,
    fee_bps       DOUBLE,
    quoted_at     DOUBLE,
    ordered_at    DOUBLE,
    filled_at     DOUBLE,
    settled_at    DOUBLE,
    error         VARCHAR,
    attributes    VARCHAR
);

CREATE TABLE backtest_pools (
    run_id      VARCHAR NOT NULL,
    pool        VARCHAR NOT NULL,
    t           DOUBLE NOT NULL,
    chain       BIGINT,
    token       VARCHAR,
    pool_type   VARCHAR,
    capacity    HUGEINT,
    available   HUGEINT,
    reserved    HUGEINT,
    outstanding HUGEINT,
    utilization DOUBLE,
    attributes  VARCHAR
);
"""

# On-chain data is keyed by where it sits on the chain, not by run: ``(chain, block_number,
# log_index)`` names a log on a canonical chain, and a second run over the same blocks adds
# nothing (``run_id`` is the run that first stored a row). uint256 amounts are exact in
# ``amount_text`` (decimal); ``amount`` is the same value as HUGEINT, NULL when it exceeds
# HUGEINT (an "infinite" approval). ``chain_ranges`` records each block range a chain run
# stored fully, which is where a resumed run continues.
_CHAIN_TABLES = """
CREATE TABLE chain_blocks (
    chain       BIGINT NOT NULL,
    number      BIGINT NOT NULL,
    hash        VARCHAR NOT NULL,
    parent_hash VARCHAR,
    timestamp   BIGINT NOT NULL,
    base_fee    HUGEINT,
    gas_used    BIGINT,
    gas_limit   BIGINT,
    tx_count    INTEGER,
    run_id      VARCHAR NOT NULL
);

CREATE TABLE chain_logs (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    tx_index     INTEGER,
    block_hash   VARCHAR,
    address      VARCHAR NOT NULL,
    topic0       VARCHAR,
    topic1       VARCHAR,
    topic2       VARCHAR,
    topic3       VARCHAR,
    data         VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE token_transfers (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    from_address VARCHAR NOT NULL,
    to_address   VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE token_approvals (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    owner        VARCHAR NOT NULL,
    spender      VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE weth_flows (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    account      VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE chain_ranges (
    run_id     VARCHAR NOT NULL,
    chain      BIGINT NOT NULL,
    from_block BIGINT NOT NULL,
    to_block   BIGINT NOT NULL,
    logs       BIGINT NOT NULL
);
"""

# The swap API sweep: every route attempt, the decoded router commands of each route, and the
# AMM pools' state read on chain. sqrt prices and liquidities exceed HUGEINT: decimal text.
_SWAP_TABLES = """
CREATE TABLE swap_routes (
    run_id         VARCHAR NOT NULL,
    attempt_id     VARCHAR NOT NULL,
    observed_at    TIMESTAMPTZ NOT NULL,
    network        VARCHAR,
    token_in       VARCHAR,
    token_out      VARCHAR,
    amount_in      HUGEINT,
    slippage_bps   INTEGER,
    status         INTEGER NOT NULL,
    latency_ms     DOUBLE,
    request_id     VARCHAR,
    amount_out     HUGEINT,
    min_amount_out HUGEINT,
    target         VARCHAR,
    call_data      VARCHAR,
    gas_used       BIGINT,
    gas_limit      BIGINT,
    error          VARCHAR
);

CREATE TABLE swap_route_legs (
    run_id         VARCHAR NOT NULL,
    attempt_id     VARCHAR NOT NULL,
    leg            INTEGER NOT NULL,
    command        VARCHAR NOT NULL,
    path           VARCHAR,
    fees           VARCHAR,
    hops           INTEGER,
    amount_in      HUGEINT,
    amount_min     HUGEINT,
    payer_is_user  BOOLEAN,
    recipient      VARCHAR
);

CREATE TABLE amm_pool_snapshots (
    snapshot_id    VARCHAR NOT NULL,
    chain          BIGINT NOT NULL,
    pool           VARCHAR NOT NULL,
    observed_at    TIMESTAMPTZ NOT NULL,
    block_number   BIGINT,
    kind           VARCHAR,
    token0         VARCHAR,
    token1         VARCHAR,
    fee            BIGINT,
    reserve0       HUGEINT,
    reserve1       HUGEINT,
    sqrt_price_x96 VARCHAR,
    tick           BIGINT,
    liquidity      VARCHAR
);
"""

_CREDIT_TABLES = """
CREATE TABLE credit_protocol (
    run_id                VARCHAR NOT NULL,
    round                 INTEGER NOT NULL,
    observed_at           TIMESTAMPTZ NOT NULL,
    chain                 BIGINT NOT NULL,
    collateral            VARCHAR NOT NULL,
    symbol                VARCHAR,
    escrow                VARCHAR,
    ltv_bps               INTEGER,
    maintenance_ltv_bps   INTEGER,
    liquidation_bonus_bps INTEGER,
    strategy              VARCHAR
);

CREATE TABLE credit_accounts (
    run_id                    VARCHAR NOT NULL,
    round                     INTEGER NOT NULL,
    observed_at               TIMESTAMPTZ NOT NULL,
    account                   VARCHAR NOT NULL,
    asset                     VARCHAR NOT NULL,
    debt                      DECIMAL(38,18),
    principal                 DECIMAL(38,18),
    interest                  DECIMAL(38,18),
    health_factor             DECIMAL(38,18),  -- null: infinite (no debt)
    m_health_factor           DECIMAL(38,18),
    liquidation_limit         DECIMAL(38,18),
    total_collateral_value    DECIMAL(38,18),
    total_credit_capacity     DECIMAL(38,18),
    remaining_credit_capacity DECIMAL(38,18),
    due_date                  TIMESTAMPTZ
);

CREATE TABLE credit_operators (
    run_id      VARCHAR NOT NULL,
    round       INTEGER NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    account     VARCHAR NOT NULL,
    receiver    VARCHAR NOT NULL,
    asset       VARCHAR,
    operator    VARCHAR
);

CREATE TABLE credit_topup_configs (
    run_id            VARCHAR NOT NULL,
    round             INTEGER NOT NULL,
    observed_at       TIMESTAMPTZ NOT NULL,
    account           VARCHAR NOT NULL,
    receiver          VARCHAR NOT NULL,
    asset             VARCHAR,
    threshold         HUGEINT,
    target_balance    HUGEINT,
    health_factor_bps INTEGER
);
"""

# Each credit account's collateral mix, read on chain from the credit hubs (the API reports
# totals only): amounts in the token's smallest units, exact.
_CREDIT_COLLATERAL_TABLE = """
CREATE TABLE credit_collateral (
    run_id      VARCHAR NOT NULL,
    round       INTEGER NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    account     VARCHAR NOT NULL,
    asset       VARCHAR NOT NULL,   -- the credit hub's asset: USDC, EURE
    chain_id    BIGINT NOT NULL,    -- the chain the collateral is locked on
    token       VARCHAR NOT NULL,
    symbol      VARCHAR,
    amount      HUGEINT,
    decimals    INTEGER
);
"""

# Uniswap pools found from their factories' creation logs, and what a pool snapshot holds
# beyond the swap sweep's columns: the tick spacing, the fee growth and the depth read (the
# initialised ticks of the bitmap words around the price, bounded by ``depth_ticks``; a quote
# is exact while the price stays within [min_tick, max_tick]). Fees are in pips (1e-6) for
# both kinds. uint256 values (fee growth) are decimal text; tick liquidity fits HUGEINT.
_AMM_POOL_TABLES = """
CREATE TABLE amm_pools (
    chain         BIGINT NOT NULL,
    pool          VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,
    token0        VARCHAR NOT NULL,
    token1        VARCHAR NOT NULL,
    fee           BIGINT NOT NULL,
    tick_spacing  INTEGER,
    factory       VARCHAR NOT NULL,
    created_block BIGINT NOT NULL,
    log_index     INTEGER,
    tx_hash       VARCHAR,
    run_id        VARCHAR NOT NULL
);

ALTER TABLE amm_pool_snapshots ADD COLUMN tick_spacing BIGINT;
ALTER TABLE amm_pool_snapshots ADD COLUMN fee_growth_global0_x128 VARCHAR;
ALTER TABLE amm_pool_snapshots ADD COLUMN fee_growth_global1_x128 VARCHAR;
ALTER TABLE amm_pool_snapshots ADD COLUMN depth_ticks BIGINT;
ALTER TABLE amm_pool_snapshots ADD COLUMN min_tick BIGINT;
ALTER TABLE amm_pool_snapshots ADD COLUMN max_tick BIGINT;
ALTER TABLE amm_pool_snapshots ADD COLUMN tick_count INTEGER;

CREATE TABLE amm_pool_ticks (
    snapshot_id              VARCHAR NOT NULL,
    chain                    BIGINT NOT NULL,
    pool                     VARCHAR NOT NULL,
    tick                     INTEGER NOT NULL,
    liquidity_net            HUGEINT NOT NULL,
    liquidity_gross          HUGEINT NOT NULL,
    fee_growth_outside0_x128 VARCHAR,
    fee_growth_outside1_x128 VARCHAR
);
"""

# Uniswap pool events read by the chain collector, and ERC-721 transfers (position NFTs) kept
# apart from ERC-20 ones. Signed amounts (positive: into the pool) fit HUGEINT; uint128 and
# uint160 values (liquidity, sqrt price) are decimal text; tokenIds are decimal text.
_POOL_EVENT_TABLES = """
CREATE TABLE pool_swaps (
    chain          BIGINT NOT NULL,
    block_number   BIGINT NOT NULL,
    log_index      INTEGER NOT NULL,
    tx_hash        VARCHAR NOT NULL,
    pool           VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,
    sender         VARCHAR,
    recipient      VARCHAR,
    amount0        HUGEINT,
    amount1        HUGEINT,
    sqrt_price_x96 VARCHAR,
    liquidity      VARCHAR,
    tick           INTEGER,
    run_id         VARCHAR NOT NULL
);

CREATE TABLE pool_liquidity (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    pool         VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    event        VARCHAR NOT NULL,
    owner        VARCHAR,
    counterparty VARCHAR,
    tick_lower   INTEGER,
    tick_upper   INTEGER,
    liquidity    VARCHAR,
    amount0      HUGEINT,
    amount1      HUGEINT,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE pool_syncs (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    pool         VARCHAR NOT NULL,
    reserve0     HUGEINT NOT NULL,
    reserve1     HUGEINT NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE pool_flashes (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    pool         VARCHAR NOT NULL,
    sender       VARCHAR,
    recipient    VARCHAR,
    amount0      HUGEINT,
    amount1      HUGEINT,
    paid0        HUGEINT,
    paid1        HUGEINT,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE nft_transfers (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    from_address VARCHAR NOT NULL,
    to_address   VARCHAR NOT NULL,
    token_id     VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);
"""

#: Every migration, in order. Append only; never edit a released entry.
# Which target a run observed (embedded: the simulated service in-process; served: a service on
# a loopback host; real: any other; simulated: a backtest), USD prices by source, chain, token
# and time, and token names read from chains (symbol and decimals, cached).
_TARGETS_AND_PRICES = """
ALTER TABLE collection_runs ADD COLUMN target_kind VARCHAR;

CREATE TABLE prices (
    source      VARCHAR NOT NULL,   -- scenario, oracle, pool, user
    chain       BIGINT NOT NULL,
    token       VARCHAR NOT NULL,   -- lowercase address
    symbol      VARCHAR,
    observed_at TIMESTAMPTZ NOT NULL,
    usd         DECIMAL(38,18) NOT NULL
);

CREATE TABLE tokens (
    chain    BIGINT NOT NULL,
    address  VARCHAR NOT NULL,      -- lowercase
    symbol   VARCHAR NOT NULL,
    decimals INTEGER NOT NULL,
    source   VARCHAR NOT NULL       -- registry, contract, scenario
);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "collection tables", _COLLECTION_TABLES),
    Migration(2, "backtest tables", _BACKTEST_TABLES),
    Migration(3, "chain tables", _CHAIN_TABLES),
    Migration(4, "credit tables", _CREDIT_TABLES),
    Migration(5, "swap tables", _SWAP_TABLES),
    Migration(6, "credit collateral", _CREDIT_COLLATERAL_TABLE),
    Migration(7, "amm pools", _AMM_POOL_TABLES),
    Migration(8, "pool events", _POOL_EVENT_TABLES),
    Migration(9, "run targets, prices and tokens", _TARGETS_AND_PRICES),
)

_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
"""


def _ledger_exists(con: duckdb.DuckDBPyConnection) -> bool:
    row = first_row(
        con,
        "SELECT count(*) FROM duckdb_tables() "
        "WHERE schema_name = 'main' AND table_name = 'schema_migrations'",
    )
    return bool(row and row[0])


def _applied(con: duckdb.DuckDBPyConnection) -> dict[int, str]:
    if not _ledger_exists(con):
        return {}
    rows = con.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    return {int(version): str(name) for version, name in rows}


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The highest migration version recorded in the database (0 for a fresh one).

    Example:
        >>> schema_version(duckdb.connect(":memory:"))
        0
    """
    applied = _applied(con)
    return max(applied, default=0)


def _check_history(
    applied: dict[int, str], migrations: tuple[Migration, ...], where: str
) -> list[Migration]:
    known = {m.version: m for m in migrations}
    latest = max(known, default=0)
    newest = max(applied, default=0)
    if newest > latest:
        raise StoreError(
            f"{where}: database has schema version {newest}, newer than this toolkit's "
            f"{latest}; a database is only opened by a toolkit that knows all its migrations "
            f"(upgrade the toolkit)"
        )
    for version, name in applied.items():
        if version not in known or known[version].name != name:
            expected = known[version].name if version in known else "nothing"
            raise StoreError(
                f"{where}: migration {version} is recorded as {name!r} but this toolkit "
                f"defines {expected!r}; migrations must never be edited once applied"
            )
    return [m for m in migrations if m.version not in applied]


def pending_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    *,
    where: str = ":memory:",
) -> list[Migration]:
    """Migrations not yet applied; raises ``StoreError`` for a newer or diverging database.

    Example:
        >>> [m.version for m in pending_migrations(duckdb.connect(":memory:"))][:3]
        [1, 2, 3]
    """
    return _check_history(_applied(con), migrations, where)


def apply_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    *,
    where: str = ":memory:",
    now: datetime | None = None,
) -> list[int]:
    """Apply the pending ``migrations``, each in its own transaction; return their versions.

    ``where`` names the database in error messages. A failing migration is rolled back
    whole and raises ``StoreError`` naming it; those applied before it stay applied.

    Example:
        >>> con = duckdb.connect(":memory:")
        >>> len(apply_migrations(con)) == len(MIGRATIONS), apply_migrations(con)
        (True, [])
    """
    versions = [m.version for m in migrations]
    if versions != sorted(set(versions)) or (versions and versions[0] < 1):
        raise StoreError("migrations: versions must be distinct, positive and increasing")
    pending = pending_migrations(con, migrations, where=where)
    if pending:
        con.execute(_LEDGER)
    done: list[int] = []
    for migration in pending:
        stamp = now if now is not None else datetime.now(UTC)
        try:
            con.execute("BEGIN TRANSACTION")
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                [migration.version, migration.name, stamp],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)
            raise StoreError(
                f"{where}: migration {migration.version} ({migration.name!r}) failed and was "
                f"rolled back: {exc}"
            ) from exc
        except BaseException:
            rollback(con)
            raise
        done.append(migration.version)
    return done
