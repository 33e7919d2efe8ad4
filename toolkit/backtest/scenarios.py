"""Scenario variants for backtests: scale pools and fees, change windows.

An override mapping (``replay(..., overrides=...)`` and every grid point of ``sweep``) holds:

- ``pool_scale``: a factor on every pool balance (``balance * factor``, rounded down, at
  least 1 smallest unit);
- ``fee_scale``: a factor on every fee tier's ``fee_bps`` (rounded half up to whole bps);
- any field of :class:`toolkit.scenario.Windows` (``quote_s``, ``order_s``,
  ``exclusive_s``, ``settlement_delay_s``, ...): whole seconds;
- ``rebalancing.policy`` (``none``, ``threshold``, ``periodic`` or ``instant-free``),
  ``rebalancing.period_s``, ``rebalancing.overshoot_share`` and
  ``rebalancing.min_transfer_usd``: the scenario's ``[rebalancing]`` table, so that sweeps can
  compare policies on one flow (a policy that moves inventory needs the scenario's bridges).

Factors are read through ``str`` into exact fractions, so ``1.1`` means exactly 11/10 and a
variant is the same on every machine. Variants are built with ``dataclasses.replace``, which
re-validates the scenario.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from toolkit.scenario import FeeTier, Scenario, ScenarioError, Windows
from toolkit.scenario.rebalancing import Rebalancing

__all__ = ["OVERRIDE_KEYS", "apply_overrides"]

_WINDOW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Windows))
#: The ``[rebalancing]`` keys an override may set (its targets are the scenario's).
_REBALANCING_FIELDS: tuple[str, ...] = (
    "policy",
    "period_s",
    "overshoot_share",
    "min_transfer_usd",
)
#: Every key an override mapping (or a sweep grid) may hold.
OVERRIDE_KEYS: tuple[str, ...] = (
    "pool_scale",
    "fee_scale",
    *_WINDOW_FIELDS,
    *(f"rebalancing.{name}" for name in _REBALANCING_FIELDS),
)


def _factor(value: object, name: str) -> Fraction:
    problem = f"{name}: must be a finite number > 0, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        raise ValueError(problem)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(problem)
        exact = Fraction(str(value))
    else:
        exact = Fraction(value)
    if exact <= 0:
        raise ValueError(problem)
    return exact


def _round_half_up(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


def apply_overrides(scenario: Scenario, overrides: Mapping[str, Any] | None) -> Scenario:
    """``scenario`` with pools, fees and windows changed by ``overrides`` (see module doc).

    >>> from toolkit.scenario import load_scenario
    >>> base = load_scenario("single-pool")
    >>> s = apply_overrides(base, {"pool_scale": 2, "quote_s": 30})
    >>> s.pools[0].balance, s.windows.quote_s
    (30000000000, 30)
    """
    if overrides is None:
        return scenario
    if not isinstance(overrides, Mapping):
        raise ValueError("overrides: must be a mapping of override name to value")
    for key in overrides:
        if key not in OVERRIDE_KEYS:
            raise ValueError(f"overrides: unknown key {key!r}; known: {', '.join(OVERRIDE_KEYS)}")
    changes: dict[str, Any] = {}
    if "pool_scale" in overrides:
        factor = _factor(overrides["pool_scale"], "pool_scale")
        changes["pools"] = tuple(
            dataclasses.replace(p, balance=max(1, math.floor(p.balance * factor)))
            for p in scenario.pools
        )
    if "fee_scale" in overrides:
        factor = _factor(overrides["fee_scale"], "fee_scale")
        changes["routes"] = tuple(
            dataclasses.replace(
                r,
                fee_tiers=tuple(
                    FeeTier(_round_half_up(t.fee_bps * factor), t.min_amount, t.max_amount)
                    for t in r.fee_tiers
                ),
            )
            for r in scenario.routes
        )
    windows = {k: overrides[k] for k in _WINDOW_FIELDS if k in overrides}
    for key, value in windows.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}: must be a whole number of seconds, got {value!r}")
    if windows:
        changes["windows"] = dataclasses.replace(scenario.windows, **windows)
    rebalancing = _rebalancing(scenario.rebalancing, overrides)
    if rebalancing is not None:
        changes["rebalancing"] = rebalancing
    if not changes:
        return scenario
    try:
        return dataclasses.replace(scenario, **changes)
    except ScenarioError as exc:
        raise ValueError(f"overrides: the variant is not a valid scenario: {exc}") from None


def _rebalancing(current: Rebalancing, overrides: Mapping[str, Any]) -> Rebalancing | None:
    """``current`` with the ``rebalancing.*`` overrides applied (None: none given); the
    variant is checked with the whole scenario, which names a bad value's key."""
    given = {
        name: overrides[f"rebalancing.{name}"]
        for name in _REBALANCING_FIELDS
        if f"rebalancing.{name}" in overrides
    }
    if not given:
        return None
    for name in ("overshoot_share", "min_transfer_usd"):
        if name in given:
            value = given[name]
            if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
                raise ValueError(f"rebalancing.{name}: must be a number, got {value!r}")
            given[name] = Decimal(str(value))
    return dataclasses.replace(current, **given)
