"""The webhook sender: the one retry policy (Retry-After honoured, 4xx final), every attempt
recorded, and no URL ever carried in a body."""

from __future__ import annotations

import random

import httpx
import pytest

from toolkit.client import Attempt, RetryPolicy, Webhook


class Sleeps:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def __call__(self) -> float:
        return 0.0

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def hook_with(
    answers: list[httpx.Response | Exception],
) -> tuple[Webhook, Sleeps, list[Attempt], list[bytes]]:
    queue, posted = list(answers), []

    def handler(request: httpx.Request) -> httpx.Response:
        posted.append(request.content)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = Sleeps()
    seen: list[Attempt] = []
    hook = Webhook(
        "https://hooks.example/alerts",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(rng=random.Random(1), error_base=0.01),
        clock=clock,
        on_attempt=seen.append,
    )
    return hook, clock, seen, posted


def test_a_503_and_a_dropped_connection_are_retried_and_retry_after_waited_for() -> None:
    hook, clock, seen, posted = hook_with(
        [
            httpx.Response(503, headers={"Retry-After": "3"}),
            httpx.ReadError("reset"),
            httpx.Response(200),
        ]
    )
    delivery = hook.send({"alert_id": "a1"})
    assert delivery.delivered and delivery.attempts == 3 and delivery.status == 200
    assert clock.slept[0] == 3.0 and len(clock.slept) == 2
    assert [a.status for a in seen] == [503, 0, 200] and len(set(posted)) == 1


def test_a_refusal_is_final() -> None:
    hook, clock, _, _ = hook_with([httpx.Response(400)])
    delivery = hook.send({"alert_id": "a1"})
    assert not delivery.delivered and delivery.status == 400 and clock.slept == []


def test_a_body_with_a_url_is_refused_before_anything_is_sent() -> None:
    hook, _, _, posted = hook_with([])
    with pytest.raises(ValueError, match=r"body.detail.link: a webhook body carries no URL"):
        hook.send({"alert_id": "a1", "detail": {"link": "https://user:pw@node/v3/key"}})
    assert posted == []
