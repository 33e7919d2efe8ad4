"""The one exception tree of the toolkit: :class:`ToolkitError` and its five families.

Every exception the toolkit raises on purpose is a :class:`ToolkitError`, so an analyst can
write ``except ToolkitError`` around any call, and handle a family by its type rather than by
reading the message:

- :class:`InputError` (also a ``ValueError``): a bad argument, configuration, scenario or wire
  field; ``field``, ``rule`` and ``value`` say which and why. Nothing was changed.
- :class:`CapacityError`: the request is well formed but cannot be served now: no pool or
  route can absorb the amount, a 404 from the RFQ, a reservation lapsed or refused.
  ``resource`` names what ran out when it is known. Retrying later may succeed.
- :class:`ChainError`: a chain refused: a revert, a rejected transaction, a JSON-RPC error
  answer; ``chain_id``, ``code`` (JSON-RPC) and ``reason`` (revert reason) when known.
- :class:`StorageError`: the DuckDB store refused or failed.
- :class:`HttpError`: a service answered with an error status, or not at all; ``status``
  (0 when nothing answered) and ``request_id`` when known.

Each package keeps its own named errors (``ScenarioError``, ``NoCapacity``, ``Revert``, ...)
with their messages; they subclass the family they belong to. The fields are class-level
defaults (``None``) that an error sets when it knows them, so every error of a family answers
every field. This module imports nothing of the toolkit: it is the bottom of the layer contract.

>>> err = InputError("hours: must be positive", field="hours", rule="must be positive", value=-1)
>>> isinstance(err, ToolkitError), isinstance(err, ValueError), err.field, err.value
(True, True, 'hours', -1)
>>> try:
...     raise CapacityError("no pool can serve 5 USDC now", resource="8453:USDC")
... except ToolkitError as caught:
...     print(type(caught).__name__, caught.resource)
CapacityError 8453:USDC
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "CapacityError",
    "ChainError",
    "HttpError",
    "InputError",
    "StorageError",
    "ToolkitError",
]


class ToolkitError(Exception):
    """The root of every exception the toolkit raises on purpose.

    ``family`` names the branch of the tree (``"input"``, ``"capacity"``, ``"chain"``,
    ``"store"``, ``"service"``); the root itself is ``"toolkit"``.

    >>> ToolkitError("something").family
    'toolkit'
    """

    family: ClassVar[str] = "toolkit"


class InputError(ToolkitError, ValueError):
    """Bad input: an argument, a configuration key, a scenario entry or a wire field.

    ``field`` names it (a parameter, a TOML key path, a wire field path), ``rule`` the rule it
    breaks, ``value`` the value given (``None`` when not kept). A ``ValueError`` too, so code
    that catches ``ValueError`` keeps working.

    >>> InputError("amount: must be positive", field="amount", rule="must be positive").rule
    'must be positive'
    """

    family: ClassVar[str] = "input"
    field: str | None = None
    rule: str | None = None
    value: object = None

    def __init__(
        self,
        *args: object,
        field: str | None = None,
        rule: str | None = None,
        value: object = None,
    ) -> None:
        super().__init__(*args)
        if field is not None:
            self.field = field
        if rule is not None:
            self.rule = rule
        if value is not None:
            self.value = value


class CapacityError(ToolkitError):
    """Well-formed, but not servable now: no liquidity, a 404 from the RFQ, a refused or lapsed
    reservation. ``resource`` names the pool, route or reservation when known.

    >>> CapacityError("no capacity").resource is None
    True
    """

    family: ClassVar[str] = "capacity"
    resource: str | None = None

    def __init__(self, *args: object, resource: str | None = None) -> None:
        super().__init__(*args)
        if resource is not None:
            self.resource = resource


class ChainError(ToolkitError):
    """A chain refused: a revert, a rejected transaction, a JSON-RPC error answer.

    ``chain_id`` is the chain when known, ``code`` the JSON-RPC error code, ``reason`` the
    revert reason string.

    >>> ChainError("execution reverted: no", chain_id=8453, code=3, reason="no").code
    3
    """

    family: ClassVar[str] = "chain"
    chain_id: int | None = None
    code: int | None = None
    reason: str | None = None

    def __init__(
        self,
        *args: object,
        chain_id: int | None = None,
        code: int | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(*args)
        if chain_id is not None:
            self.chain_id = chain_id
        if code is not None:
            self.code = code
        if reason is not None:
            self.reason = reason


class StorageError(ToolkitError):
    """The store refused or failed; ``table`` names the table when known.

    >>> StorageError("cannot open", table="runs").table
    'runs'
    """

    family: ClassVar[str] = "store"
    table: str | None = None

    def __init__(self, *args: object, table: str | None = None) -> None:
        super().__init__(*args)
        if table is not None:
            self.table = table


class HttpError(ToolkitError):
    """A service answered with an error status, or not at all.

    ``status`` is the HTTP status (``0``: no answer arrived), ``request_id`` the service's
    request id when it sent one.

    >>> HttpError("rfq: HTTP 503", status=503).status
    503
    """

    family: ClassVar[str] = "service"
    status: int = 0
    request_id: str | None = None

    def __init__(
        self, *args: object, status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(*args)
        if status is not None:
            self.status = status
        if request_id is not None:
            self.request_id = request_id
