"""Erlang-B and its inverses against published tables and exact values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.models.capacity import erlang_b, erlang_b_load, erlang_b_servers


def exact_erlang_b(servers: int, load: Fraction) -> Fraction:
    """Erlang's formula term by term, in exact rationals (independent of the recursion)."""
    terms = [load**i / math.factorial(i) for i in range(servers + 1)]
    return terms[-1] / sum(terms)


@pytest.mark.parametrize(
    ("servers", "load", "expected", "tol"),
    [
        (15, 8.108, 0.0099996, 1e-7),  # erlang.com: 15 lines at 1 % carry 8.108 E
        (1, 1.0, 0.5, 0.0),
        (2, 1.0, 0.2, 1e-16),
        (10, 5.0, 0.0183846, 1e-7),
        (0, 3.0, 1.0, 0.0),
        (4, 0.0, 0.0, 0.0),
    ],
)
def test_erlang_b_vectors(servers: int, load: float, expected: float, tol: float) -> None:
    assert erlang_b(servers, load) == pytest.approx(expected, abs=tol)


def test_erlang_b_matches_the_formula_in_exact_rationals() -> None:
    for servers, load in [(3, Fraction(7, 2)), (12, Fraction(9)), (30, Fraction(41, 2))]:
        assert erlang_b(servers, float(load)) == pytest.approx(
            float(exact_erlang_b(servers, load)), rel=1e-13
        )


@pytest.mark.parametrize(
    ("servers", "blocking", "table"),
    [
        # globalspec appendix table of Erlang-B (1 % and 5 % columns, one decimal).
        (5, 0.01, 1.4),
        (8, 0.01, 3.1),
        (9, 0.01, 3.8),
        (8, 0.05, 4.5),
        (9, 0.05, 5.4),
    ],
)
def test_erlang_b_load_rounds_to_the_published_table(
    servers: int, blocking: float, table: float
) -> None:
    assert round(erlang_b_load(servers, blocking), 1) == table


@pytest.mark.parametrize(
    ("servers", "blocking", "expected"),
    [(10, 0.01, 4.4612), (20, 0.01, 12.0306), (15, 0.01, 8.1080), (5, 0.01, 1.3608)],
)
def test_erlang_b_load_vectors(servers: int, blocking: float, expected: float) -> None:
    assert erlang_b_load(servers, blocking) == pytest.approx(expected, abs=5e-5)


def test_erlang_b_servers_vectors() -> None:
    assert erlang_b_servers(8.108, 0.0101) == 15
    assert erlang_b_servers(8.108, 0.0099) == 16
    # A(10, 1 %) = 4.46118: just below it 10 servers do, just above they do not.
    assert erlang_b_servers(4.4611, 0.01) == 10
    assert erlang_b_servers(4.4613, 0.01) == 11
    assert erlang_b_servers(12.0306, 0.01) == 20
    assert erlang_b_servers(3.0, 1.0) == 0


def test_large_systems_stay_finite() -> None:
    # A^N / N! overflows a float long before N = 10 000; the recursion does not.
    value = erlang_b(10_000, 9_800.0)
    assert 0.0 < value < 0.05
    assert erlang_b_servers(9_800.0, value) == 10_000


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: erlang_b(-1, 1.0), "servers: must be an integer >= 0, got -1"),
        (lambda: erlang_b(2, -0.5), "load: must be a finite number >= 0, got -0.5"),
        (lambda: erlang_b(2, math.nan), "load: must be a finite number >= 0, got nan"),
        (lambda: erlang_b_load(0, 0.01), "servers: must be an integer >= 1, got 0"),
        (lambda: erlang_b_load(5, 1.0), "blocking: must be a finite number > 0 and < 1, got 1.0"),
        (lambda: erlang_b_load(5, 0.0), "blocking: must be a finite number > 0 and < 1, got 0.0"),
        (lambda: erlang_b_servers(-2.0, 0.01), "load: must be a finite number >= 0, got -2.0"),
        (
            lambda: erlang_b_servers(2.0, 0.0),
            "blocking: must be a finite number > 0 and <= 1, got 0.0",
        ),
    ],
)
def test_bad_arguments_name_the_argument(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_non_integer_servers_are_refused() -> None:
    with pytest.raises(TypeError, match=r"servers: must be an integer >= 0, got 2\.5"):
        erlang_b(2.5, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="servers: must be an integer >= 0, got True"):
        erlang_b(True, 1.0)
    with pytest.raises(TypeError, match="load: must be a finite number >= 0, got '1'"):
        erlang_b(2, "1")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.floats(0.0, 80.0))
def test_blocking_is_a_probability_falling_with_servers_rising_with_load(
    servers: int, load: float
) -> None:
    value = erlang_b(servers, load)
    assert 0.0 <= value <= 1.0
    assert erlang_b(servers + 1, load) <= value
    assert erlang_b(servers, load * 1.1 + 0.01) >= value


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 80), st.floats(1e-6, 0.9))
def test_load_inverts_blocking(servers: int, blocking: float) -> None:
    load = erlang_b_load(servers, blocking)
    assert erlang_b(servers, load) == pytest.approx(blocking, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 200.0), st.floats(1e-6, 1.0))
def test_servers_is_the_smallest_meeting_the_target(load: float, blocking: float) -> None:
    servers = erlang_b_servers(load, blocking)
    assert erlang_b(servers, load) <= blocking
    if servers > 0:
        assert erlang_b(servers - 1, load) > blocking
