-- Migration 3: chain tables. Frozen: never edited once released.
-- On-chain data is keyed by where it sits on the chain, not by run: ``(chain, block_number,
-- log_index)`` names a log on a canonical chain, and a second run over the same blocks adds
-- nothing (``run_id`` is the run that first stored a row). uint256 amounts are exact in
-- ``amount_text`` (decimal); ``amount`` is the same value as HUGEINT, NULL when it exceeds
-- HUGEINT (an "infinite" approval). ``chain_ranges`` records each block range a chain run
-- stored fully, which is where a resumed run continues.
CREATE TABLE chain_blocks (
    chain       BIGINT NOT NULL,
    number      BIGINT NOT NULL,
    hash        VARCHAR NOT NULL,
    parent_hash VARCHAR,
    timestamp   BIGINT NOT NULL,
    base_fee    HUGEINT,
    gas_used    BIGINT,
    gas_limit   BIGINT,
    tx_count    INTEGER,
    run_id      VARCHAR NOT NULL
);

CREATE TABLE chain_logs (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    tx_index     INTEGER,
    block_hash   VARCHAR,
    address      VARCHAR NOT NULL,
    topic0       VARCHAR,
    topic1       VARCHAR,
    topic2       VARCHAR,
    topic3       VARCHAR,
    data         VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE token_transfers (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    from_address VARCHAR NOT NULL,
    to_address   VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE token_approvals (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    owner        VARCHAR NOT NULL,
    spender      VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE weth_flows (
    chain        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      VARCHAR NOT NULL,
    token        VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    account      VARCHAR NOT NULL,
    amount       HUGEINT,
    amount_text  VARCHAR NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE chain_ranges (
    run_id     VARCHAR NOT NULL,
    chain      BIGINT NOT NULL,
    from_block BIGINT NOT NULL,
    to_block   BIGINT NOT NULL,
    logs       BIGINT NOT NULL
);
