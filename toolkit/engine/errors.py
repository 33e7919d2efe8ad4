"""Engine errors. Each carries ``status``: the HTTP status the embedded service answers with,
and ``field`` (the argument it names, ``None`` when it names none) with its ``rule``, so the
service words its answer from fields rather than from the message.

Each joins its family of :mod:`toolkit.errors`: a bad argument or an unknown route is an
:class:`~toolkit.errors.InputError`; no capacity, a lapsed reservation, a refused fill and
events past retention are :class:`~toolkit.errors.CapacityError`.
"""

from __future__ import annotations

from toolkit.errors import CapacityError, InputError, ToolkitError

__all__ = [
    "CapacityExhausted",
    "EngineError",
    "EventsTruncated",
    "FillRejected",
    "InvalidArgument",
    "NoRoute",
    "UnknownReservation",
]


class EngineError(ToolkitError):
    """Base class of every error the engine raises on purpose.

    Raised as ``EngineError(field, rule)`` (the message is ``"<field>: <rule>"``) or as
    ``EngineError(message)`` when it names no argument.

    >>> err = NoRoute("amount", "5 is outside the route's limits [10, 100]")
    >>> str(err)
    "amount: 5 is outside the route's limits [10, 100]"
    >>> err.field, err.rule
    ('amount', "5 is outside the route's limits [10, 100]")
    >>> NoRoute("no route from chain 1 to chain 10 for USDC").field is None
    True
    """

    status: int = 500
    field: str | None = None
    rule: str | None = None

    def __init__(self, field_or_message: str, rule: str | None = None) -> None:
        if rule is None:
            super().__init__(field_or_message)
            return
        super().__init__(f"{field_or_message}: {rule}")
        self.field = field_or_message
        self.rule = rule


class InvalidArgument(EngineError, InputError):
    """A malformed argument; the message names the field and the rule. Nothing changed.

    >>> str(InvalidArgument("amount", "must be a positive integer"))
    'amount: must be a positive integer'
    """

    status = 400


class NoRoute(EngineError, InputError):
    """No route is configured for the request, or its amount is outside the route's limits (400)."""

    status = 400


class CapacityExhausted(EngineError, CapacityError):
    """The route exists but no pool can serve the amount now (404: retry after a backoff)."""

    status = 404


class UnknownReservation(EngineError, CapacityError):
    """The key names no live reservation or outstanding amount (lapsed, consumed or unknown)."""

    status = 400


class FillRejected(EngineError, CapacityError):
    """The service will not fill this order (already filled, terms differ, price not covered)."""

    status = 409


class EventsTruncated(EngineError, CapacityError):
    """The requested events were dropped by the event-log retention limit."""

    status = 410
