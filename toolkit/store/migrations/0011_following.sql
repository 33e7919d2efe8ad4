-- Migration 11: following chains and the service. Frozen: never edited once released.
-- A follower (``--follow``, ``toolkit watch``) runs for ever, so what it is doing is kept in the
-- store, where ``toolkit status`` reads it from any process: one row per follower, replaced at
-- each flush (head and lag in blocks and seconds, rows, errors, the last flush).
-- A chain follower checks each block's parent hash: ``chain_blocks.finality`` says how final a
-- stored block is (finalized and safe from the node's tags, or finalized by confirmation depth
-- on a node without them; unsafe otherwise), ``chain_reorgs`` records each reorg it replaced.
-- Snapshots read at a block say which (``block_hash``), so one read at an orphaned block is
-- found and read again: pool snapshots, and the credit collateral read on each hub's chain.
CREATE TABLE collector_status (
    name          VARCHAR NOT NULL,     -- the follower's name, unique in a database
    kind          VARCHAR NOT NULL,     -- the run kind it records (chain, pools, credit, ...)
    run_id        VARCHAR,
    target_url    VARCHAR NOT NULL,     -- redacted, as runs store it
    state         VARCHAR NOT NULL,     -- running, stopped, failed
    pid           BIGINT,
    host          VARCHAR,
    every_s       DOUBLE NOT NULL,      -- seconds between the starts of two polls
    started_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    last_flush_at TIMESTAMPTZ,
    head_block    BIGINT,
    stored_block  BIGINT,
    lag_blocks    BIGINT,
    lag_s         DOUBLE,
    polls         BIGINT NOT NULL,
    rows_written  BIGINT NOT NULL,
    rows_per_s    DOUBLE,
    errors        BIGINT NOT NULL,
    last_error    VARCHAR,
    last_error_at TIMESTAMPTZ,
    reorgs        BIGINT NOT NULL
);

CREATE TABLE chain_reorgs (
    chain        BIGINT NOT NULL,
    fork_block   BIGINT NOT NULL,       -- the first block replaced
    depth        BIGINT NOT NULL,       -- blocks replaced (the stored tip - fork_block + 1)
    old_hash     VARCHAR NOT NULL,      -- the stored hash at fork_block
    new_hash     VARCHAR,               -- the node's hash at fork_block (NULL: rolled back)
    detected_at  TIMESTAMPTZ NOT NULL,
    rows_deleted BIGINT NOT NULL,
    run_id       VARCHAR NOT NULL
);

ALTER TABLE chain_blocks ADD COLUMN finality VARCHAR;
ALTER TABLE amm_pool_snapshots ADD COLUMN block_hash VARCHAR;
ALTER TABLE credit_collateral ADD COLUMN hub_chain BIGINT;
ALTER TABLE credit_collateral ADD COLUMN block_number BIGINT;
ALTER TABLE credit_collateral ADD COLUMN block_hash VARCHAR;
