"""Background traffic: other users' flow replayed on a live embedded service, on chain."""

from __future__ import annotations

import time

import polars as pl
import pytest

from toolkit.client import EmbeddedService, ServiceClient, chain_web3
from toolkit.clock import ScaledClock
from toolkit.collect import Traffic
from toolkit.scenario import load_scenario

FLOW = pl.DataFrame(
    {
        "t": [0.0, 2.0, 4.0, 6.0],
        "src_chain": [8453, 42161, 8453, 42161],
        "dst_chain": [42161, 8453, 42161, 8453],
        "token": ["USDC"] * 4,
        "amount": [1_000 * 10**6] * 4,
        "type": ["ExactOutput", "ExactInput", "ExactOutput", "ExactInput"],
        "converts": [True, True, False, True],
        "convert_delay": [1.0, 3.0, 0.0, 1.0],
    }
)


def test_converting_quotes_are_opened_on_chain_then_filled_and_settled() -> None:
    clock = ScaledClock(100.0)
    with ServiceClient(clock=clock) as client:
        assert client.embedded is not None
        with Traffic(client.embedded, FLOW) as traffic:
            traffic.join(timeout=30)
        counts = {k: n for k, n in traffic.counts.items() if k != "late"}
        assert counts == {"rfq": 4, "quoted": 4, "opened": 3}
        world = client.embedded.app.state.service.world  # type: ignore[attr-defined]
        base = chain_web3(8453, embedded=client.embedded)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            base.eth.block_number  # noqa: B018 - any JSON-RPC call brings the world up to time
            counts = {status.value: n for status, n in world.counts().items() if n}
            if counts.get("Settled", 0) == 3:
                break
            clock.sleep(5.0)
        assert counts == {"Settled": 3}


def test_bad_input_is_refused_naming_the_field() -> None:
    service = EmbeddedService("default", env={})
    try:
        with pytest.raises(ValueError, match="embedded: traffic is only driven into the embedded"):
            Traffic(object(), FLOW)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="flow: must be a polars DataFrame"):
            Traffic(service, FLOW.to_dicts())  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"flow: missing column\(s\) converts, convert_delay"):
            Traffic(service, FLOW.drop("converts", "convert_delay"))
        ready_made = EmbeddedService(app=service.app)
        with pytest.raises(ValueError, match="scenario: give the Scenario"):
            Traffic(ready_made, FLOW)
        assert Traffic(ready_made, FLOW, scenario=load_scenario("default", env={})).counts == {}
    finally:
        service.close()
