-- Migration 8: pool events. Frozen: never edited once released.
-- Uniswap pool events read by the chain collector, and ERC-721 transfers (position NFTs) kept
-- apart from ERC-20 ones. Signed amounts (positive: into the pool) fit HUGEINT; uint128 and
-- uint160 values (liquidity, sqrt price) are decimal text; tokenIds are decimal text.
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
