"""Engine errors. Each carries ``status``: the HTTP status the embedded service answers with."""

from __future__ import annotations

__all__ = [
    "CapacityExhausted",
    "EngineError",
    "EventsTruncated",
    "FillRejected",
    "InvalidArgument",
    "NoRoute",
    "UnknownReservation",
]


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""

    status: int = 500


class InvalidArgument(EngineError, ValueError):
    """A malformed argument; the message names the field and the rule. Nothing changed.

    >>> str(InvalidArgument("amount: must be a positive integer"))
    'amount: must be a positive integer'
    """

    status = 400


class NoRoute(EngineError):
    """No route is configured for the request, or its amount is outside the route's limits (400)."""

    status = 400


class CapacityExhausted(EngineError):
    """The route exists but no pool can serve the amount now (404: retry after a backoff)."""

    status = 404


class UnknownReservation(EngineError):
    """The key names no live reservation or outstanding amount (lapsed, consumed or unknown)."""

    status = 400


class FillRejected(EngineError):
    """The service will not fill this order (already filled, terms differ, price not covered)."""

    status = 409


class EventsTruncated(EngineError):
    """The requested events were dropped by the event-log retention limit."""

    status = 410
