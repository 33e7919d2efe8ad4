"""The fault proxy on loopback: each fault as a client sees it, the providers' eth_getLogs
bounds in their own words, seeded draws, and the record of what arrived."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from toolkit.chain.providers import PROVIDER_MESSAGES, refusal_kind
from toolkit.client.retry import retry_after_s
from toolkit.testing import FaultMix, FaultProxy, LogLimit

QUICKNODE = next(m for m in PROVIDER_MESSAGES if m.provider == "QuickNode" and m.kind == "range")
INFURA = next(m for m in PROVIDER_MESSAGES if m.provider == "Infura" and m.kind == "size")


class Upstream:
    """A node answering every request, counting what reached it; eth_getLogs gives one log
    per block of the range."""

    def __init__(self) -> None:
        self.reached = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.reached += 1
        body = json.loads(request.content) if request.content else {}
        if isinstance(body, dict) and body.get("method") == "eth_getLogs":
            query = body["params"][0]
            blocks = range(int(query["fromBlock"], 16), int(query["toBlock"], 16) + 1)
            logs = [{"blockNumber": hex(b)} for b in blocks]
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": logs})
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": "0x" + "ab" * 64})


@pytest.fixture
def upstream() -> Upstream:
    return Upstream()


def proxy_for(upstream: Upstream, kind: str | None, **options: Any) -> FaultProxy:
    mix = FaultMix(share=0.0) if kind is None else FaultMix(share=1.0, kinds={kind: 1.0})
    return FaultProxy(
        "http://node.invalid", mix=mix, transport=httpx.MockTransport(upstream), **options
    )


CALL = {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=0.3) as c:
        yield c


def test_a_rate_limit_carries_a_providers_own_answer_and_retry_after(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, "rate_limit") as proxy:
        answers = [client.post(proxy.url, json=CALL) for _ in range(3)]
        plain = client.get(proxy.url + "/partner-intents/rfq")
    assert {a.status_code for a in answers} == {429}
    assert all(retry_after_s(a.headers) == 1.0 for a in answers)
    errors = [a.json()["error"] for a in answers]
    assert [refusal_kind(e["code"], e["message"]) for e in errors] == ["rate"] * 3
    assert len({e["message"] for e in errors}) == 3  # Infura, Alchemy, QuickNode in turn
    assert plain.status_code == 429 and plain.text == "Too Many Requests"
    assert upstream.reached == 0


def test_retry_after_as_an_http_date_says_the_same_wait(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, "rate_limit_date") as proxy:
        answer = client.post(proxy.url, json=CALL)
    assert "GMT" in answer.headers["retry-after"] and retry_after_s(answer.headers) == 1.0


def test_a_bare_429_and_a_503(upstream: Upstream, client: httpx.Client) -> None:
    with proxy_for(upstream, "rate_limit_bare") as proxy:
        bare = client.post(proxy.url, json=CALL)
    with proxy_for(upstream, "unavailable") as proxy:
        down = client.post(proxy.url, json=CALL)
    assert bare.status_code == 429 and "retry-after" not in bare.headers
    assert down.status_code == 503 and upstream.reached == 0


def test_a_timeout_holds_the_request_and_never_forwards_it(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, "timeout") as proxy, pytest.raises(httpx.ReadTimeout):
        client.post(proxy.url, json=CALL)
    assert upstream.reached == 0


def test_a_drop_cuts_the_answer_after_the_upstream_served_it(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, "drop") as proxy:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(proxy.url, json=CALL)
        assert proxy.records[0].status == 0 and proxy.records[0].fault == "drop"
    assert upstream.reached == 1


def test_a_malformed_answer_is_a_complete_200_that_is_not_json(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, "malformed") as proxy:
        answer = client.post(proxy.url, json=CALL)
    assert answer.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        answer.json()


def test_log_bounds_are_refused_in_the_providers_words(
    upstream: Upstream, client: httpx.Client
) -> None:
    limits = [LogLimit(QUICKNODE, max_blocks=100), LogLimit(INFURA, max_results=20)]
    with proxy_for(upstream, None, log_limits=limits) as proxy:

        def logs(first: int, last: int) -> httpx.Response:
            query = {"fromBlock": hex(first), "toBlock": hex(last)}
            body = {"jsonrpc": "2.0", "id": 9, "method": "eth_getLogs", "params": [query]}
            return client.post(proxy.url, json=body)

        wide, many, fine = logs(0, 100), logs(0, 20), logs(0, 19)
        assert [r.fault for r in proxy.records] == ["refused", "refused", None]
    assert wide.status_code == 413
    assert wide.json()["error"] == {"code": -32614, "message": QUICKNODE.message}
    assert many.status_code == 200 and many.json()["error"]["code"] == -32005
    assert many.json()["error"]["message"].endswith("Try with this block range [0x0, 0xa]")
    assert len(fine.json()["result"]) == 20


def test_the_same_seed_fails_the_same_requests(upstream: Upstream, client: httpx.Client) -> None:
    def faults() -> list[str | None]:
        mix = FaultMix(share=0.5, seed=4, kinds={"unavailable": 1.0, "rate_limit_bare": 1.0})
        with FaultProxy(
            "http://node.invalid", mix=mix, transport=httpx.MockTransport(upstream)
        ) as proxy:
            for _ in range(20):
                client.post(proxy.url, json=CALL)
            return [r.fault for r in proxy.records]

    first = faults()
    assert first == faults() and 3 < sum(f is not None for f in first) < 17


def test_busiest_counts_the_requests_of_the_fullest_window(
    upstream: Upstream, client: httpx.Client
) -> None:
    with proxy_for(upstream, None) as proxy:
        for _ in range(5):
            client.post(proxy.url + "/rpc/1", json=CALL)
        client.post(proxy.url + "/rpc/8453", json=CALL)
        assert proxy.busiest(60.0) == 6 and proxy.busiest(60.0, path="/rpc/1") == 5
        assert proxy.busiest(1e-9) == 1
