"""Table contracts: threshold crossings a health watch found, and their webhook deliveries.

An alert is one crossing of one rule by one subject (an account, or a ``dimension:group`` of
the book's concentration) at one block; its natural key makes a crossing written twice (a
restart re-evaluating the same block) one row. Deliveries are appended, one row per attempt
to post an alert to the webhook, so an alert without a delivered row is still owed.
"""

from __future__ import annotations

from typing import Final

from toolkit.store.schema.columns import _B, _BIG, _I, _TS, _V, TableSpec, _amount, _c

#: A crossing enters a breach or leaves it.
ALERT_STATES: Final = ("breached", "cleared")
#: The rules' kinds (:data:`toolkit.models.health.ALERT_KINDS`).
ALERT_RULE_KINDS: Final = ("health_below", "concentration")
_FIGURE = "DECIMAL(38,18)"

SPECS: tuple[TableSpec, ...] = (
    TableSpec(
        "alerts",
        (
            _c("watch", _V, required=True),
            _c("chain", _BIG, required=True),
            _c("rule", _V, required=True),
            _c("subject", _V, required=True),
            _c("block_number", _BIG, required=True),
            _c("alert_id", _V, required=True),
            _c("state", _V, required=True, choices=ALERT_STATES),
            _c("kind", _V, required=True, choices=ALERT_RULE_KINDS),
            _c("threshold", _FIGURE, required=True),
            _c("value", _FIGURE),
            _c("asset", _V),
            _amount("debt"),
            _amount("collateral_value"),
            _c("block_time", _TS, required=True),
            _c("observed_at", _TS, required=True),
        ),
        ("watch", "chain", "rule", "subject", "block_number"),
    ),
    TableSpec(
        "alert_deliveries",
        (
            _c("alert_id", _V, required=True),
            _c("attempt", _I, required=True),
            _c("delivered", _B, required=True),
            _c("status", _I, required=True),
            _c("sent_at", _TS, required=True),
            _c("endpoint", _V),
            _c("error", _V),
        ),
        ("alert_id", "attempt"),
    ),
)
