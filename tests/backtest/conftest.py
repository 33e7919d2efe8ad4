"""Fixtures for the backtest tests: scenarios and a builder of hand-made flows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl
import pytest

from toolkit.backtest import FLOW_SCHEMA
from toolkit.scenario import Scenario, load_scenario

#: 1,000 USDC: one capacity unit of the single-pool scenario (15 units).
UNIT = 1_000_000_000


@pytest.fixture(scope="session")
def default_scenario() -> Scenario:
    return load_scenario("default")


@pytest.fixture(scope="session")
def single_pool() -> Scenario:
    return load_scenario("single-pool")


FlowBuilder = Callable[[Sequence[dict[str, Any]]], pl.DataFrame]


@pytest.fixture
def make_flow() -> FlowBuilder:
    """Build a flow from rows; unspecified fields default to a 1,000 USDC ExactOutput RFQ
    from Ethereum to Base that does not convert."""

    def build(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
        base = {
            "src_chain": 1,
            "dst_chain": 8453,
            "token": "USDC",
            "amount": UNIT,
            "type": "ExactOutput",
            "converts": False,
            "convert_delay": 0.0,
        }
        full = [{"request_id": f"q{i}", **base, **row} for i, row in enumerate(rows)]
        return pl.DataFrame(full, schema=FLOW_SCHEMA)

    return build
