"""The one kind of route the embedded service declares: a FastAPI route that serves directly.

Each surface declares its operations once, on a :func:`surface_router` (a FastAPI
``APIRouter``): path, summary, response model and the parameters :mod:`toolkit.server.docs`
documents. ``create_app`` puts those same routes in the app's route table, so they serve the
requests and FastAPI documents them: the served OpenAPI document is the routes that serve, and
a method it does not list is a 405 naming the ones it does.

The handlers take only the request and validate it themselves with :mod:`toolkit.resources`
(one definition of each parameter, the spec's 400 wording), so FastAPI's per-request
dependency solving (which among other things parses every query string a second time) would
be pure overhead: it was half the app's time on an RFQ. :class:`ServiceRoute` therefore hands
FastAPI the handler itself as the route's request handler, the extension point FastAPI offers
for custom request handling (``APIRoute.get_route_handler``).

Each handler runs holding the service's lock, its body read first (a slow client never holds
it), except those marked :func:`unlocked`: ``/health``, ``/rpc`` (which locks per method in its
worker thread) and the swap route (which searches in a worker thread holding the lock).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import request_response

from toolkit.server.params import MAX_BODY_BYTES, read_limited, service_of

__all__ = ["Endpoint", "ServiceRoute", "surface_router", "unlocked"]

Endpoint = Callable[[Request], Awaitable[Response]]
EndpointT = TypeVar("EndpointT", bound=Endpoint)

_UNLOCKED: Final = "_toolkit_unlocked"
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})


def unlocked(endpoint: EndpointT) -> EndpointT:
    """Mark ``endpoint`` as taking the service's lock itself (or never needing it).

    Place it under the route decorator, so the route sees the mark when it is declared.
    """
    setattr(endpoint, _UNLOCKED, True)
    return endpoint


class ServiceRoute(APIRoute):
    """A FastAPI route whose request handler is its endpoint (module docstring)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        # Starlette's request wrapper rather than FastAPI's, which opens two exit stacks per
        # request for dependencies with ``yield``: these routes have no dependencies.
        self.app = request_response(self.get_route_handler())

    def get_route_handler(self) -> Callable[[Request], Any]:
        endpoint: Endpoint = self.endpoint
        if getattr(endpoint, _UNLOCKED, False):
            return endpoint
        return _locked(endpoint)


def surface_router(**kwargs: Any) -> APIRouter:
    """An ``APIRouter`` of :class:`ServiceRoute` routes (``kwargs`` as ``APIRouter`` takes)."""
    return APIRouter(route_class=ServiceRoute, **kwargs)


def _locked(endpoint: Endpoint) -> Endpoint:
    async def locked(request: Request) -> Response:
        if request.method in _BODY_METHODS:
            await read_limited(request, MAX_BODY_BYTES)
        async with service_of(request).lock.hold():
            return await endpoint(request)

    return locked
