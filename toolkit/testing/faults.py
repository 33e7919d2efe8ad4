"""What the fault proxy (:mod:`toolkit.testing.proxy`) does to requests: a seeded mix of the
failures providers and networks produce, and the ``eth_getLogs`` bounds of named providers.

Fault kinds (:data:`FAULT_KINDS`):

- ``rate_limit``: HTTP 429 with ``Retry-After`` in seconds;
- ``rate_limit_date``: HTTP 429 with ``Retry-After`` as an HTTP date (and a ``Date`` header);
- ``rate_limit_bare``: HTTP 429 without ``Retry-After``;
- ``unavailable``: HTTP 503;
- ``timeout``: the request is held without an answer for ``hold_s``, then the connection
  closes (the request never reaches the upstream);
- ``drop``: the upstream's answer is cut halfway and the connection closed (the request did
  reach the upstream: an RFQ retried after it leaves a reservation behind, as in life);
- ``malformed``: the upstream's answer under a 200 with its body cut to half (not JSON).

A 429 to a JSON-RPC request carries a provider's own rate-limit answer from
:data:`toolkit.chain.providers.PROVIDER_MESSAGES` (in turn: Infura, Alchemy, QuickNode), one to
another request a plain ``Too Many Requests``, as a CDN in front of a service answers.

>>> mix = FaultMix(share=1.0, seed=3)
>>> rng = mix.rng()
>>> [mix.draw(rng) for _ in range(3)]
['unavailable', 'timeout', 'rate_limit']
>>> FaultMix(share=0.0).draw(FaultMix().rng()) is None
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from toolkit.arguments import ArgumentError, number, whole
from toolkit.chain.providers import PROVIDER_MESSAGES, ProviderMessage

__all__ = ["FAULT_KINDS", "RATE_LIMIT_ANSWERS", "FaultMix", "LogLimit", "rpc_error_body"]

FAULT_KINDS: Final = (
    "rate_limit",
    "rate_limit_date",
    "rate_limit_bare",
    "unavailable",
    "timeout",
    "drop",
    "malformed",
)

#: The providers' rate-limit answers the proxy sends to JSON-RPC requests, in turn (those
#: with a ``backoff_seconds`` of their own are left out: the mix sets the waits).
RATE_LIMIT_ANSWERS: Final = tuple(
    m for m in PROVIDER_MESSAGES if m.kind == "rate" and m.data is None
)


@dataclass(frozen=True)
class FaultMix:
    """Which share of requests fail and how: each request draws from a ``random.Random(seed)``
    in arrival order, failing with probability ``share``, the kind weighted by ``kinds``.
    ``retry_after_s`` is what a 429 with ``Retry-After`` asks for (whole seconds, so the
    HTTP-date form says the same), ``hold_s`` how long a ``timeout`` holds the request.

    >>> FaultMix(share=0.2, seed=7, kinds={"unavailable": 1.0, "drop": 3.0}).share
    0.2
    >>> FaultMix(kinds={"flaky": 1.0})
    Traceback (most recent call last):
    ...
    toolkit.arguments.ArgumentError: kinds: must be a non-empty mapping of rate_limit, ...
    """

    share: float = 0.2
    seed: int = 0
    kinds: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType(dict.fromkeys(FAULT_KINDS, 1.0))
    )
    retry_after_s: int = 1
    hold_s: float = 1.0

    def __post_init__(self) -> None:
        number(self.share, "share", minimum=0, maximum=1)
        whole(self.retry_after_s, "retry_after_s", minimum=0)
        number(self.hold_s, "hold_s", above=0)
        unknown = sorted(set(self.kinds) - set(FAULT_KINDS))
        if unknown or not self.kinds:
            raise ArgumentError(
                "kinds", f"a non-empty mapping of {', '.join(FAULT_KINDS)}", unknown
            )
        for kind, weight in self.kinds.items():
            number(weight, f"kinds.{kind}", minimum=0)

    def rng(self) -> random.Random:
        """The seeded stream the draws come from."""
        return random.Random(self.seed)

    def draw(self, rng: random.Random) -> str | None:
        """The fault of the next request, or None for none."""
        if rng.random() >= self.share:
            return None
        kinds = list(self.kinds)
        return rng.choices(kinds, weights=[self.kinds[k] for k in kinds])[0]


@dataclass(frozen=True)
class LogLimit:
    """A provider's bound on ``eth_getLogs``: a range of more than ``max_blocks`` blocks, or an
    answer of more than ``max_results`` logs, is refused with ``message`` (its code, words and
    HTTP status), the block range to retry with filled in where the provider names one.

    >>> from toolkit.chain.providers import PROVIDER_MESSAGES
    >>> LogLimit(PROVIDER_MESSAGES[0], max_results=100).max_results
    100
    """

    message: ProviderMessage
    max_blocks: int | None = None
    max_results: int | None = None

    def __post_init__(self) -> None:
        if self.max_blocks is None and self.max_results is None:
            raise ArgumentError("max_blocks", "a bound (max_blocks or max_results)", None)
        if self.max_blocks is not None:
            whole(self.max_blocks, "max_blocks", minimum=1)
        if self.max_results is not None:
            whole(self.max_results, "max_results", minimum=0)

    def refuses(self, first: int, last: int, results: int | None) -> bool:
        """Whether a query of ``first``..``last`` (``results`` logs, when known) is refused."""
        if self.max_blocks is not None and last - first + 1 > self.max_blocks:
            return True
        return self.max_results is not None and results is not None and results > self.max_results

    def body(self, request_id: Any, first: int, last: int) -> dict[str, Any]:
        """The refusal as the provider sends it, suggesting the first half of the range."""
        allowed = self.max_blocks or self.max_results or 0
        middle = first + max(0, (last - first) // 2)
        return rpc_error_body(request_id, self.message, first=first, last=middle, allowed=allowed)


def rpc_error_body(
    request_id: Any, message: ProviderMessage, *, first: int = 0, last: int = 0, allowed: int = 0
) -> dict[str, Any]:
    """A JSON-RPC error answer carrying ``message`` (code -32000 where the source gives none).

    >>> rpc_error_body(7, RATE_LIMIT_ANSWERS[0])["error"]["code"]
    -32005
    """
    text, data = message.text(first=first, last=last, allowed=allowed)
    error: dict[str, Any] = {"code": -32000 if message.code is None else message.code}
    error["message"] = text
    if data is not None:
        error["data"] = dict(data) if isinstance(data, Mapping) else data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
