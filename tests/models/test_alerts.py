"""The watch's pure side: rules, breaches and crossings against hand-computed health factors
(Aave's form: collateral × liquidation threshold / debt), the concentration caps, and a
position's debt accruing as the product's rule says."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from toolkit.arguments import ArgumentError
from toolkit.credit import DAY, DEFAULT_RULES, YEAR
from toolkit.models.health import (
    ALERT_KINDS,
    DEFAULT_ALERT_RULES,
    AlertRule,
    Position,
    breaches,
    crossings,
    unit_price,
)
from toolkit.store.schema.alerts import ALERT_RULE_KINDS

BELOW_1 = AlertRule("hf_below_1.0", "health_below", Decimal("1.0"))
BELOW_11 = AlertRule("hf_below_1.1", "health_below", Decimal("1.1"))
USD = 10**6


def test_health_rules_match_the_hand_computed_factor_at_each_threshold() -> None:
    book = {
        "0xa": ({"yobtc": 1_000 * USD}, 720 * USD),  # 1000 × 0.70 / 720 = 0.9722
        "0xb": ({"usdc": 1_000 * USD}, 880 * USD),  # 1000 × 0.925 / 880 = 1.0511
        "0xc": ({"usdc": 500 * USD, "gtusdcp": 500 * USD}, 400 * USD),  # 862.5 / 400
        "0xd": ({"usdc": 10 * USD}, 0),  # no debt: never in breach
        "0xe": ({"yobtc": 1_000 * USD}, 700 * USD),  # exactly 1.0: not below it
    }
    found = breaches(book, (BELOW_1, BELOW_11))
    assert found == {
        ("hf_below_1.0", "0xa"): Fraction(700, 720),
        ("hf_below_1.1", "0xa"): Fraction(700, 720),
        ("hf_below_1.1", "0xb"): Fraction(925, 880),
        ("hf_below_1.1", "0xe"): Fraction(1),
    }


def test_crossings_are_entries_and_exits_only() -> None:
    before = {("hf_below_1.1", "0xa"): Fraction(1), ("hf_below_1.1", "0xb"): Fraction(1)}
    now = {("hf_below_1.1", "0xb"): Fraction(1), ("hf_below_1.0", "0xc"): Fraction(9, 10)}
    found = crossings(before, now)
    assert [(c.rule, c.subject, c.state) for c in found] == [
        ("hf_below_1.0", "0xc", "breached"),
        ("hf_below_1.1", "0xa", "cleared"),
    ]
    assert crossings(now, now) == []


def test_a_concentration_cap_breach_names_its_group() -> None:
    book = {
        "0xa": ({"yobtc": 300 * USD, "usdc": 300 * USD}, 0),
        "0xb": ({"gtusdcp": 400 * USD}, 0),
    }
    caps = [r for r in DEFAULT_ALERT_RULES if r.kind == "concentration"]
    found = breaches(book, caps)
    # of 1,000: vaults yo-btc 30 % and gauntlet 40 % (cap 20 %), stablecoin USDC 70 % (cap
    # 60 %), chain base 100 % (cap 70 %) breach; protocol yo 30 % and morpho 40 % do not (40 %)
    assert sorted(found) == [
        ("cap_chain", "chain:base"),
        ("cap_stablecoin", "stablecoin:USDC"),
        ("cap_vault", "vault:gauntlet-usdc-prime"),
        ("cap_vault", "vault:yo-btc"),
    ]
    assert float(found[("cap_vault", "vault:yo-btc")]) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "kind": "health_below", "threshold": Decimal(1)}, "name"),
        ({"name": "x", "kind": "above", "threshold": Decimal(1)}, "kind"),
        ({"name": "x", "kind": "health_below", "threshold": 1.0}, "threshold"),
        ({"name": "x", "kind": "concentration", "threshold": Decimal(2)}, "threshold"),
        ({"name": "x", "kind": "concentration", "threshold": Decimal("0.2")}, "dimension"),
    ],
)
def test_bad_rules_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ArgumentError, match=f"^{message}:"):
        AlertRule(**kwargs)  # type: ignore[arg-type]


def test_the_store_and_the_models_agree_on_the_rule_kinds() -> None:
    assert ALERT_RULE_KINDS == ALERT_KINDS


def test_a_positions_debt_accrues_from_the_later_of_its_due_date_and_its_read() -> None:
    rules = DEFAULT_RULES
    p = Position({}, principal=1_000 * USD, interest=3 * USD, due=10 * DAY, read_at=20 * DAY)
    # 15 % a year on the principal from day 20 (already overdue at the read) to day 20 + 1 y
    assert p.debt(20 * DAY + YEAR, rules) == 1_000 * USD + 3 * USD + 150 * USD
    early = Position({}, principal=1_000 * USD, interest=0, due=30 * DAY, read_at=20 * DAY)
    assert early.debt(29 * DAY, rules) == 1_000 * USD  # not due yet
    assert early.debt(30 * DAY + YEAR // 2, rules) == 1_000 * USD + 75 * USD


def test_unit_prices_from_feeds_value_collateral_exactly() -> None:
    # 0.5 WBTC (8 decimals) at 60,000.12345678 USD, valued in USDC (6 decimals) at 1 USD
    price = unit_price(6_000_012_345_678, 8, 8, 100_000_000, 8, 6)
    p = Position({"0xbtc": 50_000_000}, principal=0, interest=0, due=None, read_at=0)
    assert p.values({"0xbtc": price}, {"0xbtc": "yobtc"}) == {"yobtc": 30_000_061_728}
