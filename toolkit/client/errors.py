"""Typed errors of the service clients: one class per answer a caller handles differently.

Every error carries the HTTP ``status`` (``0`` when no answer arrived), the parsed error
``body`` (``{error, debug?}``) when the service sent one, and the ``request_id`` header when
present. Messages name the operation and the service's own words; they never carry the API key
(the clients scrub it from anything the service echoes back).
"""

from __future__ import annotations

import re
from typing import Final

from toolkit.errors import CapacityError, HttpError
from toolkit.resources import ErrorBody

__all__ = [
    "BadRequest",
    "GarbledResponse",
    "InvalidResponse",
    "NoCapacity",
    "NotFound",
    "ServerError",
    "ServiceError",
    "TransportError",
    "Unauthorized",
]

#: A wire field path as the service names it: ``amount``, ``preview.inputs[0].amount``.
_FIELD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_]*)*")


class ServiceError(HttpError):
    """A request the service refused, failed, or never answered.

    >>> err = ServiceError("rfq", 418, ErrorBody(error="teapot"))
    >>> str(err), err.status
    ('rfq: HTTP 418: teapot', 418)
    """

    def __init__(
        self,
        operation: str,
        status: int,
        body: ErrorBody | None = None,
        *,
        request_id: str | None = None,
        detail: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.operation = operation
        self.retry_after = retry_after
        self.status = status
        self.body = body
        self.request_id = request_id
        words = detail if detail is not None else (body.error if body is not None else "")
        head = f"{operation}: HTTP {status}" if status else f"{operation}: no response"
        message = f"{head}: {words}" if words else head
        if request_id:
            message += f" (request id {request_id})"
        super().__init__(message)


class BadRequest(ServiceError):
    """400: the request is malformed or the route is not onboarded; never retried.

    ``field`` is the wire field the service names (the interface words a 400 as
    ``"<field>: <rule>"``), read once here so callers branch on it, not on the message;
    ``None`` when the body names none.

    >>> BadRequest("rfq", 400, ErrorBody(error="amount: 5 is below the minimum")).field
    'amount'
    >>> BadRequest("rfq", 400, ErrorBody(error="no route for USDC")).field is None
    True
    """

    @property
    def field(self) -> str | None:
        """The wire field the 400 names, or ``None``."""
        if self.body is None:
            return None
        head, sep, _ = self.body.error.partition(": ")
        return head if sep and _FIELD.fullmatch(head) else None


class Unauthorized(ServiceError):
    """401: the API key is missing or not recognised; never retried."""


class NotFound(ServiceError):
    """404 outside the RFQ: the route or resource is not configured."""


class NoCapacity(NotFound, CapacityError):
    """404 from the RFQ: the route exists but no pool can serve it now (a capacity answer).

    Reservations lapse after 15 s, so the client retries it after a backoff within its budget.
    """


class ServerError(ServiceError):
    """5xx: the service failed; retried with capped exponential backoff for safe requests."""


class InvalidResponse(ServiceError):
    """The service answered, but not with what the interface promises (status or body)."""


class TransportError(ServiceError):
    """No answer: connection refused or dropped, or a timeout (``status`` is 0)."""

    def __init__(self, operation: str, detail: str) -> None:
        super().__init__(operation, 0, None, detail=detail)


class GarbledResponse(TransportError):
    """An answer whose body is not JSON at all: cut short or corrupted on the way (a proxy, a
    dropped connection under a ``Content-Length`` it did not check). Nothing usable arrived, so
    it is a transport failure (``status`` 0), retried like one; a JSON body of the wrong shape
    is :class:`InvalidResponse` instead.

    >>> GarbledResponse("rfq", 200).status
    0
    """

    def __init__(self, operation: str, http_status: int) -> None:
        super().__init__(
            operation, f"HTTP {http_status} answer is not JSON (cut short or corrupted)"
        )
        self.http_status = http_status
