-- Migration 7: amm pools. Frozen: never edited once released.
-- Uniswap pools found from their factories' creation logs, and what a pool snapshot holds
-- beyond the swap sweep's columns: the tick spacing, the fee growth and the depth read (the
-- initialised ticks of the bitmap words around the price, bounded by ``depth_ticks``; a quote
-- is exact while the price stays within [min_tick, max_tick]). Fees are in pips (1e-6) for
-- both kinds. uint256 values (fee growth) are decimal text; tick liquidity fits HUGEINT.
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
