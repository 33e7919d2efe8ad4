"""The retry policy: which answers retry, how long to wait, and the budgets."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.client import Attempt, RetryPolicy


def test_bad_request_and_bad_key_never_retry() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    for status in (400, 401, 403, 409, 422):
        assert policy.delay_after("rfq", status, retries=0) is None
        assert policy.delay_after("read", status, retries=0) is None


def test_posts_never_retry_even_after_a_server_error() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    for status in (0, 500, 503, 404):
        assert policy.delay_after("never", status, retries=0) is None


def test_a_404_is_capacity_only_for_the_rfq() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    assert policy.delay_after("rfq", 404, retries=0, capacity_retries=0) is not None
    assert policy.delay_after("read", 404, retries=0) is None


def test_capacity_budget_is_separate_from_the_error_budget() -> None:
    policy = RetryPolicy(error_retries=1, capacity_retries=2, rng=random.Random(1))
    assert policy.delay_after("rfq", 404, retries=1, capacity_retries=1) is not None
    assert policy.delay_after("rfq", 404, retries=0, capacity_retries=2) is None
    assert policy.delay_after("rfq", 503, retries=1, capacity_retries=0) is None
    assert policy.delay_after("rfq", 503, retries=0, capacity_retries=2) is not None


def test_server_errors_and_transport_errors_retry_within_the_budget() -> None:
    policy = RetryPolicy(error_retries=2, rng=random.Random(3))
    for status in (0, 429, 500, 502, 503, 504):
        assert policy.delay_after("read", status, retries=0) is not None
        assert policy.delay_after("read", status, retries=1) is not None
        assert policy.delay_after("read", status, retries=2) is None


def test_the_same_seed_gives_the_same_delays() -> None:
    def delays(seed: int) -> list[float | None]:
        policy = RetryPolicy(error_retries=5, rng=random.Random(seed))
        return [policy.delay_after("read", 503, retries=n) for n in range(5)]

    assert delays(42) == delays(42)
    assert delays(42) != delays(43)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    retry_number=st.integers(0, 20),
    base=st.floats(0.01, 2.0),
    cap=st.floats(0.01, 30.0),
)
def test_error_backoff_is_capped_exponential_with_equal_jitter(
    seed: int, retry_number: int, base: float, cap: float
) -> None:
    policy = RetryPolicy(
        error_retries=100, error_base=base, error_cap=cap, max_delay=1e9, rng=random.Random(seed)
    )
    delay = policy.delay_after("read", 500, retries=retry_number)
    ceiling = min(cap, base * 2.0**retry_number)
    assert delay is not None
    assert ceiling / 2 <= delay <= ceiling


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), retry_number=st.integers(0, 10))
def test_capacity_backoff_never_exceeds_the_reservation_window(
    seed: int, retry_number: int
) -> None:
    policy = RetryPolicy(capacity_retries=100, rng=random.Random(seed))
    delay = policy.delay_after("rfq", 404, retries=0, capacity_retries=retry_number)
    assert delay is not None
    assert 0 < delay <= 15.0


def test_retry_after_is_honoured_up_to_max_delay() -> None:
    policy = RetryPolicy(error_base=0.1, error_cap=0.2, max_delay=10.0, rng=random.Random(0))
    assert policy.delay_after("read", 503, retries=0, retry_after=4.0) == 4.0
    assert policy.delay_after("read", 503, retries=0, retry_after=60.0) == 10.0


def test_no_retries_policy() -> None:
    policy = RetryPolicy.no_retries()
    assert policy.delay_after("rfq", 404, retries=0) is None
    assert policy.delay_after("read", 503, retries=0) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"error_retries": -1}, "error_retries: must be an integer >= 0, got -1"),
        ({"capacity_retries": 1.5}, "capacity_retries: must be an integer >= 0, got 1.5"),
        ({"error_base": -0.1}, "error_base: must be a finite number >= 0, got -0.1"),
        ({"capacity_cap": float("nan")}, "capacity_cap: must be a finite number >= 0, got nan"),
        ({"rng": 7}, "rng: must be a random.Random"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_attempt_record_knows_its_retry_index_and_whether_it_was_final() -> None:
    first = Attempt("rfq", "GET", "/partner-intents/rfq", {}, 1, 404, 1.0, "full", 2.0)
    last = Attempt("rfq", "GET", "/partner-intents/rfq", {}, 3, 200, 1.0)
    assert (first.retry, first.final, first.ok) == (0, False, False)
    assert (last.retry, last.final, last.ok) == (2, True, True)
