"""The scenario's ``[amm]`` section: tokens and pools, each bad value named by its key path."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest

from toolkit.scenario import ScenarioError, load_scenario, scenario_path
from toolkit.scenario.parse import parse_scenario

ESCROW = "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
CONTRACTS = {"escrow": ESCROW, "output_settler": ESCROW, "oracle": ESCROW}


def _doc() -> dict[str, Any]:
    with scenario_path("default").open("rb") as f:
        return tomllib.load(f)


def _parse(doc: dict[str, Any]) -> Any:
    return parse_scenario(doc, contract_defaults=lambda chain: CONTRACTS)


def test_the_default_scenario_has_markets_on_ethereum_and_base() -> None:
    amm = load_scenario("default").amm
    assert {p.chain for p in amm.pools} == {1, 8453}
    assert {t.symbol for t in amm.tokens if t.chain == 1} == {"USDT", "WBTC", "TAILA", "TAILB"}
    assert [p.shape for p in amm.pools if p.tokens == ("USDC", "USDT")] == ["stable", "stable"]
    assert load_scenario("single-pool").amm.pools == ()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["amm"]["pools"][0].update(kind="v4"), "amm.pools[0].kind: must be v2 or v3"),
        (
            lambda d: d["amm"]["pools"][0].update(fee=400),
            "amm.pools[0].fee: must be one of 100, 500, 3000, 10000 for a v3 pool",
        ),
        (
            lambda d: d["amm"]["pools"][2].update(fee=25),
            "amm.pools[2].fee: must be one of 30 for a v2 pool",
        ),
        (
            lambda d: d["amm"]["pools"][0].update(tokens=["USDC", "DOGE"]),
            "amm.pools[0].tokens: 'DOGE' is neither a priced [[tokens]] entry nor an "
            "[[amm.tokens]] entry of chain 1",
        ),
        (
            lambda d: d["amm"]["pools"][0].update(tokens=["USDC", "USDC"]),
            "amm.pools[0].tokens: must be two different token symbols",
        ),
        (
            lambda d: d["amm"]["pools"][0].update(depth_usd=0),
            "amm.pools[0].depth_usd: must be a positive integer",
        ),
        (
            lambda d: d["amm"]["pools"][0].update(shape="flat"),
            "amm.pools[0].shape: must be volatile or stable",
        ),
        (
            lambda d: d["amm"]["tokens"][0].update(price_usd="-1"),
            "amm.tokens[0].price_usd: must be a positive decimal",
        ),
        (
            lambda d: d["amm"]["tokens"][0].update(symbol="USDC"),
            "amm.tokens[0].symbol: USDC is already a token of chain 1",
        ),
        (
            lambda d: d["amm"]["tokens"][0].update(colour="red"),
            "amm.tokens[0].colour: unknown key",
        ),
        (lambda d: d["amm"]["pools"][0].pop("fee"), "amm.pools[0].fee: is required"),
    ],
)
def test_bad_markets_are_refused_by_key_path(change: Any, message: str) -> None:
    doc = copy.deepcopy(_doc())
    change(doc)
    with pytest.raises(ScenarioError) as info:
        _parse(doc)
    assert str(info.value) == message
