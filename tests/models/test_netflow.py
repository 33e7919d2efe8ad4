"""Net flow per chain and route: exact sums, and the interval's coverage of a known rate."""

from __future__ import annotations

import math

import polars as pl
import pytest

from toolkit.flows import LogNormal, generate_flow
from toolkit.models.intervals import wilson
from toolkit.models.netflow import net_flow, observed_orders, requested_orders, route_flow

USDC = 10**6
# Two routes one way, one back: Ethereum (1) gains inputs, Base (8453) and Optimism (10) pay.
ROUTES = {(1, 8453, "USDC"): 3.0, (1, 10, "USDC"): 1.0, (8453, 1, "USDC"): 1.0}
SIZES = {"USDC": LogNormal(median=5_000 * USDC, sigma=0.8)}
RATE_PER_S = 0.05
SPAN_H = 2.0


def _true_rates_per_h() -> dict[int, float]:
    """Each chain's expected net amount per hour: rate × route share × mean size, signed.

    The mean of a log-normal is ``median·exp(σ²/2)``; the route's fee tiers (10 to 1,000,000
    USDC) clip a draw with probability under 1e-9 at this median and spread, so clipping is
    left out.
    """
    mean = SIZES["USDC"].median * math.exp(SIZES["USDC"].sigma ** 2 / 2)
    total = sum(ROUTES.values())
    per_h = {1: 0.0, 10: 0.0, 8453: 0.0}
    for (src, dst, _), weight in ROUTES.items():
        flow = RATE_PER_S * 3600 * weight / total * mean
        per_h[src] += flow
        per_h[dst] -= flow
    return per_h


def test_sums_are_exact_and_every_order_counts_on_both_chains() -> None:
    big = 10**30  # past Int64 and Float64's exact range: sums must stay Int128
    orders = pl.DataFrame(
        {
            "src_chain": [1, 1, 10, 10],
            "dst_chain": [10, 10, 1, 10],
            "token": ["WETH", "WETH", "WETH", "WETH"],
            "input_amount": [big + 1, big + 3, 7, 9],
            "output_amount": [big, big + 1, 5, 4],
        },
        schema_overrides={"input_amount": pl.Int128, "output_amount": pl.Int128},
    )
    got = {r["chain"]: r for r in net_flow(orders, span_s=3600.0).iter_rows(named=True)}
    assert got[1]["received"] == 2 * big + 4 and got[1]["delivered"] == 5
    assert got[1]["net"] == 2 * big - 1
    # Chain 10 receives the order back (7) and the same-chain order's input (9), and delivers
    # both outbound orders' outputs and the same-chain output (4).
    assert got[10]["received"] == 16 and got[10]["delivered"] == 2 * big + 5
    assert got[10]["net"] == 11 - 2 * big
    assert (got[1]["n"], got[10]["n"]) == (3, 4)
    # Value is conserved across chains up to what the orders kept (input − output).
    kept = sum(i - o for i, o in zip(orders["input_amount"], orders["output_amount"], strict=True))
    assert got[1]["net"] + got[10]["net"] == kept


def test_route_flow_sums_each_route() -> None:
    orders = requested_orders(generate_flow("default", span_h=0.5, rate_per_s=0.2, seed=3))
    routes = route_flow(orders, span_s=1800.0)
    assert routes["n"].sum() == orders.height
    assert routes["output"].sum() == orders["output_amount"].sum()
    assert (routes["output_per_h_low"] <= routes["output_per_h"]).all()


def test_the_interval_covers_the_true_net_rate_95_percent_of_the_time() -> None:
    """Compound-Poisson normal interval against flows whose true rate is known."""
    truth = _true_rates_per_h()
    covered = trials = 0
    for seed in range(150):
        flow = generate_flow(
            "default",
            span_h=SPAN_H,
            rate_per_s=RATE_PER_S,
            seed=seed,
            profile=None,
            routes=ROUTES,
            sizes=SIZES,
        )
        frame = net_flow(requested_orders(flow), span_s=SPAN_H * 3600)
        for chain, low, high in frame.select(
            "chain", "net_per_h_low", "net_per_h_high"
        ).iter_rows():
            trials += 1
            covered += low <= truth[chain] <= high
    low, high = wilson(covered, trials)
    # 450 intervals: the observed coverage's own 95 % interval must hold 0.95.
    assert low <= 0.95 <= high, (covered, trials)


def test_the_direction_is_the_flows() -> None:
    flow = generate_flow(
        "default", span_h=4.0, rate_per_s=0.05, seed=1, profile=None, routes=ROUTES, sizes=SIZES
    )
    frame = net_flow(requested_orders(flow), span_s=4 * 3600)
    sign = {c: s for c, s in frame.select("chain", pl.col("net_per_h_high") < 0).iter_rows()}
    assert sign == {1: False, 10: True, 8453: True}  # Base and Optimism are drained


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("input_amount", -1, "must not hold negative amounts"),
        ("token", 5, "column 'token' must hold strings"),
    ],
)
def test_bad_input_names_the_column(column: str, value: object, message: str) -> None:
    orders = pl.DataFrame(
        {"src_chain": [1], "dst_chain": [10], "token": ["USDC"], "input_amount": [1],
         "output_amount": [1]}
    ).with_columns(pl.lit(value).alias(column))  # fmt: skip
    with pytest.raises(ValueError, match=message):
        net_flow(orders, span_s=60.0)


def test_a_span_must_be_positive() -> None:
    orders = requested_orders(
        pl.DataFrame({"src_chain": [1], "dst_chain": [10], "token": ["USDC"], "amount": [1]})
    )
    with pytest.raises(ValueError, match="span_s"):
        net_flow(orders, span_s=0.0)


def _seen(**columns: list[object]) -> pl.DataFrame:
    base: dict[str, list[object]] = {
        "src_chain": [1], "dst_chain": [8453], "input_symbol": ["USDC"],
        "output_symbol": ["USDC"], "released_amount": [0], "delivered_amount": [0],
    }  # fmt: skip
    return pl.DataFrame(base | columns)


def test_what_the_chains_saw_counts_only_once_it_moved() -> None:
    """An order filled but not released touches its destination only; one only opened (or
    refunded) touches nothing: the per-chain figures are the sides that moved, exactly."""
    seen = _seen(
        src_chain=[1, 1, 8453], dst_chain=[8453, 8453, 1], input_symbol=["USDC"] * 3,
        output_symbol=["USDC"] * 3, released_amount=[100, 0, 0], delivered_amount=[99, 40, 0],
    )  # fmt: skip
    frame = net_flow(observed_orders(seen), span_s=3600.0)
    assert frame.select("chain", "received", "delivered", "net", "n").rows() == [
        (1, 100, 0, 100, 1),
        (8453, 0, 139, -139, 2),
    ]


def test_an_order_of_two_tokens_is_each_tokens_flow() -> None:
    """WETH escrowed on Ethereum for USDC delivered on Base: Ethereum's WETH grows, Base's
    USDC shrinks, and neither token's figures hold the other's amount."""
    seen = _seen(input_symbol=["WETH"], released_amount=[10**18], delivered_amount=[3_000])
    orders = observed_orders(seen)
    assert orders.select("token", "input_amount", "output_amount").rows() == [
        ("WETH", 10**18, 0),
        ("USDC", 0, 3_000),
    ]
    frame = net_flow(orders, span_s=3600.0)
    assert frame.select("chain", "token", "net", "n").rows() == [
        (8453, "USDC", -3_000, 1),
        (1, "WETH", 10**18, 1),
    ]


def test_observed_orders_names_a_missing_column() -> None:
    with pytest.raises(ValueError, match="observed_orders: missing columns: released_amount"):
        observed_orders(_seen().drop("released_amount"))
