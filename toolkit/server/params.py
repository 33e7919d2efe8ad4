"""Reading requests and writing JSON: query strings, path segments, bodies, the API key.

Every check here runs before the engine is touched and raises :class:`ApiError` (400 naming the
parameter and the rule, or 401), so a bad request never changes state.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Final, TypeVar, cast

from pydantic import BaseModel
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from toolkit.codecs import caip2
from toolkit.resources import parse, parse_query
from toolkit.server.errors import ApiError
from toolkit.server.service import PROTOCOL, Service
from toolkit.world.evm.rpc.limits import MAX_JSON_DEPTH, depth_exceeds

__all__ = [
    "AUTH_HEADER",
    "MAX_BODY_BYTES",
    "check_protocol",
    "json_response",
    "path_chain",
    "read_body",
    "read_limited",
    "read_query",
    "require_key",
    "service_of",
]

ModelT = TypeVar("ModelT", bound=BaseModel)

AUTH_HEADER: Final = "X-Auth-Token"
#: Bodies larger than this are refused: a quote or a signature request is a few kilobytes.
MAX_BODY_BYTES: Final = 256 * 1024


def service_of(request: Request) -> Service:
    """The :class:`Service` of the app answering ``request``."""
    service: Service = request.app.state.service
    return service


def require_key(request: Request, service: Service) -> None:
    """Raise a 401 unless ``X-Auth-Token`` holds an accepted API key."""
    token = request.headers.get(AUTH_HEADER)
    if token is None:
        raise ApiError(401, f"{AUTH_HEADER}: is required")
    if not service.scenario.auth.accepts(token):
        raise ApiError(401, f"{AUTH_HEADER}: is not a recognized API key")


def check_protocol(protocol: str) -> None:
    """Raise a 400 unless ``protocol`` is the one protocol served (``partner-escrow``)."""
    if protocol != PROTOCOL:
        raise ApiError.bad("protocol", f"must be {PROTOCOL}")


def path_chain(text: str, field: str) -> int:
    """The chain id of a CAIP-2 path segment, or a 400 naming ``field``.

    >>> path_chain("eip155:8453", "srcChain")
    8453
    """
    try:
        return caip2.parse(text, field)
    except caip2.Caip2Error as exc:
        raise ApiError.bad(field, exc.rule) from None


def read_query(request: Request, model: type[ModelT]) -> ModelT:
    """Validate the query string into ``model``; a repeated parameter is a 400 too.

    Validation is a pure function of the raw query string, and clients repeat the same
    queries (sweeps, retries), so valid results are cached; models are immutable.
    """
    query: bytes = request.scope.get("query_string", b"")
    return cast(ModelT, _parsed_query(model, query))


@lru_cache(maxsize=4096)
def _parsed_query(model: type[BaseModel], query: bytes) -> BaseModel:
    params: dict[str, str] = {}
    for key, value in QueryParams(query).multi_items():
        if key in params:
            raise ApiError.bad(key, "must be given once")
        params[key] = value
    return parse_query(model, params)


async def read_limited(request: Request, limit: int, status: int = 400) -> bytes:
    """The whole body, refused (``status``, naming the limit) as soon as it is known to pass
    ``limit`` bytes: from its declared length, or while it streams in (never read whole first).
    The body is kept on the request, so the handler's own read gets it again."""
    too_large = ApiError(status, f"body: must be at most {limit} bytes")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise too_large
    body = bytes(raw)
    request._body = body  # Starlette's cache: request.stream()/body() replay it
    return body


async def read_body(request: Request, model: type[ModelT]) -> ModelT:
    """Read and validate a JSON body into ``model`` (400 naming the field on failure; bodies
    past ``MAX_BODY_BYTES`` or nested deeper than ``MAX_JSON_DEPTH`` are refused unread)."""
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";", 1)[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        raise ApiError.bad("Content-Type", f"must be application/json, not {media}")
    raw = await read_limited(request, MAX_BODY_BYTES)
    if not raw.strip():
        raise ApiError.bad("body", "is required (a JSON object)")
    if depth_exceeds(raw):
        raise ApiError.bad("body", f"JSON nesting deeper than {MAX_JSON_DEPTH} levels (the limit)")
    return parse(model, raw)


def json_response(payload: Any, status: int = 200) -> Response:
    """A compact JSON response (the wire form is built by the caller, so no re-validation)."""
    return Response(
        json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode(),
        status_code=status,
        media_type="application/json",
    )
