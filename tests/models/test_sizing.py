"""Hold-time model and pool sizing."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.models.capacity import (
    erlang_b,
    erlang_b_load,
    kaufman_roberts,
    max_rfq_rate_per_s,
    mean_hold,
    offered_load,
    pool_size_for,
    to_units,
)


def test_mean_hold_modes() -> None:
    assert mean_hold(0.0) == 15.0
    assert mean_hold(1.0) == 60.0
    assert mean_hold(0.5) == pytest.approx(37.5)
    assert mean_hold(0.5, mode="add") == pytest.approx(45.0)
    # Conversion 4 s after the quote: the order reservation runs 60 s from the conversion.
    assert mean_hold(0.25, convert_delay_s=4.0) == pytest.approx(0.75 * 15 + 0.25 * 64)
    # The two modes are the extremes of the conversion delay.
    assert mean_hold(0.3, convert_delay_s=0.0) == mean_hold(0.3)
    assert mean_hold(0.3, convert_delay_s=15.0) == pytest.approx(mean_hold(0.3, mode="add"))
    assert mean_hold(0.5, quote_s=10.0, order_s=30.0) == pytest.approx(20.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_convert": 1.5}, "p_convert: must be a finite number >= 0 and <= 1, got 1.5"),
        (
            {"p_convert": 0.1, "quote_s": 0.0},
            "quote_s: must be a finite number > 0, got 0.0",
        ),
        ({"p_convert": 0.1, "mode": "both"}, "mode: must be 'replace' or 'add', got 'both'"),
        (
            {"p_convert": 0.1, "convert_delay_s": 16.0},
            "convert_delay_s: must be a finite number >= 0 and <= 15, got 16.0",
        ),
        (
            {"p_convert": 0.1, "mode": "add", "convert_delay_s": 1.0},
            "convert_delay_s: only applies",
        ),
    ],
)
def test_mean_hold_rejects_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mean_hold(**kwargs)  # type: ignore[arg-type]


def test_offered_load() -> None:
    assert offered_load(2.0, 15.0) == 30.0
    with pytest.raises(ValueError, match="rate_per_s: must be a finite number >= 0"):
        offered_load(-1.0, 15.0)


def test_to_units() -> None:
    assert to_units([500, 2_000, 10_000]) == (500, [1, 4, 20])
    assert to_units([500, 2_000], unit=250) == (250, [2, 8])
    big = 10**30
    assert to_units([big, 3 * big]) == (big, [1, 3])
    with pytest.raises(ValueError, match=r"amounts\[1\]: 2100 is not a multiple of unit 1000"):
        to_units([1_000, 2_100], unit=1_000)
    with pytest.raises(ValueError, match=r"amounts\[0\]: must be an integer >= 1, got 0"):
        to_units([0, 5])
    with pytest.raises(ValueError, match="amounts: must be a non-empty sequence"):
        to_units([])
    with pytest.raises(TypeError, match=r"amounts\[0\]: must be an integer >= 1, got 1.5"):
        to_units([1.5])  # type: ignore[list-item]


def test_max_rfq_rate_single_class_is_the_erlang_inverse() -> None:
    # 15 units of 1 000 000 with a 1 s hold: 1 % blocking at 8.108 RFQs/s (erlang.com).
    rate = max_rfq_rate_per_s(15_000_000, [1_000_000], [1.0], 1.0, 0.01)
    assert rate == pytest.approx(erlang_b_load(15, 0.01), rel=1e-8)
    assert rate == pytest.approx(8.108, abs=1e-3)
    # With the 15 s quote hold the same pool carries 15 times fewer RFQs.
    assert max_rfq_rate_per_s(15_000_000, [1_000_000], [1.0], 15.0, 0.01) == pytest.approx(
        rate / 15
    )


def test_max_rfq_rate_multi_class_criteria() -> None:
    # C = 20 units; loads (6, 2, 1) E on sizes (1, 2, 5) at a total of 9 RFQs/s and 1 s hold.
    classes, mix = [100, 200, 500], [6 / 9, 2 / 9, 1 / 9]
    worst = kaufman_roberts(20, [6.0, 2.0, 1.0], [1, 2, 5])
    rate = max_rfq_rate_per_s(2_000, classes, mix, 1.0, max(worst))
    assert rate == pytest.approx(9.0, rel=1e-8)
    average = sum(b * m for b, m in zip(worst, mix, strict=True))
    assert max_rfq_rate_per_s(
        2_000, classes, mix, 1.0, average, criterion="average"
    ) == pytest.approx(9.0, rel=1e-8)
    volume = sum(b * m * s for b, m, s in zip(worst, mix, [1, 2, 5], strict=True)) / (
        6 / 9 + 4 / 9 + 5 / 9
    )
    assert max_rfq_rate_per_s(
        2_000, classes, mix, 1.0, volume, criterion="volume"
    ) == pytest.approx(9.0, rel=1e-8)
    # A remainder below one unit serves nothing: 2 099 carries what 2 000 does.
    assert max_rfq_rate_per_s(2_099, classes, mix, 1.0, max(worst)) == pytest.approx(rate)


def test_max_rfq_rate_is_zero_when_a_class_cannot_fit() -> None:
    assert max_rfq_rate_per_s(400, [100, 500], [0.5, 0.5], 1.0, 0.01) == 0.0
    # A class with no traffic does not count toward the worst class.
    assert max_rfq_rate_per_s(400, [100, 500], [1.0, 0.0], 1.0, 0.01) > 0.0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"class_mix": [0.5, 0.4]}, ValueError, "class_mix: shares must sum to 1, got 0.9"),
        ({"class_mix": [1.0]}, ValueError, r"class_mix: must have one share per amount class"),
        ({"hold_s": [1.0]}, ValueError, "hold_s: must be one mean or one per amount class"),
        ({"hold_s": 0.0}, ValueError, "hold_s: must be a finite number > 0, got 0.0"),
        (
            {"target_blocking": 0.0},
            ValueError,
            "target_blocking: must be a finite number > 0 and <= 1, got 0.0",
        ),
        ({"criterion": "median"}, ValueError, "criterion: must be one of worst, average"),
        ({"pool_balance": -5}, ValueError, "pool_balance: must be an integer >= 0, got -5"),
        ({"unit": 300}, ValueError, r"amounts\[0\]: 100 is not a multiple of unit 300"),
    ],
)
def test_max_rfq_rate_rejects_bad_arguments(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    args: dict[str, object] = {
        "pool_balance": 1_000,
        "amount_classes": [100, 200],
        "class_mix": [0.5, 0.5],
        "hold_s": 1.0,
        "target_blocking": 0.01,
    }
    args.update(kwargs)
    with pytest.raises(error, match=message):
        max_rfq_rate_per_s(**args)  # type: ignore[arg-type]


def test_pool_size_for_single_class() -> None:
    # 8.108 E needs 15 servers at 1.01 % and 16 at 0.99 %.
    assert pool_size_for(8.108, [1_000_000], [1.0], 1.0, 0.0101) == 15_000_000
    assert pool_size_for(8.108, [1_000_000], [1.0], 1.0, 0.0099) == 16_000_000
    assert pool_size_for(0.0, [1_000_000], [1.0], 1.0, 0.01) == 1_000_000


def test_pool_size_for_multi_class_and_per_class_holds() -> None:
    classes, mix = [100, 200, 500], [6 / 9, 2 / 9, 1 / 9]
    worst = max(kaufman_roberts(20, [6.0, 2.0, 1.0], [1, 2, 5]))
    assert pool_size_for(9.0, classes, mix, 1.0, worst + 1e-9) == 2_000
    # Per-class holds: the 500s held twice as long need a bigger pool than equal holds.
    assert pool_size_for(9.0, classes, mix, [1.0, 1.0, 2.0], worst + 1e-9) > 2_000


def test_pool_size_for_gives_up_past_max_units() -> None:
    with pytest.raises(ValueError, match="max_units: no pool of up to 10 units"):
        pool_size_for(50.0, [1], [1.0], 1.0, 0.001, max_units=10)


def test_pool_size_for_handles_large_loads() -> None:
    # 600 E of one-unit requests at 1 %: about 600 units, past where a^j / j! overflows.
    balance = pool_size_for(40.0, [5], [1.0], 15.0, 0.01)
    units = balance // 5
    assert erlang_b(units, 600.0) <= 0.01 < erlang_b(units - 1, 600.0)


sizing = st.tuples(
    st.floats(0.1, 8.0),
    st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True),
    st.floats(0.005, 0.5),
)


@settings(max_examples=25, deadline=None)
@given(sizing, st.sampled_from(["worst", "average", "volume"]))
def test_pool_size_is_the_smallest_meeting_the_target(
    spec: tuple[float, list[int], float], criterion: Literal["worst", "average", "volume"]
) -> None:
    load, sizes, target = spec
    mix = [1.0 / len(sizes)] * len(sizes)
    mix[-1] = 1.0 - sum(mix[:-1])
    amounts = [size * 10 for size in sizes]
    balance = pool_size_for(load, amounts, mix, 1.0, target, criterion=criterion, unit=10)
    units = balance // 10

    def score(capacity: int) -> float:
        blocking = kaufman_roberts(capacity, [load * m for m in mix], sizes)
        if criterion == "worst":
            return max(blocking)
        if criterion == "average":
            return sum(b * m for b, m in zip(blocking, mix, strict=True))
        volume = [m * s for m, s in zip(mix, sizes, strict=True)]
        return sum(b * v for b, v in zip(blocking, volume, strict=True)) / sum(volume)

    assert score(units) <= target + 1e-12
    assert all(score(smaller) > target - 1e-12 for smaller in range(units))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.floats(0.001, 0.5), st.floats(0.5, 30.0))
def test_max_rate_sits_on_the_target(units: int, target: float, hold: float) -> None:
    rate = max_rfq_rate_per_s(units * 7, [7, 14], [0.7, 0.3], hold, target)
    if rate == 0.0:
        assert units < 2
        return
    blocking = kaufman_roberts(units, [rate * 0.7 * hold, rate * 0.3 * hold], [1, 2])
    assert max(blocking) <= target
    over = kaufman_roberts(units, [rate * 0.7 * hold * 1.0001, rate * 0.3 * hold * 1.0001], [1, 2])
    assert max(over) > target
