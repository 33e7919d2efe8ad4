"""Requests as data: :class:`Operation`, the helpers the request builders share, and how an
error answer becomes a typed error.

The builders live in :mod:`toolkit.client.intents` (RFQ, transaction) and
:mod:`toolkit.client.liquidity` (discovery, borrow quote, authorization). Each validates its
arguments with the :mod:`toolkit.resources` models (bad input raises
:class:`~toolkit.resources.InvalidInput` naming the wire field, before anything is sent) and
returns an :class:`Operation`: method, path, query, body, whether it needs the API key, how it
may be retried, and how to read the answer. The sync and async clients only run them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from httpx_sse import ServerSentEvent

from toolkit.client.errors import (
    BadRequest,
    GarbledResponse,
    InvalidResponse,
    NotFound,
    ServerError,
    ServiceError,
    Unauthorized,
)
from toolkit.client.retry import retry_after_s
from toolkit.codecs import caip2
from toolkit.resources import ErrorBody, InvalidInput, parse
from toolkit.resources.retry import RetryClass

__all__ = [
    "DEFAULT_PROTOCOL",
    "Operation",
    "amount_text",
    "chain_text",
    "check_event_stream",
    "error_body",
    "error_for",
    "path_segment",
    "protocol_segment",
    "read_model",
]

T = TypeVar("T")
DEFAULT_PROTOCOL = "partner-escrow"
_SNIPPET = 200


@dataclass(frozen=True)
class Operation(Generic[T]):
    """One request and how to read its answer.

    ``parse`` reads a whole JSON body; ``parse_event`` (for endpoints that answer with an event
    stream) reads server-sent events until one returns a value. ``not_found`` is the error class
    of a 404 (capacity for the RFQ); ``read_error`` reads a refusal of a surface whose error body
    is not the interface's ``{error, debug?}`` (the swap API's), :func:`error_for` otherwise.
    """

    name: str
    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    json: Any = None
    auth: bool = True
    retry: RetryClass = "read"
    parse: Callable[[httpx.Response], T] | None = None
    parse_event: Callable[[ServerSentEvent], T | None] | None = None
    not_found: type[ServiceError] = NotFound
    read_error: Callable[[Operation[Any], httpx.Response, str | None], ServiceError] | None = None

    def refusal(self, response: httpx.Response, secret: str | None) -> ServiceError:
        """The typed error of a non-2xx ``response`` (its body read), ``secret`` scrubbed out."""
        return (self.read_error or error_for)(self, response, secret)

    def summary(self) -> str:
        """``METHOD /path`` for logs and messages (never headers, so never the key)."""
        return f"{self.method} {self.path}"


def chain_text(value: int | str, field_name: str) -> str:
    """A chain as CAIP-2 text, from a chain id or from CAIP-2 text (checked either way).

    >>> chain_text(8453, "srcChain"), chain_text("eip155:10", "dstChain")
    ('eip155:8453', 'eip155:10')
    """
    try:
        if isinstance(value, str):
            caip2.parse(value, field_name)
            return value
        return caip2.format(value, field_name)
    except caip2.Caip2Error as exc:
        raise InvalidInput(exc.field, exc.rule) from None


def amount_text(value: int | str, field_name: str) -> str:
    """An amount as wire text: an int or a digit string (the model checks the digits)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInput(field_name, "must be an integer or a string of digits")
    return str(value)


def path_segment(value: str) -> str:
    """``value`` escaped for a path segment (``:`` kept, as in CAIP-2)."""
    return quote(value, safe=":")


def protocol_segment(value: str) -> str:
    """A protocol name checked for use in a path (``partner-escrow``).

    >>> protocol_segment("partner-escrow")
    'partner-escrow'
    """
    if not isinstance(value, str) or not value.strip() or "/" in value:
        raise InvalidInput("protocol", "must be a non-empty protocol name without '/'")
    return value


def read_model(model_cls: type[T], response: httpx.Response, operation: str) -> T:
    """The answer's body as ``model_cls``; :class:`InvalidResponse` when it does not fit, and
    :class:`GarbledResponse` (a transport failure, retried) when it is not JSON at all.

    >>> from toolkit.resources import Health
    >>> try:
    ...     read_model(Health, httpx.Response(200, content=b'{"stat'), "health")
    ... except GarbledResponse as exc:
    ...     exc.status, exc.http_status
    (0, 200)
    """
    try:
        return parse(model_cls, response.content, root="body")  # type: ignore[type-var]
    except InvalidInput as exc:
        try:
            json.loads(response.content)
        except ValueError:
            raise GarbledResponse(operation, response.status_code) from None
        raise InvalidResponse(
            operation, response.status_code, detail=f"unexpected response body ({exc})"
        ) from None


def check_event_stream(operation: Operation[Any], response: httpx.Response) -> None:
    """Raise :class:`InvalidResponse` unless ``response`` is ``text/event-stream``.

    >>> op = Operation("sse", "GET", "/events")
    >>> check_event_stream(op, httpx.Response(200, text="hi"))
    Traceback (most recent call last):
    ...
    toolkit.client.errors.InvalidResponse: sse: HTTP 200: expected text/event-stream, got text/plain
    """
    kind = response.headers.get("content-type", "").partition(";")[0].strip()
    if kind != "text/event-stream":
        raise InvalidResponse(
            operation.name,
            response.status_code,
            detail=f"expected text/event-stream, got {kind or 'no content type'}",
        )


def error_body(content: bytes) -> ErrorBody | None:
    """The ``{error, debug?}`` body, or None when the content is not one."""
    try:
        return parse(ErrorBody, content)
    except InvalidInput:
        return None


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def error_for(
    operation: Operation[Any], response: httpx.Response, secret: str | None = None
) -> ServiceError:
    """The typed error for a non-2xx ``response`` (read first); ``secret`` is scrubbed out.

    >>> from toolkit.client.errors import NoCapacity
    >>> op = Operation("rfq", "GET", "/partner-intents/rfq", not_found=NoCapacity)
    >>> error_for(op, httpx.Response(404, json={"error": "no capacity"}))
    NoCapacity('rfq: HTTP 404: no capacity')
    """
    status = response.status_code
    body = error_body(response.content)
    detail: str | None = None
    if body is not None:
        body = ErrorBody(
            error=_scrub(body.error, secret),
            debug=None if body.debug is None else _scrub(body.debug, secret),
        )
    else:
        detail = _scrub(response.text[:_SNIPPET].strip(), secret) or None
    request_id = response.headers.get("request-id") or response.headers.get("x-request-id")
    if status == 400:
        kind: type[ServiceError] = BadRequest
    elif status == 401:
        kind = Unauthorized
    elif status == 404:
        kind = operation.not_found
    elif status >= 500:
        kind = ServerError
    else:
        kind = ServiceError
    return kind(
        operation.name,
        status,
        body,
        request_id=request_id,
        detail=detail,
        retry_after=retry_after_s(response.headers),
    )
