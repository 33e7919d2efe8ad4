"""Fixtures of the client tests: wire bodies, a recording mock service, a sleep that never waits."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from toolkit.codecs import erc7930

USER = "0x1111111111111111111111111111111111111111"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
USDC_ARB = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
FILLER = "0xfEfEfEfEfEfEfEfEfEfEfEfEfEfEfEfEfEfEfEfE"
KEY = "k-test-7f3a9c1e5b"


def quote_wire(amount_in: int = 1_000_000, amount_out: int = 999_000) -> dict[str, Any]:
    """One quote on the wire: Base USDC in, Arbitrum USDC out."""
    return {
        "preview": {
            "inputs": [
                {
                    "user": erc7930.encode(8453, USER),
                    "asset": erc7930.encode(8453, USDC_BASE),
                    "amount": str(amount_in),
                }
            ],
            "outputs": [
                {
                    "receiver": erc7930.encode(42161, USER),
                    "asset": erc7930.encode(42161, USDC_ARB),
                    "amount": str(amount_out),
                }
            ],
        },
        "quoteId": "qt_1",
        "validUntil": 1_700_000_015,
        "eta": 30,
        "provider": "service",
        "failureHandling": "refund-automatic",
        "partialFill": False,
        "metadata": {"exclusiveFor": FILLER},
    }


def rfq_args(**overrides: Any) -> dict[str, Any]:
    """Keyword arguments of a valid ``rfq`` call."""
    args: dict[str, Any] = {
        "src_chain": 8453,
        "dst_chain": 42161,
        "amount": 1_000_000,
        "token": USDC_ARB,
        "user": USER,
    }
    args.update(overrides)
    return args


def sse_body(*events: tuple[str, str, str | None]) -> bytes:
    """An event-stream body from (event, data, id) triples."""
    out = []
    for name, data, event_id in events:
        lines = [f"event: {name}"]
        if event_id is not None:
            lines.append(f"id: {event_id}")
        lines.append(f"data: {data}")
        out.append("\n".join(lines) + "\n\n")
    return "".join(out).encode()


@dataclass
class Script:
    """A mock service answering from a list of canned responses, recording each request."""

    answers: list[Callable[[httpx.Request], httpx.Response] | httpx.Response | Exception]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return httpx.Response(
                answer.status_code, headers=answer.headers, content=answer.content
            )
        return answer(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def respond(status: int, body: Any = None, **headers: str) -> httpx.Response:
    """A JSON response (or an empty one)."""
    if body is None:
        return httpx.Response(status, headers=headers)
    return httpx.Response(
        status,
        content=json.dumps(body).encode(),
        headers={"content-type": "application/json", **headers},
    )


@dataclass
class Sleeps:
    """A clock that records the delays slept on it instead of waiting."""

    delays: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return 1_760_000_000.0 + sum(self.delays)

    def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Clear the client's environment variables."""
    monkeypatch.delenv("TOOLKIT_BASE_URL", raising=False)
    monkeypatch.delenv("TOOLKIT_API_KEY", raising=False)
    yield
