"""The book's collateral concentration against the published caps (per vault, protocol,
stablecoin and chain)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError

__all__ = ["DEFAULT_CAPS", "DEFAULT_GROUPS", "concentration"]


#: The published concentration caps, as shares of the book's collateral value (research §4:
#: "per vault 8–20 % TVL, per protocol 40 %, per stablecoin 60 %, per chain 70 %"; the vault cap
#: is the top of its published range).
DEFAULT_CAPS: dict[str, float] = {
    "vault": 0.20,
    "protocol": 0.40,
    "stablecoin": 0.60,
    "chain": 0.70,
}

#: What each default collateral asset counts toward (research §4, supported assets and earn
#: strategies: all on Base; the vaults' strategies and the protocols behind them).
DEFAULT_GROUPS: dict[str, dict[str, str]] = {
    "usdc": {"stablecoin": "USDC", "chain": "base"},
    "gtusdcp": {
        "vault": "gauntlet-usdc-prime",
        "protocol": "morpho",
        "stablecoin": "USDC",
        "chain": "base",
    },
    "superusdc": {
        "vault": "superform-usdc",
        "protocol": "superform",
        "stablecoin": "USDC",
        "chain": "base",
    },
    "yousd": {"vault": "yo-usdc", "protocol": "yo", "stablecoin": "USDC", "chain": "base"},
    "yobtc": {"vault": "yo-btc", "protocol": "yo", "chain": "base"},
}


def concentration(
    values: Mapping[str, float],
    *,
    groups: Mapping[str, Mapping[str, str]] | None = None,
    caps: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """The book's collateral concentration against the caps: one row per (dimension, group).

    ``values`` is the collateral value per asset (credit-asset units: amount × price, summed
    over accounts, e.g. ``(collateral * prices).sum(axis=0)``); ``groups`` says which vault,
    protocol, stablecoin and chain each asset counts toward (default :data:`DEFAULT_GROUPS`),
    ``caps`` the largest share of the book's total per dimension (default
    :data:`DEFAULT_CAPS`). Columns: ``dimension``, ``group``, ``value``, ``share``, ``cap``,
    ``headroom`` (value that may still be added before the cap binds, other assets unchanged;
    0 once breached) and ``breach``. Under a price shock, call it with the shocked values.

    >>> frame = concentration({"usdc": 300.0, "gtusdcp": 500.0, "yobtc": 200.0})
    >>> frame.filter(dimension="vault").select("group", "share", "breach").rows()
    [('gauntlet-usdc-prime', 0.5, True), ('yo-btc', 0.2, False)]
    """
    mapping = DEFAULT_GROUPS if groups is None else groups
    limits = DEFAULT_CAPS if caps is None else caps
    for dimension, cap in limits.items():
        if not 0 < cap <= 1:
            raise ArgumentError(f"caps.{dimension}", "a share in (0, 1]", cap)
    totals: dict[tuple[str, str], float] = {}
    for asset, value in values.items():
        if not np.isfinite(value) or value < 0:
            raise ArgumentError(f"values.{asset}", "finite and non-negative", value)
        if asset not in mapping:
            raise ArgumentError("groups", f"an entry for every asset (none for {asset!r})", asset)
        for dimension, group in mapping[asset].items():
            if dimension in limits:
                key = (dimension, group)
                totals[key] = totals.get(key, 0.0) + float(value)
    book = float(sum(values.values()))
    rows = []
    for (dimension, group), value in sorted(totals.items()):
        cap = float(limits[dimension])
        share = value / book if book > 0 else 0.0
        # x more of this group keeps it within the cap while (value + x) <= cap (book + x).
        headroom = max(0.0, (cap * book - value) / (1 - cap)) if cap < 1 else float("inf")
        rows.append((dimension, group, value, share, cap, headroom, share > cap))
    schema = {
        "dimension": pl.String,
        "group": pl.String,
        "value": pl.Float64,
        "share": pl.Float64,
        "cap": pl.Float64,
        "headroom": pl.Float64,
        "breach": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")
