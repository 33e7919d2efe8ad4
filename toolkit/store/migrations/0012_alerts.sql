-- Migration 12: alerts. Frozen: never edited once released.
-- A health watch's threshold crossings (an account's health factor below a rule's threshold, a
-- concentration cap breached), one row per rule, subject and block, and every attempt to post
-- one to a webhook (an alert without a delivered attempt is still owed).
CREATE TABLE alerts (
    watch            VARCHAR NOT NULL,   -- the watch's name
    chain            BIGINT NOT NULL,
    rule             VARCHAR NOT NULL,   -- the rule's name, e.g. hf_below_1.0
    subject          VARCHAR NOT NULL,   -- an account (lowercase), or dimension:group
    block_number     BIGINT NOT NULL,
    alert_id         VARCHAR NOT NULL,   -- watch:chain:rule:subject:block, the webhook's key
    state            VARCHAR NOT NULL,   -- breached, cleared
    kind             VARCHAR NOT NULL,   -- health_below, concentration
    threshold        DECIMAL(38,18) NOT NULL,
    value            DECIMAL(38,18),     -- the health factor or the share; null: no debt
    asset            VARCHAR,            -- the credit asset
    debt             HUGEINT,            -- smallest units of the credit asset
    collateral_value HUGEINT,            -- smallest units of the credit asset
    block_time       TIMESTAMPTZ NOT NULL,
    observed_at      TIMESTAMPTZ NOT NULL
);

CREATE TABLE alert_deliveries (
    alert_id  VARCHAR NOT NULL,
    attempt   INTEGER NOT NULL,          -- 1, 2, ... per alert
    delivered BOOLEAN NOT NULL,
    status    INTEGER NOT NULL,          -- the webhook's HTTP status, 0: no answer
    sent_at   TIMESTAMPTZ NOT NULL,
    endpoint  VARCHAR,                   -- the webhook URL as the redaction policy shows it
    error     VARCHAR
);
