-- Migration 5: swap tables. Frozen: never edited once released.
-- The swap API sweep: every route attempt, the decoded router commands of each route, and the
-- AMM pools' state read on chain. sqrt prices and liquidities exceed HUGEINT: decimal text.
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
