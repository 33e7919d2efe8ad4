"""Threshold rules over a credit book, and the crossings between two evaluations: what a
health watch (:class:`toolkit.collect.HealthWatch`) alerts on, pure.

A book here is exact: each account's collateral values in the credit asset's smallest units
(per rule key) and its debt, whose health factor is :func:`toolkit.credit.figures`' (the one
definition). Rules (:class:`AlertRule`):

- ``health_below``: an account's health factor is below ``threshold`` (e.g. 1.1: close to
  liquidation; 1.0: liquidatable). Accounts without debt never breach it.
- ``concentration``: a group's share of the book's collateral value along ``dimension``
  (``vault``, ``protocol``, ``stablecoin``, ``chain``: :func:`~toolkit.models.health.
  concentration`'s groups) is above ``threshold``, the published cap.

:func:`breaches` gives every (rule, subject) in breach with its value (the health factor, or
the share); :func:`crossings` compares it with what was in breach before: each subject that
entered a breach is a ``breached`` crossing, each that left one a ``cleared`` crossing.

>>> from decimal import Decimal
>>> book = {"0xa": ({"yobtc": 1_000_000_000}, 750_000_000),
...         "0xb": ({"usdc": 1_000_000_000}, 100_000_000)}
>>> now = breaches(book, (AlertRule("hf_below_1", "health_below", Decimal(1)),))
>>> [(k, round(float(v), 3)) for k, v in now.items()]
[(('hf_below_1', '0xa'), 0.933)]
>>> [c.state for c in crossings({}, now)], crossings(now, now)
(['breached'], [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final, Literal

from toolkit.arguments import ArgumentError
from toolkit.credit import DEFAULT_RULES, ProductRules, figures
from toolkit.models.health.caps import DEFAULT_CAPS, DEFAULT_GROUPS, concentration

__all__ = [
    "ALERT_KINDS",
    "DEFAULT_ALERT_RULES",
    "AlertRule",
    "Crossing",
    "alert_rules",
    "breaches",
    "crossings",
]

AlertKind = Literal["health_below", "concentration"]
ALERT_KINDS: Final = ("health_below", "concentration")

#: An account's book entry: collateral value per rule key (credit-asset smallest units), debt.
Entry = tuple[Mapping[str, int], int]
Key = tuple[str, str]


@dataclass(frozen=True)
class AlertRule:
    """A threshold: ``name`` (what the alerts table and the webhook call it), ``kind``
    (:data:`ALERT_KINDS`), ``threshold`` (a health factor, or a share in (0, 1]) and, for a
    concentration cap, its ``dimension``.

    >>> AlertRule("cap_vault", "concentration", Decimal("0.2"), "vault").dimension
    'vault'
    >>> AlertRule("x", "health_below", Decimal(0))
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: threshold: must be a health factor above 0, got Decimal('0')
    """

    name: str
    kind: AlertKind
    threshold: Decimal
    dimension: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or ":" in self.name:
            raise ArgumentError("name", "a non-empty rule name without ':'", self.name)
        if self.kind not in ALERT_KINDS:
            raise ArgumentError("kind", f"one of {', '.join(ALERT_KINDS)}", self.kind)
        if not isinstance(self.threshold, Decimal) or not self.threshold.is_finite():
            raise ArgumentError("threshold", "a finite Decimal", self.threshold)
        if self.kind == "health_below" and self.threshold <= 0:
            raise ArgumentError("threshold", "a health factor above 0", self.threshold)
        if self.kind == "concentration":
            if not 0 < self.threshold <= 1:
                raise ArgumentError("threshold", "a share in (0, 1]", self.threshold)
            if self.dimension not in DEFAULT_CAPS:
                dims = ", ".join(DEFAULT_CAPS)
                raise ArgumentError("dimension", f"one of {dims}", self.dimension)


def alert_rules(
    health_below: Sequence[Decimal], caps: Mapping[str, Decimal | float]
) -> tuple[AlertRule, ...]:
    """The rules of thresholds as a plan states them: a ``health_below`` rule per health
    factor (named ``hf_below_<threshold>``), then a concentration rule per dimension of
    ``caps`` (named ``cap_<dimension>``).

    >>> [r.name for r in alert_rules([Decimal("1.05")], {"vault": 0.25})]
    ['hf_below_1.05', 'cap_vault']
    """
    return (
        *(AlertRule(f"hf_below_{hf}", "health_below", hf) for hf in health_below),
        *(
            AlertRule(f"cap_{dimension}", "concentration", Decimal(str(cap)), dimension)
            for dimension, cap in caps.items()
        ),
    )


#: Close to liquidation (1.1), liquidatable (1.0), and the published concentration caps.
DEFAULT_ALERT_RULES: Final[tuple[AlertRule, ...]] = alert_rules(
    (Decimal("1.1"), Decimal("1.0")), DEFAULT_CAPS
)


@dataclass(frozen=True)
class Crossing:
    """A subject entering (``breached``) or leaving (``cleared``) a rule's breach; ``value``
    is the health factor or the share when it crossed (None when it left with no debt)."""

    rule: str
    subject: str
    state: Literal["breached", "cleared"]
    value: Fraction | None


def _health_factors(book: Mapping[str, Entry], product: ProductRules) -> dict[str, Fraction | None]:
    return {
        account: figures(values, principal=debt, rules=product).health_factor
        for account, (values, debt) in book.items()
    }


def breaches(
    book: Mapping[str, Entry],
    rules: Sequence[AlertRule],
    *,
    product: ProductRules = DEFAULT_RULES,
    groups: Mapping[str, Mapping[str, str]] = DEFAULT_GROUPS,
) -> dict[Key, Fraction]:
    """Every ``(rule name, subject)`` in breach and its value, for ``book`` (account → (values
    per rule key, debt)). Concentration counts the assets ``groups`` lists (subjects
    ``dimension:group``)."""
    found: dict[Key, Fraction] = {}
    if any(r.kind == "health_below" for r in rules):
        factors = _health_factors(book, product)
        for rule in (r for r in rules if r.kind == "health_below"):
            limit = Fraction(rule.threshold)
            for account, hf in factors.items():
                if hf is not None and hf < limit:
                    found[(rule.name, account)] = hf
    caps = [r for r in rules if r.kind == "concentration"]
    if caps:
        totals: dict[str, int] = {}
        for values, _ in book.values():
            for asset, value in values.items():
                if asset in groups:
                    totals[asset] = totals.get(asset, 0) + value
        frame = concentration(
            {a: float(v) for a, v in totals.items()},
            groups=groups,
            caps={r.dimension: float(r.threshold) for r in caps if r.dimension},
        )
        for rule in caps:
            for _, group, share in (
                frame.filter(dimension=rule.dimension).select("dimension", "group", "share").rows()
            ):
                if share > float(rule.threshold):
                    found[(rule.name, f"{rule.dimension}:{group}")] = Fraction(share)
    return dict(sorted(found.items()))


def crossings(before: Mapping[Key, object], now: Mapping[Key, Fraction]) -> list[Crossing]:
    """The crossings from the breaches ``before`` (keys in breach) to those ``now``: entered
    breaches first, then cleared ones, each sorted by rule and subject."""
    entered = [
        Crossing(rule, subject, "breached", value)
        for (rule, subject), value in sorted(now.items())
        if (rule, subject) not in before
    ]
    left = [
        Crossing(rule, subject, "cleared", None)
        for (rule, subject) in sorted(before)
        if (rule, subject) not in now
    ]
    return entered + left
