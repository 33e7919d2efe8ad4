"""Kaufman-Roberts against the computed vectors, exact rationals and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.models.capacity import erlang_b, kaufman_roberts, kaufman_roberts_occupancy


def product_form_blocking(capacity: int, loads: list[int], sizes: list[int]) -> list[Fraction]:
    """Blocking by enumerating every state (n_1..n_K) of the product form: no recursion."""
    weight_at: dict[int, Fraction] = {}
    ranges = [range(capacity // size + 1) for size in sizes]
    for state in itertools.product(*ranges):
        used = sum(n * size for n, size in zip(state, sizes, strict=True))
        if used > capacity:
            continue
        weight = Fraction(1)
        for n, load in zip(state, loads, strict=True):
            weight *= Fraction(load) ** n / math.factorial(n)
        weight_at[used] = weight_at.get(used, Fraction(0)) + weight
    total = sum(weight_at.values(), Fraction(0))
    return [
        sum((w for used, w in weight_at.items() if used > capacity - size), Fraction(0)) / total
        for size in sizes
    ]


def test_small_vector_is_exact_in_fractions() -> None:
    blocking = kaufman_roberts(6, [Fraction(2), Fraction(1)], [1, 2])
    assert blocking == [Fraction(173, 1532), Fraction(407, 1532)]
    # ints mix with Fractions at run time; the overloads type all-Fraction loads as exact
    assert kaufman_roberts_occupancy(6, [Fraction(2), 1], [1, 2]) == [  # type: ignore[list-item]
        Fraction(45, 766),
        Fraction(45, 383),
        Fraction(135, 766),
        Fraction(75, 383),
        Fraction(285, 1532),
        Fraction(117, 766),
        Fraction(173, 1532),
    ]


def test_small_vector_in_floats() -> None:
    blocking = kaufman_roberts(6, [2.0, 1.0], [1, 2])
    assert blocking == pytest.approx([173 / 1532, 407 / 1532], abs=1e-12)


@pytest.mark.parametrize(
    ("capacity", "loads", "sizes", "expected"),
    [
        (10, [4.0, 1.0], [1, 3], [0.07677903, 0.28659901]),
        (20, [6.0, 2.0, 1.0], [1, 2, 5], [0.04739477, 0.10138325, 0.30064190]),
        (10, [5.0], [1], [0.01838457]),
    ],
)
def test_computed_vectors(
    capacity: int, loads: list[float], sizes: list[int], expected: list[float]
) -> None:
    assert kaufman_roberts(capacity, loads, sizes) == pytest.approx(expected, abs=5e-9)


def test_recursion_matches_brute_force_enumeration() -> None:
    for capacity, loads, sizes in [
        (6, [2, 1], [1, 2]),
        (10, [4, 1], [1, 3]),
        (12, [3, 2, 1], [1, 2, 5]),
        (9, [1, 1], [2, 4]),
    ]:
        exact = kaufman_roberts(capacity, [Fraction(a) for a in loads], sizes)
        assert exact == product_form_blocking(capacity, loads, sizes)


def test_class_wider_than_the_pool_is_always_blocked() -> None:
    assert kaufman_roberts(3, [1.0, 1.0], [1, 4]) == pytest.approx([erlang_b(3, 1.0), 1.0])


def test_no_traffic_blocks_nothing_that_fits() -> None:
    assert kaufman_roberts(4, [0.0, 0.0], [1, 4]) == [0.0, 0.0]
    assert kaufman_roberts_occupancy(2, [0.0], [1]) == [1.0, 0.0, 0.0]


def test_large_pool_does_not_overflow() -> None:
    # q(j) ~ a^j / j! exceeds the float range near j = 170 at this load; rescaling keeps it.
    blocking = kaufman_roberts(5_000, [4_800.0, 20.0], [1, 10])
    occupancy = kaufman_roberts_occupancy(5_000, [4_800.0, 20.0], [1, 10])
    assert all(math.isfinite(value) for value in occupancy)
    assert math.fsum(occupancy) == pytest.approx(1.0, abs=1e-12)
    assert 0.0 < blocking[0] < blocking[1] < 1.0
    assert kaufman_roberts(5_000, [4_800.0], [1])[0] == pytest.approx(
        erlang_b(5_000, 4_800.0), rel=1e-9
    )


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((-1, [1.0], [1]), ValueError, "capacity: must be an integer >= 0, got -1"),
        ((5, [], []), ValueError, "loads: must name at least one class"),
        ((5, [1.0, 2.0], [1]), ValueError, r"sizes: must have one entry per load \(2 loads"),
        ((5, [1.0], [0]), ValueError, r"sizes\[0\]: must be an integer >= 1, got 0"),
        ((5, [-1.0], [1]), ValueError, r"loads\[0\]: must be a finite number >= 0, got -1.0"),
        ((5, [1.0], [1.5]), TypeError, r"sizes\[0\]: must be an integer"),
        ((5, [Fraction(1), 0.5], [1, 1]), TypeError, "loads: mix Fractions only with ints"),
        ((5, "12", [1, 1]), TypeError, "loads: must be a sequence of numbers"),
    ],
)
def test_bad_arguments_name_the_argument(
    args: tuple[Any, Any, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        kaufman_roberts(*args)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 120), st.floats(0.0, 150.0))
def test_single_class_of_one_unit_is_erlang_b(capacity: int, load: float) -> None:
    assert kaufman_roberts(capacity, [load], [1])[0] == pytest.approx(
        erlang_b(capacity, load), rel=1e-9, abs=1e-300
    )


classes = st.lists(st.tuples(st.floats(0.0, 30.0), st.integers(1, 8)), min_size=1, max_size=4)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 60), classes, st.floats(1.01, 3.0))
def test_blocking_is_a_probability_and_the_widest_class_suffers_more_under_load(
    capacity: int, spec: list[tuple[float, int]], factor: float
) -> None:
    loads = [load for load, _ in spec]
    sizes = [size for _, size in spec]
    blocking = kaufman_roberts(capacity, loads, sizes)
    assert all(0.0 <= value <= 1.0 for value in blocking)
    # Scaling every load up does NOT raise every class's blocking: with C = 4 and classes of
    # 1 and 4 units, doubling both loads lowers the 1-unit class's blocking (0.434 -> 0.424),
    # because the wide class then holds the whole pool more often, leaving the narrow class
    # facing an empty rather than a full system. What does hold: the pool is empty less often.
    heavier = kaufman_roberts_occupancy(capacity, [load * factor for load in loads], sizes)
    lighter = kaufman_roberts_occupancy(capacity, loads, sizes)
    assert heavier[0] <= lighter[0] + 1e-12
    # A wider request needs more free units, so it is blocked at least as often.
    for (b_i, size_i), (b_j, size_j) in itertools.combinations(
        zip(blocking, sizes, strict=True), 2
    ):
        if size_i <= size_j:
            assert b_i <= b_j + 1e-12
        else:
            assert b_j <= b_i + 1e-12


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 25),
    st.lists(
        st.tuples(st.fractions(0, 10, max_denominator=7), st.integers(1, 5)), min_size=1, max_size=3
    ),
)
def test_floats_agree_with_exact_rationals(capacity: int, spec: list[tuple[Fraction, int]]) -> None:
    loads = [load for load, _ in spec]
    sizes = [size for _, size in spec]
    exact = kaufman_roberts(capacity, loads, sizes)
    approx = kaufman_roberts(capacity, [float(load) for load in loads], sizes)
    assert approx == pytest.approx([float(value) for value in exact], abs=1e-12)
    assert sum(kaufman_roberts_occupancy(capacity, loads, sizes), Fraction(0)) == 1


def test_recursion_matches_a_seeded_multi_rate_simulation() -> None:
    """The anchors' SimPy check, as a plain event loop: C = 20, loads (6, 2, 1), sizes (1, 2, 5).

    Exponential holds of mean 1; the per-class refused share must sit within 4 standard errors
    of Kaufman-Roberts (Poisson arrivals see time averages).
    """
    import heapq
    import random

    rng = random.Random(11)
    capacity, loads, sizes = 20, [6.0, 2.0, 1.0], [1, 2, 5]
    total_rate = sum(loads)
    free, now = capacity, 0.0
    departures: list[tuple[float, int]] = []
    offered, refused = [0, 0, 0], [0, 0, 0]
    for _ in range(80_000):
        now += rng.expovariate(total_rate)
        while departures and departures[0][0] <= now:
            free += heapq.heappop(departures)[1]
        k = rng.choices(range(3), weights=loads)[0]
        offered[k] += 1
        if free < sizes[k]:
            refused[k] += 1
        else:
            free -= sizes[k]
            heapq.heappush(departures, (now + rng.expovariate(1.0), sizes[k]))
    theory = kaufman_roberts(capacity, loads, sizes)
    for k in range(3):
        share = refused[k] / offered[k]
        error = math.sqrt(theory[k] * (1 - theory[k]) / offered[k])
        assert abs(share - theory[k]) < 4 * error, (k, share, theory[k])
