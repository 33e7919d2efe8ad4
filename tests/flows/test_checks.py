"""The flow contracts' checks, called directly: each generator's frame passes its check, and a
bad frame is refused naming the column and the rule."""

from __future__ import annotations

import polars as pl
import pytest

from toolkit.arguments import ArgumentError
from toolkit.flows import (
    CREDIT_ACTIONS,
    CREDIT_FLOW_COLUMNS,
    FLOW_COLUMNS,
    SWAP_FLOW_COLUMNS,
    check_credit,
    check_flow,
    check_swaps,
    checked_frame,
    generate_credit_flow,
    generate_flow,
    generate_swap_flow,
)
from toolkit.scenario import load_scenario

SCENARIO = load_scenario("default", env={})


def test_each_generated_flow_passes_its_check() -> None:
    flow = generate_flow(SCENARIO, span_h=0.2, rate_per_s=1.0, seed=2)
    assert len(check_flow(flow, SCENARIO).t) == flow.height
    swaps = generate_swap_flow(SCENARIO, span_h=1.0, rate_per_s=0.05, seed=2)
    swaps = checked_frame(swaps, "swaps", SWAP_FLOW_COLUMNS, "generate_swap_flow")
    assert sorted(check_swaps(swaps, SCENARIO)) == [1, 8453]
    credit = generate_credit_flow(SCENARIO, span_h=1.0, borrowers=2, seed=2)
    credit = checked_frame(credit, "credit", CREDIT_FLOW_COLUMNS, "generate_credit_flow")
    assert check_credit(credit, SCENARIO) == SCENARIO.credit.asset_address  # type: ignore[union-attr]
    assert set(credit["action"]) == set(CREDIT_ACTIONS)


def test_a_missing_intents_column_is_named_with_the_whole_contract() -> None:
    flow = generate_flow(SCENARIO, span_h=0.1, seed=1).drop("converts")
    with pytest.raises(ValueError) as info:
        check_flow(flow, SCENARIO)
    assert str(info.value) == (
        f"flow: missing column converts (a flow needs {', '.join(FLOW_COLUMNS)})"
    )


def test_checked_frame_names_missing_columns_and_bad_times() -> None:
    with pytest.raises(
        ValueError, match=r"swaps: missing column\(s\) chain, token_in, token_out, amount_in"
    ):
        checked_frame(pl.DataFrame({"t": [0.0]}), "swaps", SWAP_FLOW_COLUMNS, "g")
    with pytest.raises(ValueError, match="credit: must be a polars DataFrame"):
        checked_frame({"t": [0.0]}, "credit", CREDIT_FLOW_COLUMNS, "g")  # type: ignore[arg-type]
    late = pl.DataFrame({"t": [-1.0], "borrower": [0], "action": ["lock"], "amount": [1]})
    with pytest.raises(ArgumentError, match=r"credit\.t: must be finite seconds >= 0, got -1\.0"):
        checked_frame(late, "credit", CREDIT_FLOW_COLUMNS, "g")
    empty = checked_frame(None, "credit", CREDIT_FLOW_COLUMNS, "g")
    assert empty.columns == list(CREDIT_FLOW_COLUMNS) and empty.is_empty()


def test_a_credit_action_outside_the_contract_is_refused() -> None:
    credit = pl.DataFrame({"t": [0.0], "borrower": [0], "action": ["borrow"], "amount": [1]})
    with pytest.raises(ArgumentError, match=r"credit\.action: must be one of lock, draw, repay"):
        check_credit(credit, SCENARIO)
