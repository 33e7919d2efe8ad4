-- Migration 2: backtest tables. Frozen: never edited once released.
-- Backtest results are generic on purpose: ``t`` is virtual time in seconds since the replay
-- started, and ``attributes`` (a JSON object) carries replay columns the contract does not name.
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
