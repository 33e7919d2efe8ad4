-- Migration 14: intent orders seen on chain. Frozen: never edited once released.
-- The input settler escrow's Open, Finalised and Refunded logs (origin chain), the inputs and
-- outputs of each opened order (one row per leg: OIF orders may carry several), and the output
-- settler's OutputFilled logs (destination chain), decoded by the chain collector (issue 29:
-- the net flow per chain from what the chains saw). Each row sits at its log's place, so a
-- reorg deletes it with its block. Amounts are exact: amount_text always, amount HUGEINT
-- unless the uint256 exceeds it.
CREATE TABLE escrow_events (
    chain         BIGINT NOT NULL,
    block_number  BIGINT NOT NULL,
    log_index     INTEGER NOT NULL,
    tx_hash       VARCHAR NOT NULL,
    escrow        VARCHAR NOT NULL,
    event         VARCHAR NOT NULL,
    order_id      VARCHAR NOT NULL,
    user_address  VARCHAR,
    nonce         VARCHAR,
    expires       BIGINT,
    fill_deadline BIGINT,
    input_oracle  VARCHAR,
    solver        VARCHAR,
    destination   VARCHAR,
    run_id        VARCHAR NOT NULL
);

CREATE TABLE escrow_order_legs (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    escrow       VARCHAR NOT NULL,
    order_id     VARCHAR NOT NULL,
    leg          VARCHAR NOT NULL,
    position     INTEGER NOT NULL,
    leg_chain    BIGINT,
    token        VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    recipient    VARCHAR,
    settler      VARCHAR,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE output_fills (
    chain          BIGINT NOT NULL,
    block_number   BIGINT NOT NULL,
    log_index      INTEGER NOT NULL,
    tx_hash        VARCHAR NOT NULL,
    settler        VARCHAR NOT NULL,
    order_id       VARCHAR NOT NULL,
    solver         VARCHAR NOT NULL,
    filled_at      BIGINT,
    token          VARCHAR NOT NULL,
    amount         HUGEINT,
    amount_text    VARCHAR NOT NULL,
    ordered_amount HUGEINT,
    recipient      VARCHAR NOT NULL,
    run_id         VARCHAR NOT NULL
);
