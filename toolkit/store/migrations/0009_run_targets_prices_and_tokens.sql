-- Migration 9: run targets, prices and tokens. Frozen: never edited once released.
-- Which target a run observed (embedded: the simulated service in-process; served: a service on
-- a loopback host; real: any other; simulated: a backtest), USD prices by source, chain, token
-- and time, and token names read from chains (symbol and decimals, cached).
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
