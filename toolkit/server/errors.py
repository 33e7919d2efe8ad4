"""Error bodies of the embedded service and the handlers that produce them.

Every failure leaves as the main-surface body ``{error, debug?}``: client mistakes are 400 with
``"<field>: <rule>"``, missing keys 401, capacity and unknown things 404. FastAPI's own 422
bodies and Starlette's plain-text 404/405 are replaced so that no response of this app has
another shape. A bug is a 500 whose body names nothing internal (no traceback, no secret).
"""

from __future__ import annotations

import json
import logging
from typing import Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from toolkit.codecs.errors import InvalidValue
from toolkit.errors import HttpError
from toolkit.resources import InvalidInput

__all__ = ["ApiError", "error_response", "install_error_handlers"]

_log: Final = logging.getLogger("toolkit.server")

_STATUS_TEXT: Final = {
    400: "bad request",
    401: "unauthorized",
    403: "forbidden",
    404: "not found",
    405: "method not allowed",
    408: "request timeout",
    413: "request entity too large",
    415: "unsupported media type",
    500: "internal server error",
}


class ApiError(HttpError):
    """An answer other than 200: status code, the ``error`` text and optional ``debug`` text.

    >>> err = ApiError(404, "no capacity", debug="pool 8453:USDC:usdc")
    >>> (err.status, err.error)
    (404, 'no capacity')
    """

    def __init__(self, status: int, error: str, debug: str | None = None) -> None:
        super().__init__(f"{status}: {error}")
        self.status = status
        self.error = error
        self.debug = debug

    @classmethod
    def bad(cls, field: str, rule: str) -> ApiError:
        """A 400 naming the field and the rule it breaks.

        >>> ApiError.bad("amount", "must be a string of digits").error
        'amount: must be a string of digits'
        """
        return cls(400, f"{field}: {rule}")


def error_response(status: int, error: str, debug: str | None = None) -> Response:
    """A JSON response with the main-surface error body.

    >>> error_response(401, "X-Auth-Token: is required").body
    b'{"error":"X-Auth-Token: is required"}'
    """
    body: dict[str, str] = {"error": error}
    if debug is not None:
        body["debug"] = debug
    return Response(
        json.dumps(body, separators=(",", ":")).encode(),
        status_code=status,
        media_type="application/json",
    )


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.error, exc.debug)


async def _invalid_input(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, InvalidInput | InvalidValue)
    return error_response(400, f"{exc.field}: {exc.rule}")


async def _request_validation(request: Request, exc: Exception) -> Response:
    # Routes validate with toolkit.resources, so this only fires for a parameter FastAPI itself
    # declares; it still answers in the spec's shape and names the parameter.
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if not errors:
        return error_response(400, "request: is invalid")
    first = errors[0]
    loc = [str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body")]
    field = ".".join(loc) or "request"
    rule = "is required" if first.get("type") == "missing" else str(first.get("msg", "is invalid"))
    return error_response(400, f"{field}: {rule}")


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    if status == 404:
        return error_response(404, f"{request.url.path}: no such endpoint")
    if status == 405:
        allowed = exc.headers.get("Allow") if exc.headers else None
        response = error_response(405, f"{request.method}: method not allowed on this endpoint")
        if allowed:
            response.headers["Allow"] = allowed
        return response
    text = exc.detail if isinstance(exc.detail, str) else _STATUS_TEXT.get(status, "error")
    return error_response(status, text)


async def _unexpected(request: Request, exc: Exception) -> Response:
    # Logged by type only: exception text may carry request data, never written to the log.
    _log.error("unexpected %s on %s %s", type(exc).__name__, request.method, request.url.path)
    return error_response(500, "internal server error")


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every failure into ``{error, debug?}``."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(InvalidInput, _invalid_input)
    app.add_exception_handler(InvalidValue, _invalid_input)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    app.add_exception_handler(Exception, _unexpected)
