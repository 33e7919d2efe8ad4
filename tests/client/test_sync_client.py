"""The sync client against httpx.MockTransport services: requests, answers, errors, retries."""

from __future__ import annotations

import json
import random
import re

import httpx
import pytest

from toolkit.client import (
    Attempt,
    BadRequest,
    InvalidResponse,
    NoCapacity,
    NotFound,
    RetryPolicy,
    ServerError,
    ServiceClient,
    TransportError,
    Unauthorized,
)
from toolkit.resources import InvalidInput, Quote

from .conftest import KEY, USDC_ARB, USDC_BASE, USER, Script, Sleeps, quote_wire, respond, rfq_args


def make(script: Script, sleeps: Sleeps, **kwargs: object) -> ServiceClient:
    kwargs.setdefault("retry", RetryPolicy(rng=random.Random(0)))
    return ServiceClient(
        "https://service.example",
        api_key=KEY,
        transport=script.transport,
        clock=sleeps,
        **kwargs,  # type: ignore[arg-type]
    )


def test_rfq_sends_the_query_and_the_key_and_returns_the_quote(sleeps: Sleeps) -> None:
    script = Script([respond(200, {"quotes": [quote_wire()]})])
    quote = make(script, sleeps).rfq(**rfq_args(type="ExactOutput"))
    assert isinstance(quote, Quote)
    assert quote.quote_id == "qt_1"
    (request,) = script.requests
    assert request.url.path == "/partner-intents/rfq"
    assert dict(request.url.params) == {
        "srcChain": "eip155:8453",
        "dstChain": "eip155:42161",
        "amount": "1000000",
        "token": USDC_ARB,
        "user": USER,
        "type": "ExactOutput",
    }
    assert request.headers["X-Auth-Token"] == KEY


def test_rfq_capacity_404_retries_after_backoff_then_succeeds(sleeps: Sleeps) -> None:
    attempts: list[Attempt] = []
    script = Script(
        [
            respond(404, {"error": "no capacity"}),
            respond(404, {"error": "no capacity"}),
            respond(200, {"quotes": [quote_wire()]}),
        ]
    )
    client = make(script, sleeps, on_attempt=attempts.append)
    assert client.rfq(**rfq_args()).quote_id == "qt_1"
    assert [a.status for a in attempts] == [404, 404, 200]
    assert [a.number for a in attempts] == [1, 2, 3]
    assert sleeps.delays == [attempts[0].retry_in, attempts[1].retry_in]
    assert attempts[-1].final and attempts[-1].ok
    assert all(0 < d <= 15 for d in sleeps.delays)


def test_rfq_capacity_budget_spent_raises_no_capacity(sleeps: Sleeps) -> None:
    attempts: list[Attempt] = []
    script = Script([respond(404, {"error": "no pool can serve the route now"})])
    client = make(
        script,
        sleeps,
        retry=RetryPolicy(capacity_retries=2, rng=random.Random(0)),
        on_attempt=attempts.append,
    )
    with pytest.raises(NoCapacity) as caught:
        client.rfq(**rfq_args())
    assert caught.value.status == 404
    assert caught.value.body is not None and "no pool" in caught.value.body.error
    assert str(caught.value) == "rfq: HTTP 404: no pool can serve the route now"
    assert len(script.requests) == 3 and len(sleeps.delays) == 2
    assert [a.final for a in attempts] == [False, False, True]


@pytest.mark.parametrize(("status", "kind"), [(400, BadRequest), (401, Unauthorized)])
def test_bad_request_and_bad_key_are_not_retried(
    sleeps: Sleeps, status: int, kind: type[Exception]
) -> None:
    script = Script([respond(status, {"error": "amount: must be a string of digits"})])
    with pytest.raises(kind) as caught:
        make(script, sleeps).rfq(**rfq_args())
    assert len(script.requests) == 1 and sleeps.delays == []
    assert "amount: must be a string of digits" in str(caught.value)


def test_server_errors_retry_then_succeed(sleeps: Sleeps) -> None:
    script = Script([respond(503, {"error": "busy"}), respond(500), respond(200, {"status": "ok"})])
    assert make(script, sleeps).health().status == "ok"
    assert len(script.requests) == 3 and len(sleeps.delays) == 2


def test_server_error_budget_spent_raises_server_error(sleeps: Sleeps) -> None:
    script = Script([httpx.Response(502, text="Bad Gateway")])
    client = make(script, sleeps, retry=RetryPolicy(error_retries=1, rng=random.Random(0)))
    with pytest.raises(ServerError, match="tokens: HTTP 502: Bad Gateway"):
        client.tokens(8453)
    assert len(script.requests) == 2


def test_timeouts_retry_and_end_as_transport_error_with_status_zero(sleeps: Sleeps) -> None:
    attempts: list[Attempt] = []
    script = Script([httpx.ReadTimeout("timed out")])
    client = make(
        script,
        sleeps,
        retry=RetryPolicy(error_retries=2, rng=random.Random(0)),
        on_attempt=attempts.append,
    )
    with pytest.raises(TransportError) as caught:
        client.rfq(**rfq_args())
    assert caught.value.status == 0
    assert str(caught.value) == "rfq: no response: ReadTimeout: timed out"
    assert [a.status for a in attempts] == [0, 0, 0]
    assert len(sleeps.delays) == 2


def test_retry_after_header_sets_the_wait(sleeps: Sleeps) -> None:
    script = Script(
        [respond(503, {"error": "later"}, **{"Retry-After": "3"}), respond(200, {"status": "ok"})]
    )
    make(script, sleeps).health()
    assert sleeps.delays == [3.0]


def test_transaction_is_never_retried(sleeps: Sleeps) -> None:
    script = Script([respond(503, {"error": "busy"})])
    quote = Quote.model_validate(quote_wire())
    with pytest.raises(ServerError):
        make(script, sleeps).transaction(quote)
    assert len(script.requests) == 1 and sleeps.delays == []
    (request,) = script.requests
    assert request.method == "POST"
    assert json.loads(request.content) == quote.to_wire()
    # The transaction endpoint takes no key: it is not sent where it is not needed.
    assert "X-Auth-Token" not in request.headers


def test_transaction_returns_the_quote_with_its_transaction_request(sleeps: Sleeps) -> None:
    body = quote_wire() | {
        "transactionRequest": {
            "from": USER,
            "to": "0x000025c3226C00B2Cdc200005a1600509f4e00C0",
            "chainId": 8453,
            "data": "0x7515fd56",
            "value": "0x0",
        }
    }
    script = Script([respond(200, body)])
    result = make(script, sleeps).transaction(Quote.model_validate(quote_wire()))
    assert result.transaction_request is not None
    assert result.transaction_request.chain_id == 8453


def test_a_200_that_breaks_the_interface_is_an_invalid_response(sleeps: Sleeps) -> None:
    script = Script([respond(200, {"quotes": []})])
    with pytest.raises(InvalidResponse, match="quotes: must hold exactly one quote, got 0"):
        make(script, sleeps).rfq(**rfq_args())
    assert len(script.requests) == 1


def test_bad_input_is_refused_before_anything_is_sent(sleeps: Sleeps) -> None:
    script = Script([respond(200, {"status": "ok"})])
    client = make(script, sleeps)
    with pytest.raises(InvalidInput, match="amount: must be a string of digits"):
        client.rfq(**rfq_args(amount="1e6"))
    with pytest.raises(InvalidInput, match="srcChain: must be positive"):
        client.rfq(**rfq_args(src_chain=0))
    with pytest.raises(InvalidInput, match="token: must be a 0x-prefixed 20-byte hex address"):
        client.rfq(**rfq_args(token="USDC"))
    with pytest.raises(InvalidInput, match="type: must be 'ExactInput' or 'ExactOutput'"):
        client.rfq(**rfq_args(type="Exact"))
    with pytest.raises(InvalidInput, match="poolType"):
        client.pool("bogus", 8453, "USDC")  # type: ignore[arg-type]
    assert script.requests == []


def test_liquidity_discovery_endpoints(sleeps: Sleeps) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/liquidity/chain/eip155:8453/tokens":
            return respond(200, {"data": {"USDC": {"address": USDC_BASE, "decimals": 6}}})
        if path == "/liquidity/pools/usdc":
            assert dict(request.url.params) == {"chain": "eip155:8453", "tokenSymbol": "USDC"}
            return respond(200, {"data": {"address": USDC_BASE, "balance": str(2**100)}})
        if path == "/liquidity/protocol/partner-escrow/fees" and "USDC" in str(request.url):
            return respond(
                200, {"data": [{"feeBps": 5, "minAmount": 0, "maxAmount": 100_000_000_000}]}
            )
        if path == "/protocol/partner-escrow/solver":
            assert "X-Auth-Token" not in request.headers
            return respond(200, {"solver": USER, "duration": 60})
        return respond(404, {"error": f"no route {path}"})

    client = make(Script([handler]), sleeps)
    assert client.tokens(8453)["USDC"].decimals == 6
    assert client.pool("usdc", "eip155:8453", "USDC").balance_int == 2**100
    assert client.fees(1, 8453, "USDC", "USDC")[0].fee_bps == 5
    assert client.solver(1000, 1, 8453, "USDC", "USDC").duration == 60
    with pytest.raises(NotFound, match="fees: HTTP 404: no route") as caught:
        client.fees(1, 10, "WETH", "WETH")
    # Outside the RFQ a 404 is final and is not a capacity answer.
    assert not isinstance(caught.value, NoCapacity)
    assert sleeps.delays == []


def test_borrow_quote_path_query_and_answer(sleeps: Sleeps) -> None:
    quote = {
        "borrowCost": "150000",
        "duration": 300,
        "estimatedFillDuration": 180,
        "feeBps": 5,
        "id": "bq_1",
        "liquidityPool": USDC_BASE,
        "quoteDuration": 60,
        "repaymentChain": 1,
        "repaymentRecipient": USER,
        "requiredInput": "100000000",
        "requiredOutput": "99850000",
    }
    script = Script([respond(200, {"data": quote})])
    result = make(script, sleeps).borrow_quote(
        src_chain=1, dst_chain=8453, amount=100_000_000, token=USDC_BASE, exclusive=False
    )
    assert result.id == "bq_1" and result.borrow_cost_int == 150_000
    (request,) = script.requests
    assert (
        request.url.path
        == "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote"
    )
    assert request.url.params["exclusive"] == "false"
    assert request.url.params["dstChain"] == "eip155:8453"


AUTH = {
    "borrowAmount": "1000",
    "borrowCost": "5",
    "borrowToken": USDC_BASE,
    "liquidityPool": USDC_BASE,
    "nonce": "7",
    "signature": "0x" + "ab" * 65,
    "deadline": "1700000100",
}


def _authorize(client: ServiceClient):
    return client.authorize(
        dst_chain=8453,
        caller=USER,
        input="0x1234",
        quote_id="bq_1",
        tx_hash="0x" + "cd" * 32,
        metadata={"srcChain": "eip155:1"},
    )


def test_authorize_reads_the_event_named_data(sleeps: Sleeps) -> None:
    payload = json.dumps({"data": AUTH})
    body = b": ping\n\n" + f"event: data\ndata: {payload}\n\n".encode()
    script = Script(
        [httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)]
    )
    result = _authorize(make(script, sleeps))
    assert result.nonce == "7" and result.borrow_amount_int == 1000
    (request,) = script.requests
    assert json.loads(request.content) == {
        "caller": USER,
        "input": "0x1234",
        "quoteId": "bq_1",
        "txHash": "0x" + "cd" * 32,
        "metadata": {"srcChain": "eip155:1"},
    }
    assert request.headers["accept"] == "text/event-stream"


def test_authorize_errors(sleeps: Sleeps) -> None:
    empty = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b": x\n\n")
    with pytest.raises(InvalidResponse, match="the event stream ended empty"):
        _authorize(make(Script([empty]), sleeps))
    bad = Script([respond(400, {"error": "quoteId: unknown quote"})])
    with pytest.raises(BadRequest, match="quoteId: unknown quote"):
        _authorize(make(bad, sleeps))
    json_200 = Script([respond(200, {"data": AUTH})])
    with pytest.raises(InvalidResponse, match="expected text/event-stream"):
        _authorize(make(json_200, sleeps))
    assert sleeps.delays == []


def test_configuration_from_the_environment(sleeps: Sleeps) -> None:
    env = {"TOOLKIT_BASE_URL": "https://env.example/", "TOOLKIT_API_KEY": "k-from-env"}
    script = Script([respond(200, {"data": {}})])
    client = ServiceClient(transport=script.transport, env=env, clock=sleeps)
    client.tokens(1)
    assert client.base_url == "https://env.example"
    assert str(script.requests[0].url).startswith("https://env.example/liquidity/")
    assert script.requests[0].headers["X-Auth-Token"] == "k-from-env"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://host", "base_url: must be an absolute http(s) URL"),
        ("service.example", "base_url: must be an absolute http(s) URL"),
        ("https://host:99999", "base_url: not a valid URL"),
        ("https://host/?apiKey=x", "base_url: must not carry a query string"),
    ],
)
def test_bad_base_url_is_one_clear_error(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ServiceClient(url, transport=httpx.MockTransport(lambda r: respond(200)))


def test_bad_url_message_never_shows_credentials() -> None:
    with pytest.raises(ValueError) as caught:
        ServiceClient("ftp://alice:s3cret-pw@host/x", env={})
    assert "s3cret-pw" not in str(caught.value) and "alice" not in str(caught.value)


def test_timeouts_are_configurable() -> None:
    client = ServiceClient(
        "https://service.example",
        timeout=httpx.Timeout(1.0, connect=0.5),
        transport=httpx.MockTransport(lambda r: respond(200)),
    )
    assert client._http.timeout.connect == 0.5
    assert client._http.timeout.read == 1.0
    with pytest.raises(ValueError, match="timeout: must be a finite number > 0"):
        ServiceClient("https://service.example", timeout=-1)
