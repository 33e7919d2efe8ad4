"""The attempts of one JSON-RPC POST under the one retry policy, for the sync and async chain
providers alike (:mod:`toolkit.client.chain` only does the I/O).

What a node answers, and what happens next:

- a JSON-RPC answer (or batch) under a 2xx: returned, unless it is a rate limit (a node's
  ``429`` code, Infura's ``-32005`` "request rate exceeded": :func:`~toolkit.chain.providers.
  refusal_kind`), which is retried as an HTTP 429 (a batch, whole, when any of its answers is);
- a body that is not JSON under a 2xx (cut short, corrupted): a transport failure, retried;
- a 429 or 5xx: retried, after the ``Retry-After`` header (seconds or an HTTP date) or the
  node's own ``error.data.backoff_seconds`` when either is longer than the backoff;
- any other status: final; a JSON-RPC error body under it (QuickNode refuses a wide
  ``eth_getLogs`` range with HTTP 413 and code -32614) is returned so the caller reads the
  error as it would under a 200, anything else raises ``httpx.HTTPStatusError``;
- a timeout or a dropped connection: retried.

Every attempt is paced by the policy's ``max_rps`` first and reported to ``on_attempt`` as an
:class:`~toolkit.client.Attempt` (operation: the JSON-RPC method, or ``batch`` and its size).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import httpx

from toolkit.chain.providers import refusal_kind
from toolkit.client.retry import Attempt, AttemptHook, retry_after_s
from toolkit.resources.retry import RetryPolicy

__all__ = ["RpcAttempts", "operation_name"]


def operation_name(body: Any) -> str:
    """What an attempt record calls a request: its method, or ``batch`` and the count.

    >>> operation_name({"method": "eth_getLogs"}), operation_name([{}, {}])
    ('eth_getLogs', 'batch of 2')
    """
    if isinstance(body, list):
        return f"batch of {len(body)}"
    if isinstance(body, Mapping):
        return str(body.get("method"))
    return "request"


def _rate_limited(answer: Any) -> tuple[bool, float | None]:
    """Whether ``answer`` (or one answer of a batch) is a rate limit, and the node's own
    ``backoff_seconds`` when it gives one."""
    answers = answer if isinstance(answer, list) else [answer]
    for item in answers:
        error = item.get("error") if isinstance(item, Mapping) else None
        if not isinstance(error, Mapping):
            continue
        code = error.get("code")
        data = error.get("data")
        kind = refusal_kind(
            code if isinstance(code, int) else None, str(error.get("message")), data
        )
        if kind == "rate":
            backoff = data.get("backoff_seconds") if isinstance(data, Mapping) else None
            return True, float(backoff) if isinstance(backoff, int | float) else None
    return False, None


def _decoded(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


class RpcAttempts:
    """The attempts of one POST: the retry budget, pacing, reading each answer, the records.

    >>> attempts = RpcAttempts(RetryPolicy(error_retries=1), "http://node", "eth_chainId", None)
    >>> attempts.start()
    >>> attempts.outcome(httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": "0x1"}))
    ({'jsonrpc': '2.0', 'id': 1, 'result': '0x1'}, None)
    >>> attempts.start()
    >>> attempts.outcome(httpx.Response(429, headers={"Retry-After": "2"}))
    (None, 2.0)
    """

    def __init__(
        self, retry: RetryPolicy, path: str, operation: str, hook: AttemptHook | None
    ) -> None:
        self.retry = retry
        self.path = path
        self.operation = operation
        self.hook = hook
        self.retries = 0
        self.number = 0
        self.started = 0.0

    def start(self) -> None:
        """An attempt begins (after its pacing wait)."""
        self.number += 1
        self.started = time.perf_counter()

    def outcome(self, result: httpx.Response | httpx.TransportError) -> tuple[Any, float | None]:
        """``(answer, None)`` when the attempt answered for good, ``(None, wait)`` to retry
        after ``wait`` seconds; raises the failure when the policy says it was the last."""
        if isinstance(result, httpx.TransportError):
            detail = f"{type(result).__name__}: {result}" if str(result) else type(result).__name__
            wait = self._retry_in(0, None, detail)
            if wait is None:
                raise result
            return None, wait
        answer = _decoded(result)
        status = result.status_code
        retry_after = retry_after_s(result.headers)
        if result.is_success:
            if answer is None:
                status, detail = 0, f"HTTP {status} answer is not JSON (cut short or corrupted)"
            else:
                limited, backoff = _rate_limited(answer)
                if not limited:
                    self._record(status, None, None)
                    return answer, None
                status, retry_after, detail = 429, backoff, "rate limited (JSON-RPC error)"
        else:
            backoff = _rate_limited(answer)[1] if answer is not None else None
            retry_after = max(retry_after or 0.0, backoff or 0.0) or None
            detail = f"HTTP {status}"
        wait = self._retry_in(status, retry_after, detail)
        if wait is not None:
            return None, wait
        if answer is None and result.is_success:
            raise httpx.DecodingError(detail, request=result.request)
        # Out of retries, or refused for good: a JSON-RPC answer goes to the caller, who reads
        # its error as under a 200 (a rate limit, QuickNode's 413 range refusal).
        if isinstance(answer, list) or (isinstance(answer, Mapping) and "error" in answer):
            return answer, None
        result.raise_for_status()
        return answer, None  # a 2xx that is neither: the caller's decoding decides

    def _retry_in(self, status: int, retry_after: float | None, detail: str) -> float | None:
        """The policy's wait before the next attempt (recorded), or None when final."""
        wait = self.retry.delay_after("read", status, retries=self.retries, retry_after=retry_after)
        self._record(status, detail, wait)
        if wait is not None:
            self.retries += 1
        return wait

    def _record(self, status: int, error: str | None, retry_in: float | None) -> None:
        if self.hook is None:
            return
        self.hook(
            Attempt(
                operation=self.operation,
                method="POST",
                path=self.path,
                params={},
                number=self.number,
                status=status,
                latency_ms=(time.perf_counter() - self.started) * 1000.0,
                error=error,
                retry_in=retry_in,
            )
        )
