"""``[rebalancing]`` and ``[[bridges]]``: errors name the key, defaults are documented, and the
README's example is a scenario that runs."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from toolkit.backtest import apply_overrides, generate_flow, replay
from toolkit.scenario import Scenario, ScenarioError, load_scenario
from toolkit.scenario.rebalancing import resolve_targets

Doc = dict[str, Any]
Parse = Callable[[Doc], Scenario]
README = Path(__file__).resolve().parents[2] / "README.md"


def _expect(parse: Parse, doc: Doc, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse(doc)
    assert str(info.value) == message


def _target(**fields: Any) -> dict[str, Any]:
    return {"chain": 8453, "token": "USDC", "target_share": 0.31, "threshold_share": 0.15, **fields}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"policy": "sometimes"},
            "rebalancing.policy: must be one of none, threshold, periodic, instant-free",
        ),
        (
            {"policy": "periodic", "period_s": None},
            "rebalancing.period_s: is required for policy periodic",
        ),
        ({"period_s": 0}, "rebalancing.period_s: must be a positive integer"),
        ({"overshoot_share": 1.5}, "rebalancing.overshoot_share: must be a share from 0 to 1"),
        ({"min_transfer_usd": -1}, "rebalancing.min_transfer_usd: must be a non-negative decimal"),
        ({"every": 5}, "rebalancing.every: unknown key"),
        (
            {
                "targets": [
                    _target(),
                    _target(chain=1, threshold_share=0.2),
                    _target(chain=10, threshold_share=0.4),
                ]
            },
            "rebalancing.targets[2].threshold_share: must be below target_share",
        ),
        (
            {"targets": [_target(target_share=1.2)]},
            "rebalancing.targets[0].target_share: must be a share from 0 to 1",
        ),
        (
            {"targets": [_target(chain=137)]},
            "rebalancing.targets[0].chain: chain 137 is not in chains",
        ),
        (
            {"targets": [_target(token="DAI")]},
            "rebalancing.targets[0].token: no token DAI on chain 8453",
        ),
        (
            {"targets": [_target(), _target()]},
            "rebalancing.targets[1]: USDC on chain 8453 is listed twice",
        ),
        (
            {"targets": [_target(target_share=0.9, threshold_share=0.5)]},
            "rebalancing.targets: the USDC target shares sum to 1.59048 (chains left out target "
            "their opening share); they must sum to at most 1",
        ),
    ],
)
def test_rebalancing_errors_name_the_key(
    parse: Parse, default_doc: Doc, change: dict[str, Any], message: str
) -> None:
    table = {**default_doc["rebalancing"], **change}
    default_doc["rebalancing"] = {k: v for k, v in table.items() if v is not None}
    _expect(parse, default_doc, message)


@pytest.mark.parametrize(
    ("index", "change", "message"),
    [
        (
            0,
            {"latency_s": {"median": 20, "p95": 10}},
            "bridges[0].latency_s.p95: must be at least the median",
        ),
        (
            0,
            {"latency_s": {"median": 0, "p95": 10}},
            "bridges[0].latency_s.median: must be a number of seconds above 0",
        ),
        (0, {"latency_s": {"median": 14}}, "bridges[0].latency_s.p95: is required"),
        (1, {"fee_bps": 10_000}, "bridges[1].fee_bps: must be below 10000"),
        (2, {"dst": 1}, "bridges[2].dst: must differ from src"),
        (2, {"src": 137}, "bridges[2].src: no token WETH on chain 137"),
        (1, {"token": "DAI"}, "bridges[1].token: DAI is not a token of the scenario"),
        (3, {"dst": 10}, "bridges[3]: another entry models the same token and route"),
        (0, {"name": ""}, "bridges[0].name: must be a non-empty string"),
        (0, {"source": None}, "bridges[0].source: is required"),
    ],
)
def test_bridge_errors_name_the_key(
    parse: Parse, default_doc: Doc, index: int, change: dict[str, Any], message: str
) -> None:
    bridge = {**default_doc["bridges"][index], **change}
    default_doc["bridges"][index] = {k: v for k, v in bridge.items() if v is not None}
    _expect(parse, default_doc, message)


def test_a_policy_that_moves_inventory_needs_a_bridge_for_every_route(
    parse: Parse, default_doc: Doc
) -> None:
    default_doc["bridges"] = [b for b in default_doc["bridges"] if b["token"] != "USDC"]
    _expect(
        parse,
        default_doc,
        "bridges: no bridge for USDC from chain 1 to chain 10 (policy threshold may move USDC "
        "between any two of its chains)",
    )
    default_doc["rebalancing"]["policy"] = "none"  # nothing moves: no bridge is needed
    assert parse(default_doc).rebalancing.policy == "none"


def test_without_the_table_nothing_moves(parse: Parse, default_doc: Doc) -> None:
    del default_doc["rebalancing"]
    del default_doc["bridges"]
    scenario = parse(default_doc)
    assert scenario.rebalancing.policy == "none" and scenario.bridges == ()


def test_left_out_chains_target_their_opening_share_with_half_as_threshold() -> None:
    targets = resolve_targets(load_scenario("default"))
    # Base holds 6.5M of the 21M USDC, Arbitrum 500 of the 2,400 WETH.
    assert targets[(8453, "USDC")] == (Fraction(13, 42), Fraction(13, 84))
    assert targets[(42161, "WETH")] == (Fraction(5, 24), Fraction(5, 48))


def _bridge_name(s: Scenario, token: str, src: int, dst: int) -> str:
    bridge = s.bridge(token, src, dst)
    assert bridge is not None, (token, src, dst)
    return bridge.name


def test_bridges_take_the_most_specific_entry() -> None:
    s = load_scenario("default")
    assert _bridge_name(s, "WETH", 1, 42161) == "Arbitrum canonical bridge deposit"
    assert _bridge_name(s, "WETH", 42161, 1) == "Across (fast intent bridge)"
    assert _bridge_name(s, "USDC", 10, 8453) == "CCTP v2 fast transfer"
    assert s.bridge("DAI", 1, 10) is None


def test_replay_overrides_name_the_key() -> None:
    base = load_scenario("default")
    with pytest.raises(ValueError, match=r"rebalancing.policy: must be one of none, threshold"):
        apply_overrides(base, {"rebalancing.policy": "bogus"})
    with pytest.raises(ValueError, match=r"rebalancing.overshoot_share: must be a number"):
        apply_overrides(base, {"rebalancing.overshoot_share": "lots"})
    periodic = apply_overrides(base, {"rebalancing.policy": "periodic", "rebalancing.period_s": 60})
    assert (periodic.rebalancing.policy, periodic.rebalancing.period_s) == ("periodic", 60)


def test_the_readme_example_is_a_scenario_that_runs(parse: Parse, default_doc: Doc) -> None:
    text = README.read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[rebalancing]" in b]
    example = tomllib.loads(block)
    default_doc["rebalancing"] = example["rebalancing"]
    default_doc["bridges"] = example["bridges"] + [
        b for b in default_doc["bridges"] if b["token"] == "WETH"
    ]
    scenario = parse(default_doc)
    assert scenario.rebalancing.targets[0].target_share == Decimal("0.30")
    bridge = scenario.bridge("USDC", 1, 8453)
    assert bridge is not None and bridge.gas_usd == Decimal("0.60")
    flow = generate_flow(scenario, span_h=0.5, rate_per_s=0.5, seed=1)
    assert replay(flow, scenario, seed=1).summary.policy == "threshold"
