"""The legs a user's intents strategies are costed from
(:func:`~toolkit.models.routes.firm_vs_indicative`), one row each."""

from __future__ import annotations

from typing import Any, Final

import polars as pl


def leg(
    strategy: str,
    size: float,
    step: int,
    leg: str,
    network: str,
    delay: float,
    value_in: float,
    value_out: float | None,
    gas: float,
) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "size_usd": size,
        "step": step,
        "leg": leg,
        "network": network,
        "delay_s": delay,
        "value_in_usd": value_in,
        "value_out_usd": value_out,
        "gas_usd": gas,
    }


#: Routes executed at once on the state they were quoted on do not revert.
NO_REVERTS: Final = pl.DataFrame(
    {"network": ["source", "destination"], "delay_s": [0.0, 0.0], "revert_share": [0.0, 0.0]}
)


def bps(cost: float | None, size: float) -> float | None:
    return None if cost is None else cost / size * 10_000
