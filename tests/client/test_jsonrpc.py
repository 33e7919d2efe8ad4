"""The chain client under the one retry policy: rate limits in JSON-RPC answers, garbled bodies,
refusals under non-2xx statuses, the node's own backoff, and pacing; every wait recorded."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from web3 import Web3
from web3.types import RPCEndpoint

from toolkit.client import Attempt, ChainProvider, RetryPolicy
from toolkit.collect.rpc import range_too_large, rpc_result

OK = {"jsonrpc": "2.0", "id": 1, "result": "0x2105"}


class Sleeps:
    """A clock that records its sleeps instead of taking them."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def provider(
    answers: list[httpx.Response], *, retry: RetryPolicy | None = None
) -> tuple[ChainProvider, Sleeps, list[Attempt]]:
    queue = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        return queue.pop(0)

    clock = Sleeps()
    seen: list[Attempt] = []
    node = ChainProvider(
        "https://node.example/v3/SECRET-KEY",
        transport=httpx.MockTransport(handler),
        retry=retry or RetryPolicy(rng=random.Random(1), error_base=0.01, max_delay=60),
        clock=clock,
        on_attempt=seen.append,
    )
    return node, clock, seen


def rpc_error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": 1, "error": error}


def test_a_rate_limit_in_a_json_rpc_answer_is_retried_after_the_nodes_own_backoff() -> None:
    infura = rpc_error(-32005, "project ID request rate exceeded", {"backoff_seconds": 30.0})
    node, clock, seen = provider([httpx.Response(429, json=infura), httpx.Response(200, json=OK)])
    assert node.make_request(RPCEndpoint("eth_chainId"), [])["result"] == "0x2105"
    assert clock.slept == [30.0]
    assert [(a.status, a.retry_in) for a in seen] == [(429, 30.0), (200, None)]
    assert all("SECRET-KEY" not in a.path for a in seen)  # the URL as the redaction shows it


def test_a_rate_limit_under_a_200_is_a_429_too_and_a_batch_is_retried_whole() -> None:
    alchemy = rpc_error(429, "Your app has exceeded its compute units per second capacity.")
    batch = [OK, alchemy]
    node, clock, seen = provider(
        [httpx.Response(200, json=batch), httpx.Response(200, json=[OK, OK])]
    )
    answers = node.make_batch_request([(RPCEndpoint("eth_chainId"), [])] * 2)
    assert [a["result"] for a in answers] == ["0x2105", "0x2105"]  # type: ignore[index]
    assert [a.status for a in seen] == [429, 200] and len(clock.slept) == 1


def test_a_garbled_body_is_retried_as_a_transport_failure() -> None:
    node, _, seen = provider(
        [
            httpx.Response(200, content=b'{"jsonrpc": "2.0", "id": 1, "res'),
            httpx.Response(200, json=OK),
        ]
    )
    assert node.make_request(RPCEndpoint("eth_chainId"), [])["result"] == "0x2105"
    assert seen[0].status == 0 and "not JSON" in (seen[0].error or "")


def test_a_garbled_body_out_of_retries_raises_a_decoding_error() -> None:
    garbled = [httpx.Response(200, content=b"{") for _ in range(2)]
    node, _, _ = provider(garbled, retry=RetryPolicy(error_retries=1, error_base=0.01))
    with pytest.raises(httpx.DecodingError, match="not JSON"):
        node.make_request(RPCEndpoint("eth_chainId"), [])


def test_a_refusal_under_a_413_reaches_the_caller_as_a_json_rpc_error() -> None:
    quicknode = rpc_error(-32614, "eth_getLogs is limited to a 10,000 range")
    node, clock, seen = provider([httpx.Response(413, json=quicknode)])
    answer = node.make_request(RPCEndpoint("eth_getLogs"), [{}])
    with pytest.raises(Exception) as refused:
        rpc_result("eth_getLogs", answer)
    assert range_too_large(refused.value)
    assert clock.slept == [] and [a.status for a in seen] == [413]


def test_a_non_json_rpc_refusal_raises_the_http_status() -> None:
    node, _, _ = provider([httpx.Response(404, text="no such route")])
    with pytest.raises(httpx.HTTPStatusError, match="404"):
        node.make_request(RPCEndpoint("eth_chainId"), [])


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "2"}, {"Retry-After": "Wed, 21 Oct 2015 07:28:02 GMT",
                             "Date": "Wed, 21 Oct 2015 07:28:00 GMT"}],
    ids=["seconds", "http-date"],
)  # fmt: skip
def test_retry_after_is_waited_for_in_both_forms(headers: dict[str, str]) -> None:
    node, clock, seen = provider(
        [httpx.Response(429, headers=headers), httpx.Response(200, json=OK)]
    )
    node.make_request(RPCEndpoint("eth_chainId"), [])
    assert clock.slept == [2.0] and seen[0].retry_in == 2.0


def test_max_rps_spaces_every_attempt_retries_included() -> None:
    answers = [httpx.Response(503), *[httpx.Response(200, json=OK) for _ in range(4)]]
    policy = RetryPolicy(max_rps=5, rng=random.Random(2), error_base=0.0)
    node, clock, seen = provider(answers, retry=policy)
    for _ in range(4):
        node.make_request(RPCEndpoint("eth_chainId"), [])
    # five attempts at 5 per second: the first free, then one every 0.2 s; the 503's own
    # backoff (0 s here) does not let its retry jump the queue
    assert len(seen) == 5
    assert clock.slept == pytest.approx([0.0, 0.2, 0.2, 0.2, 0.2])


def test_web3_reads_through_it_as_before() -> None:
    node, _, _ = provider([httpx.Response(200, json=OK)])
    assert Web3(node).eth.chain_id == 8453
