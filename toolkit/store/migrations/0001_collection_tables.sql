-- Migration 1: collection tables. Frozen: never edited once released.
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
