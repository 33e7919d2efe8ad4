"""Table contracts of the followers' bookkeeping: what each follower is doing
(``collector_status``, one row per follower, replaced at each flush) and the reorgs a chain
follower replaced (``chain_reorgs``). They describe collection, like ``collection_runs``: their
rows are not counted as any run's rows."""

from __future__ import annotations

from toolkit.store.schema.columns import (
    _BIG,
    _D,
    _TS,
    _V,
    FOLLOWER_STATES,
    RUN_KINDS,
    TableSpec,
    _c,
)

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "collector_status",
        (
            _c("name", _V, required=True),
            _c("kind", _V, required=True, choices=RUN_KINDS),
            _c("run_id", _V),
            _c("target_url", _V, required=True),
            _c("state", _V, required=True, choices=FOLLOWER_STATES),
            _c("pid", _BIG),
            _c("host", _V),
            _c("every_s", _D, required=True),
            _c("started_at", _TS, required=True),
            _c("updated_at", _TS, required=True),
            _c("last_flush_at", _TS),
            _c("head_block", _BIG),
            _c("stored_block", _BIG),
            _c("lag_blocks", _BIG),
            _c("lag_s", _D),
            _c("polls", _BIG, required=True),
            _c("rows_written", _BIG, required=True),
            _c("rows_per_s", _D),
            _c("errors", _BIG, required=True),
            _c("last_error", _V),
            _c("last_error_at", _TS),
            _c("reorgs", _BIG, required=True),
        ),
        ("name",),
    ),
    TableSpec(
        "chain_reorgs",
        (
            _c("chain", _BIG, required=True),
            _c("fork_block", _BIG, required=True),
            _c("depth", _BIG, required=True),
            _c("old_hash", _V, required=True),
            _c("new_hash", _V),
            _c("detected_at", _TS, required=True),
            _c("rows_deleted", _BIG, required=True),
            _c("run_id", _V, required=True),
        ),
        ("chain", "fork_block", "old_hash"),
    ),
)

#: Tables that describe collection rather than hold observations: no run counts their rows.
LEDGERS: tuple[str, ...] = ("collection_runs", "collector_status", "chain_reorgs")
