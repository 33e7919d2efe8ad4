"""A long single-amount Poisson replay without retries is an Erlang loss system.

The single-pool scenario holds 15 units of 1,000 USDC and charges nothing, so ExactOutput RFQs
of 1,000 USDC each hold one unit. Erlang-B is insensitive to the holding-time distribution, so
only the mean hold matters (research/anchors.md §3):

- a quote that does not convert holds until ``validUntil = round(t) + 15``: 15 s on average
  for arrivals spread uniformly within the second;
- a conversion after ``d`` seconds holds from the quote to the settlement: ``d`` + the quote's
  38 s eta (36 s of Ethereum confirmations, 2 s to fill on Base), after which the filler
  fills, + the 300 s settlement delay.

The standard error comes from batch means, because blocking is autocorrelated over a hold.

Erlang-B describes the instant-free rebalancing limit: a settlement gives the unit back to the
Base pool at once and for free. The replay names that policy explicitly; under single-pool's
own policy (none) the input is paid on Ethereum and the Base pool shrinks with every
settlement, which no loss model with a fixed capacity describes.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from toolkit.backtest import Constant, Fixed, generate_flow, replay
from toolkit.models.capacity import erlang_b, mean_hold

UNITS = 15
QUOTE_HOLD = 15.0  # mean of round(t) + 15 - t
ETA = 36 + 2
SETTLEMENT = 300


@pytest.mark.parametrize(("p_convert", "hours"), [(0.0, 30.0), (0.2, 150.0)])
def test_404_rate_matches_erlang_b_with_the_mean_hold(p_convert: float, hours: float) -> None:
    delay = 5.0
    hold = mean_hold(
        p_convert,
        quote_s=QUOTE_HOLD,
        order_s=ETA + SETTLEMENT,
        convert_delay_s=delay,
    )
    load = 11.0  # erlangs: blocking about 5.9 %
    flow = generate_flow(
        "single-pool",
        span_h=hours,
        rate_per_s=load / hold,
        seed=11,
        profile=None,
        sizes={"USDC": Fixed(1_000_000_000)},
        exact_output_share=1.0,
        convert_probability=p_convert,
        convert_delay=Constant(delay),
    )
    result = replay(flow, "single-pool", seed=11, overrides={"rebalancing.policy": "instant-free"})
    assert result.summary.policy == "instant-free"
    expected = erlang_b(UNITS, load)
    observed = result.summary.rfq_404_share

    t = result.requests["t"].to_numpy()
    refused = (result.requests["status"] == 404).to_numpy()
    batches = 25
    edges = np.linspace(0.0, hours * 3600.0, batches + 1)
    rates = [refused[(t >= lo) & (t < hi)].mean() for lo, hi in itertools.pairwise(edges)]
    stderr = float(np.std(rates, ddof=1)) / math.sqrt(batches)
    # The check must be able to fail: the error bar is a small fraction of the rate.
    assert stderr < 0.1 * expected
    assert abs(observed - expected) < 4 * stderr, (observed, expected, stderr)
