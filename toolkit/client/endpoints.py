"""Client methods defined once for the sync and the async clients.

A client method is a request builder: it checks its arguments and returns the
:class:`~toolkit.client.operations.Operation` to send (or a :class:`Call`: the operation and a
per-call ``on_attempt`` hook). Decorated with :class:`endpoint`, the one definition becomes a
method of every client class that inherits it: on a :class:`SyncCaller` (``ServiceClient``,
``SwapClient``, ``CreditClient``) it runs the operation and returns the value, on an
:class:`AsyncCaller` (their async twins) it returns the coroutine to await. The callers only
send (:mod:`toolkit.client.runner`); nothing about an endpoint is written twice.

>>> import httpx
>>> from toolkit.client.operations import Operation
>>> class Pinger:
...     @endpoint
...     def ping(self, n: int) -> Operation[int]:
...         '''``GET /ping``.'''
...         return Operation("ping", "GET", "/ping", params={"n": str(n)},
...                          parse=lambda r: r.json()["n"])
>>> class Sync(Pinger, SyncCaller):
...     def call(self, op, *, on_attempt=None):
...         return op.parse(httpx.Response(200, json={"n": int(op.params["n"])}))
>>> Sync().ping(3), Sync.ping.__doc__
(3, '``GET /ping``.')
"""

from __future__ import annotations

import functools
import inspect
from abc import abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from toolkit.client.operations import Operation
from toolkit.client.retry import AttemptHook

__all__ = ["AsyncCaller", "Call", "SyncCaller", "endpoint"]

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class Call(Generic[T]):
    """An operation and the hook its attempts also go to (the method's ``on_attempt``)."""

    operation: Operation[T]
    on_attempt: AttemptHook | None = None


class SyncCaller:
    """A client whose :meth:`call` runs an operation and returns its value."""

    @abstractmethod
    def call(self, op: Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op``; its value, or a typed error."""


class AsyncCaller:
    """A client whose :meth:`call` is a coroutine."""

    @abstractmethod
    async def call(self, op: Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op``; its value, or a typed error."""


class endpoint(Generic[P, T]):
    """A client method defined once by its request builder (module docstring)."""

    def __init__(self, build: Callable[Concatenate[Any, P], Operation[T] | Call[T]]) -> None:
        self.build = build
        self._signature: inspect.Signature | None = None
        # Name, docstring and module: help() shows the builder's, and doctests find it.
        functools.update_wrapper(cast(Any, self), build)

    @overload
    def __get__(self, obj: None, owner: type) -> endpoint[P, T]: ...

    @overload
    def __get__(self, obj: SyncCaller, owner: type) -> Callable[P, T]: ...

    @overload
    def __get__(self, obj: AsyncCaller, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build = self.build

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            request = build(obj, *args, **kwargs)
            if isinstance(request, Call):
                return obj.call(request.operation, on_attempt=request.on_attempt)
            return obj.call(request)

        method.__signature__ = self._bound_signature()  # type: ignore[attr-defined]
        return method

    def __call__(self, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``Client.method(client, ...)``, as a plain method can be called."""
        return self.__get__(obj, type(obj))(*args, **kwargs)

    def _bound_signature(self) -> inspect.Signature:
        # The builder's signature without ``self``: what ``help(client.rfq)`` shows.
        if self._signature is None:
            whole = inspect.signature(self.build)
            self._signature = whole.replace(
                parameters=list(whole.parameters.values())[1:],
                return_annotation=inspect.Signature.empty,  # the builder returns the request
            )
        return self._signature
