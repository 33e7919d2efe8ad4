-- Migration 13: a backtest's inventory per chain and token over time, and its rebalancing
-- transfers. Frozen: never edited once released.
-- Inventory has a chain (issue 29): a fill spends the destination's, a settlement credits the
-- origin's, and only a transfer (a bridge with a latency and a cost) moves it between chains.
-- ``t`` is virtual seconds since the replay started; amounts are exact (HUGEINT); the run's
-- rebalancing policy is in its ``collection_runs.parameters``; ``attributes`` (a JSON object)
-- carries replay columns the tables do not name (shares, USD figures).
CREATE TABLE backtest_inventory (
    run_id        VARCHAR NOT NULL,
    t             DOUBLE NOT NULL,
    chain         BIGINT NOT NULL,
    token         VARCHAR NOT NULL,
    on_chain      HUGEINT,
    unallocated   HUGEINT,
    reserved      HUGEINT,
    outstanding   HUGEINT,
    receivable_in HUGEINT,
    in_flight_in  HUGEINT,
    in_flight_out HUGEINT,
    attributes    VARCHAR
);

CREATE TABLE backtest_transfers (
    run_id      VARCHAR NOT NULL,
    transfer_id BIGINT NOT NULL,
    token       VARCHAR,
    src_chain   BIGINT,
    dst_chain   BIGINT,
    amount      HUGEINT,
    fee         HUGEINT,
    sent_at     DOUBLE,
    arrives_at  DOUBLE,
    arrived     BOOLEAN,
    bridge      VARCHAR,
    gas_usd     DOUBLE,
    attributes  VARCHAR
);
