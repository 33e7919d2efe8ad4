-- Migration 6: credit collateral. Frozen: never edited once released.
-- Each credit account's collateral mix, read on chain from the credit hubs (the API reports
-- totals only): amounts in the token's smallest units, exact.
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
