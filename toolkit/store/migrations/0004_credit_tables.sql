-- Migration 4: credit tables. Frozen: never edited once released.
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
