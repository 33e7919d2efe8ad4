"""The flow contracts, written once: the columns and dtypes of an intents (RFQ) flow, a swap
flow and a credit flow, and the actions a credit flow's borrowers take.

The generators (:mod:`.intents`, :mod:`.activity`) build frames of exactly these schemas; the
checks (:mod:`.checks`) and every consumer (the backtest replay, the traffic that plays flows on
a live service) read the column lists derived from them, so a column added here is added
everywhere.

>>> FLOW_COLUMNS[:3], SWAP_FLOW_COLUMNS[1:3], CREDIT_ACTIONS
(('t', 'src_chain', 'dst_chain'), ('chain', 'token_in'), ('lock', 'draw', 'repay', 'unlock'))
"""

from __future__ import annotations

from typing import Final

import polars as pl

__all__ = [
    "CREDIT_ACTIONS",
    "CREDIT_FLOW_COLUMNS",
    "CREDIT_FLOW_SCHEMA",
    "EXACT_INPUT",
    "EXACT_OUTPUT",
    "FLOW_COLUMNS",
    "FLOW_SCHEMA",
    "SWAP_FLOW_COLUMNS",
    "SWAP_FLOW_SCHEMA",
]

EXACT_INPUT: Final = "ExactInput"
EXACT_OUTPUT: Final = "ExactOutput"

#: The dtypes of a generated intents flow (a replay accepts any integer/float widths too).
FLOW_SCHEMA: Final = pl.Schema(
    {
        "request_id": pl.String(),
        "t": pl.Float64(),
        "src_chain": pl.Int64(),
        "dst_chain": pl.Int64(),
        "token": pl.String(),
        "amount": pl.Int128(),
        "type": pl.String(),
        "converts": pl.Boolean(),
        "convert_delay": pl.Float64(),
    }
)
#: The columns an intents flow must have: ``request_id`` is optional (row numbers serve without
#: it), every other column of :data:`FLOW_SCHEMA` is read.
FLOW_COLUMNS: Final = tuple(name for name in FLOW_SCHEMA.names() if name != "request_id")

#: The dtypes of a generated swap flow.
SWAP_FLOW_SCHEMA: Final = pl.Schema(
    {
        "t": pl.Float64(),
        "chain": pl.Int64(),
        "token_in": pl.String(),
        "token_out": pl.String(),
        "amount_in": pl.Int128(),
    }
)
#: The columns of a swap flow (all of them are read).
SWAP_FLOW_COLUMNS: Final = tuple(SWAP_FLOW_SCHEMA.names())

#: The dtypes of a generated credit flow.
CREDIT_FLOW_SCHEMA: Final = pl.Schema(
    {"t": pl.Float64(), "borrower": pl.Int64(), "action": pl.String(), "amount": pl.Int128()}
)
#: The columns of a credit flow (all of them are read).
CREDIT_FLOW_COLUMNS: Final = tuple(CREDIT_FLOW_SCHEMA.names())
#: What a borrower does on the credit surface, in the order of a cycle (the rows' ``action``).
CREDIT_ACTIONS: Final = ("lock", "draw", "repay", "unlock")
