"""Card authorizations: idempotent, fail closed, toolkit.credit's health rule, JIT vs pre-funded."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.arguments import ArgumentError
from toolkit.credit import DEFAULT_RULES, figures
from toolkit.models.cards import (
    Authorizer,
    BackendError,
    Budget,
    Empirical,
    Latencies,
    Lognormal,
    Position,
    SimulatedBackend,
    Timed,
    card_accounts,
    card_swipes,
    compare_prefunded,
    draw_for,
    simulate_cards,
)

USD = 10**6
#: No errors, no missed blocks, blocks every 0.5 s: every answer in budget unless a test says so.
CALM = Latencies(
    block_time_s=0.5, missed_block=0.0, info_error=0.0, draw_error=0.0, broadcast_error=0.0,
    balance_error=0.0,
)  # fmt: skip


def swipes(*rows: tuple[str, str, float, int]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema=["auth_id", "account", "t", "amount"], orient="row"
    ).with_columns(pl.col("amount").cast(pl.Int64))


def one_account(usdc: int = 2_000 * USD, principal: int = 0) -> dict[str, Position]:
    return {"a": Position({"usdc": usdc}, principal=principal)}


# -- idempotency ---------------------------------------------------------------------------------


def test_a_retry_after_the_answer_gets_the_same_answer_and_draws_nothing() -> None:
    run = simulate_cards(
        swipes(("x", "a", 0.0, 50 * USD), ("x", "a", 30.0, 50 * USD)), one_account(), latencies=CALM
    )
    first, again = run.decisions.rows(named=True)
    assert first["approved"] and again["approved"] and again["replay"]
    assert first["drawn"] == draw_for(50 * USD) and again["drawn"] == 0
    backend = run.backend
    assert isinstance(backend, SimulatedBackend)
    assert backend.calls == 1
    assert backend.ledger["a"].principal == draw_for(50 * USD)
    assert again["latency_ms"] < 50  # answered from the store, not through the chain


def test_a_retry_in_flight_waits_for_the_first_answer() -> None:
    run = simulate_cards(
        swipes(("x", "a", 0.0, 50 * USD), ("x", "a", 0.05, 50 * USD)), one_account(), latencies=CALM
    )
    first, again = run.decisions.rows(named=True)
    assert again["replay"] and again["approved"] == first["approved"]
    # the retry is answered when the first answer exists: at the same moment
    assert again["t"] + again["latency_ms"] / 1_000 == pytest.approx(
        first["t"] + first["latency_ms"] / 1_000
    )


def test_a_declined_answer_is_replayed_as_declined() -> None:
    accounts = one_account(usdc=100 * USD)
    run = simulate_cards(
        swipes(("x", "a", 0.0, 80 * USD), ("x", "a", 10.0, 80 * USD)), accounts, latencies=CALM
    )
    assert run.decisions["reason"].to_list() == ["health", "health"]
    assert run.decisions["replay"].to_list() == [False, True]


# -- fail closed ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ({"info": Lognormal(150.0, 0.0)}, "info_timeout"),
        ({"draw": Lognormal(101.0, 0.0)}, "draw_timeout"),
        ({"info_error": 1.0}, "info_error"),
        ({"draw_error": 1.0}, "draw_error"),
        ({"broadcast_error": 1.0}, "broadcast_error"),
    ],
)
def test_a_slow_or_failing_step_declines_without_drawing(override: dict, reason: str) -> None:
    latencies = Latencies(**{**CALM.__dict__, **override})
    accounts = {f"a{i}": Position({"usdc": 10_000 * USD}) for i in range(10)}
    run = simulate_cards(card_swipes(accounts, span_h=2, seed=3), accounts, latencies=latencies)
    decisions = run.decisions.filter(~pl.col("replay"))
    assert decisions.height > 5 and set(decisions["reason"]) == {reason}
    assert run.summary.approved == 0 and run.summary.drawn == 0
    assert run.summary.over_budget_share == 0.0


def test_a_step_over_its_budget_is_answered_at_its_budget() -> None:
    latencies = Latencies(**{**CALM.__dict__, "info": Lognormal(150.0, 0.0)})
    run = simulate_cards(swipes(("x", "a", 0.0, USD)), one_account(), latencies=latencies)
    pre = run.decisions["latency_ms"][0] - 100.0  # info's budget is 100 ms
    assert 0 < pre < 50  # the signature check and lookup before /info


def test_a_block_past_the_budget_declines_at_the_deadline_and_the_draw_still_lands() -> None:
    latencies = Latencies(**{**CALM.__dict__, "block_time_s": 30.0})
    accounts = one_account()
    run = simulate_cards(
        swipes(*[(f"x{i}", "a", 100.0 * i, 10 * USD) for i in range(20)]),
        accounts,
        latencies=latencies,
    )
    late = run.decisions.filter(pl.col("reason") == "chain_timeout")
    assert late.height > 10  # a block every 30 s rarely comes within 2 s
    assert late["latency_ms"].max() == pytest.approx(2_000.0)
    assert (late["path_ms"] > 2_000).all()
    assert run.summary.late_draws == late.height
    backend = run.backend
    assert isinstance(backend, SimulatedBackend)
    assert backend.ledger["a"].principal == run.decisions["drawn"].sum()


class Broken:
    """A backend whose info raises something unexpected."""

    def info(self, account: str, at: float) -> Timed[Position]:
        raise RuntimeError("connection reset")

    def draw(self, account: str, amount: int, receiver: str, at: float) -> Timed[Sequence[object]]:
        raise AssertionError("never reached")

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        raise AssertionError("never reached")


def test_any_exception_from_the_backend_declines() -> None:
    run = simulate_cards(swipes(("x", "a", 0.0, USD)), one_account(), backend=Broken())
    assert run.decisions["reason"].to_list() == ["info_error"]


def test_an_info_the_rules_cannot_read_declines() -> None:
    backend = Scripted(Position({"dogecoin": 10**12}))  # not a collateral of the product
    decision = Authorizer(backend, seed=0).authorize("x", "a", USD, at=0.0)
    assert decision.reason == "info_error" and backend.included == []


class Scripted:
    """A backend plugged in through the seam: fixed latencies, one block per second."""

    def __init__(self, position: Position) -> None:
        self.position = position
        self.included: list[object] = []

    def info(self, account: str, at: float) -> Timed[Position]:
        return Timed(self.position, 0.01)

    def draw(self, account: str, amount: int, receiver: str, at: float) -> Timed[Sequence[object]]:
        return Timed([(account, receiver, amount)], 0.02)

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        self.included.extend(calls)
        block = float(int(at) + 1)
        return Timed(block, block - at)


def test_another_backend_plugs_into_the_same_authorizer() -> None:
    backend = Scripted(Position({"usdc": 1_000 * USD}))
    auth = Authorizer(backend, seed=0)
    decision = auth.authorize("x", "a", 10 * USD, at=0.2)
    assert decision.approved and decision.answered == 1.0
    assert backend.included == [("a", "a:card", draw_for(10 * USD))]


def test_an_account_busy_with_a_swipe_queues_the_next() -> None:
    backend = Scripted(Position({"usdc": 1_000 * USD}))  # a block each whole second
    auth = Authorizer(backend, seed=0)
    first = auth.authorize("x", "a", USD, at=0.2)
    second = auth.authorize("y", "a", USD, at=0.25)
    other = auth.authorize("z", "b", USD, at=0.25)
    assert first.answered == 1.0 and other.answered == 1.0  # another account does not wait
    # the second starts once the first's draw is seen at 1.0, so its draw makes the block at 2.0
    assert second.approved and second.answered == 2.0


# -- the health rule -----------------------------------------------------------------------------


def test_the_health_rule_is_toolkit_credits_figure_after_the_draw() -> None:
    # 1,300 USDC at 92.5 %: 1,202.5 of maintenance value; HF 1.3 exactly at a 925 USDC draw
    accounts = {"a": Position({"usdc": 1_300 * USD})}
    exact = 925 * USD - DEFAULT_RULES.draw_fee(925 * USD)  # delivered by a 925 draw
    assert draw_for(exact) == 925 * USD
    ok = simulate_cards(swipes(("x", "a", 0.0, exact)), accounts, latencies=CALM)
    over = simulate_cards(swipes(("x", "a", 0.0, exact + 1)), accounts, latencies=CALM)
    assert ok.decisions["reason"][0] == "approved"
    assert ok.decisions["health_factor"][0] == pytest.approx(1.3)
    after = figures({"usdc": 1_300 * USD}, principal=draw_for(exact + 1)).health_factor
    assert after is not None and after < Fraction(13, 10)
    assert over.decisions["reason"][0] == "health"


def test_a_lower_rule_lets_the_capacity_decide() -> None:
    accounts = {"a": Position({"usdc": 1_000 * USD}, principal=850 * USD)}  # capacity 900
    run = simulate_cards(
        swipes(("x", "a", 0.0, 60 * USD)), accounts, latencies=CALM, min_health_factor=1.0
    )
    assert run.decisions["reason"][0] == "capacity"


def test_declines_and_approvals_match_the_ledger_replayed_through_toolkit_credit() -> None:
    accounts = card_accounts(40, seed=5)
    run = simulate_cards(card_swipes(accounts, span_h=12, seed=5), accounts, seed=5)
    assert run.summary.approved > 0 and (run.decisions["reason"] == "health").sum() > 0
    principal = {a: p.principal for a, p in accounts.items()}
    for row in run.decisions.filter(~pl.col("replay")).iter_rows(named=True):
        position = accounts[row["account"]]
        draw = draw_for(row["amount"])
        after = figures(position.values, principal=principal[row["account"]] + draw)
        if row["reason"] in {"approved", "chain_timeout"}:
            assert after.health_factor is None or after.health_factor >= Fraction(13, 10)
            principal[row["account"]] += draw
        elif row["reason"] == "health":
            assert after.health_factor is not None and after.health_factor < Fraction(13, 10)
    backend = run.backend
    assert isinstance(backend, SimulatedBackend)
    assert {a: p.principal for a, p in backend.ledger.items()} == principal


# -- just in time against pre-funded -------------------------------------------------------------


def test_prefunded_answers_faster_and_pays_top_up_fees() -> None:
    accounts = card_accounts(30, seed=8)
    table = compare_prefunded(card_swipes(accounts, span_h=12, seed=8), accounts, seed=8)
    jit, pre = table.rows(named=True)
    assert (jit["approach"], pre["approach"]) == ("just-in-time", "pre-funded")
    assert pre["p50_ms"] < jit["p50_ms"] and pre["p99_ms"] < jit["p99_ms"]
    assert pre["p99_ms"] < 100 < jit["p50_ms"]  # no chain on the swipe's path
    assert pre["draws"] > 0 and pre["fees"] > 0 and pre["idle_cost"] > 0
    # a pre-funded draw is a top-up: fewer transactions than one per approved swipe
    assert pre["draws"] < jit["draws"]
    # fees are the product's 0.5 % of what each side drew
    assert jit["fees"] == pytest.approx(0.005 * jit["drawn"], rel=1e-3)
    assert pre["fees"] == pytest.approx(0.005 * pre["drawn"], rel=1e-3)
    assert pre["cost"] == pytest.approx(pre["fees"] + pre["gas"] + pre["idle_cost"])


def test_an_account_with_no_collateral_is_never_funded() -> None:
    accounts = {"a": Position({})}
    frame = swipes(("x", "a", 0.0, USD), ("y", "unknown", 1.0, USD))
    table = compare_prefunded(frame, accounts, latencies=CALM)
    assert table["approved"].to_list() == [0, 0]


def test_the_simulated_chain_refuses_calls_it_did_not_build() -> None:
    backend = SimulatedBackend({"a": Position({"usdc": 10**9})}, CALM)
    calls = [*backend.draw("a", USD, "a:card", at=0.0).value, ("a", "a:card", USD)]
    with pytest.raises(TypeError, match="expected DrawCall"):
        backend.include(calls, at=0.1)
    assert backend.calls == 0 and backend.ledger["a"].principal == 0


# -- properties ----------------------------------------------------------------------------------

positions = st.builds(
    lambda usdc, btc, share: Position(
        {"usdc": usdc, "yobtc": btc},
        principal=int(share * figures({"usdc": usdc, "yobtc": btc}).total_credit_capacity),
    ),
    st.integers(0, 5_000 * USD),
    st.integers(0, 5_000 * USD),
    st.floats(0, 1),
)
swipe_rows = st.lists(
    st.tuples(
        st.integers(0, 6),  # auth id: few, so retries collide
        st.sampled_from(["a", "b"]),
        st.floats(0, 0.5),  # gap to the previous swipe, s: often while one is in flight
        st.integers(1, 3_000 * USD),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    a=positions,
    b=positions,
    rows=swipe_rows,
    rule=st.sampled_from([1.0, 1.3, 2.0]),
    block_time_s=st.sampled_from([0.2, 2.0, 5.0]),
    seed=st.integers(0, 10),
)
def test_never_below_the_rule_never_two_draws_per_id(
    a: Position, b: Position, rows: list, rule: float, block_time_s: float, seed: int
) -> None:
    t, table = 0.0, []
    for auth, account, gap, amount in rows:
        t += gap
        table.append((f"id{auth}", account, t, amount))
    frame = swipes(*table) if table else swipes(("id0", "a", 0.0, 1))
    latencies = Latencies(block_time_s=block_time_s, info_error=0.01, draw_error=0.01)
    accounts = {"a": a, "b": b}
    run = simulate_cards(frame, accounts, latencies=latencies, min_health_factor=rule, seed=seed)
    d = run.decisions
    backend = run.backend
    assert isinstance(backend, SimulatedBackend)
    # at most one draw per authorization id, and every draw is one the ledger holds
    drawn = d.filter(pl.col("drawn") > 0)
    assert drawn["auth_id"].is_unique().all()
    assert backend.calls == drawn.height
    for name, position in accounts.items():
        ledger = backend.ledger[name]
        assert (
            ledger.principal
            == position.principal + d.filter(pl.col("account") == name)["drawn"].sum()
        )
        # every draw passed the rule, so the account ends at or above it (or untouched)
        if ledger.principal > position.principal:
            hf = ledger.figures().health_factor
            assert hf is None or hf >= Fraction(rule)
    # an id answers the same way every time; every answer within the budget
    for _, group in d.group_by("auth_id"):
        assert group["approved"].n_unique() == 1 and group["reason"].n_unique() == 1
    assert (d["latency_ms"] <= 2_000 + 1e-6).all()
    approved = d.filter(pl.col("approved") & ~pl.col("replay"))
    assert (approved["health_factor"].fill_null(float("inf")) >= rule - 1e-12).all()


# -- arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: Lognormal(-1.0, 0.3),
        lambda: Empirical(()),
        lambda: Budget(total=0.0),
        lambda: Latencies(missed_block=1.0),
        lambda: Latencies(info_error=1.5),
        lambda: Position({"usdc": -1}),
        lambda: card_swipes(["a"], rate_per_h=0),
        lambda: card_swipes(["a"], retry_after=(2.0, 1.0)),
        lambda: card_accounts(-1),
        lambda: simulate_cards(pl.DataFrame({"t": [0.0]}), {}),
        lambda: simulate_cards(swipes(("x", "a", 1.0, 1), ("y", "a", 0.0, 1)), one_account()),
        lambda: simulate_cards(swipes(("x", "a", 0.0, 1)), one_account(), min_health_factor=0.5),
        lambda: compare_prefunded(
            swipes(("x", "a", 0.0, 1)), one_account(), threshold=10, target_balance=5
        ),
    ],
)
def test_bad_arguments_are_named(build) -> None:
    with pytest.raises(ArgumentError):
        build()


def test_backend_error_names_the_step_and_its_duration() -> None:
    error = BackendError("draw", 0.25, "insufficient credit capacity")
    assert str(error) == "draw: insufficient credit capacity after 250.0 ms"
    assert error.elapsed_s == 0.25


def test_the_summary_is_a_frozen_result_that_agrees_with_the_decisions() -> None:
    accounts = card_accounts(20, seed=3)
    run = simulate_cards(card_swipes(accounts, span_h=6, seed=3), accounts, latencies=CALM, seed=3)
    s = run.summary
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.approved = 0  # type: ignore[misc]
    row = s.to_frame().row(0, named=True)
    assert row == s.as_dict() and row["swipes"] == run.decisions.height
    assert s.approved == run.decisions["approved"].sum()
    assert s.approval_share == pytest.approx(s.approved / s.swipes)
    assert s.drawn == run.decisions["drawn"].sum() and s.budget_ms == 2_000.0
