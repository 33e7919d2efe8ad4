"""The swap API: ``GET {swap_url}/{network}/v1/route``, served at ``{base_url}/swap``.

Shapes follow the vendor's swap OpenAPI document (``swap-openapi.yaml``): a 200 is a
``RouteV1Response``, every error is ``{code, requestId, error}`` with ``code`` the HTTP status,
and every answer carries a ``Request-ID`` header equal to the body's ``requestId`` (16 random
bytes as ``0x`` hex). Choices where the document is silent:

- Authentication is HTTP Basic: any non-empty username, the password an API key of the scenario
  (``demo-key`` by default). It is checked first: 401 before any parameter is read.
- 400 names the parameter and the rule: ``network`` (``mainnet`` or ``base``, and a chain the
  scenario has), ``amountIn`` (digits, positive, below ``2**255``), ``tokenIn``/``tokenOut``
  (addresses, distinct; the native coin trades as WETH so native and WETH are the same token),
  ``slippageBps`` (integer 0 to 10000, default 50), ``timeout`` (integer milliseconds >= 1).
- 404 when no path of up to 3 pools connects the tokens (an unknown token included) or the
  pools cannot absorb the amount (a V3 range runs dry before the input is spent, or the best
  route returns less than 1 % of the input's value at pool mid prices).
- ``minAmountOut = amountOut × (10000 − slippageBps) / 10000`` rounded down, ``gasLimit =
  gasUsed × 1.3`` rounded down; the route itself is :func:`toolkit.world.swap.find_route`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import secrets
from typing import Any, Final

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from toolkit.arguments import ArgumentError
from toolkit.resources.error_bodies import SwapErrorBody
from toolkit.resources.swap import RouteQuery, RouteResult
from toolkit.server.docs import operation
from toolkit.server.params import json_response, service_of
from toolkit.server.routing import surface_router, unlocked
from toolkit.world.swap import NoSwapRoute, find_route

__all__ = ["NETWORKS", "router"]

router = surface_router(tags=["swap"])
_log = logging.getLogger(__name__)

#: The swap API's networks and their chain ids.
NETWORKS: Final = {"mainnet": 1, "base": 8453}
_DIGITS: Final = re.compile(r"^[0-9]+$")
_INTEGER: Final = re.compile(r"^-?[0-9]+$")
_ADDRESS: Final = re.compile(r"^0x[a-fA-F0-9]{40}$")
_INT32_MAX: Final = 2**31 - 1


class _Answer(Exception):
    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error


def _bad(name: str, rule: str, value: str | None) -> _Answer:
    shown = "missing" if value is None else repr(value)
    return _Answer(400, f"{name}: must be {rule}, got {shown}")


def _error(status: int, request_id: str, error: str) -> Response:
    response = json_response({"code": status, "requestId": request_id, "error": error}, status)
    response.headers["Request-ID"] = request_id
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Basic realm="swap"'
    return response


def _authenticate(request: Request, accepts: object) -> None:
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        raise _Answer(401, "authorization: HTTP Basic credentials are required")
    try:
        user, sep, password = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise _Answer(401, "authorization: malformed HTTP Basic credentials") from None
    if not sep or not user or not password or not callable(accepts) or not accepts(password):
        raise _Answer(401, "authorization: unknown API key")


def _address(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if value is None or not _ADDRESS.match(value):
        raise _bad(name, "an address (0x and 40 hex digits)", value)
    return value.lower()


def _integer(request: Request, name: str, low: int, high: int, default: int | None) -> int | None:
    value = request.query_params.get(name)
    if value is None:
        return default
    if not _INTEGER.match(value) or not low <= int(value) <= high:
        raise _bad(name, f"an integer in [{low}, {high}]", value)
    return int(value)


@router.get(
    "/swap/{network}/v1/route",
    summary="Swap route on the simulated chains' AMM pools (swap API)",
    description=(
        "The split route for `amountIn` of `tokenIn` into `tokenOut` on `network` (`mainnet` "
        "or `base`) and its Universal Router calldata. HTTP Basic: any username, an API key "
        "as password. Errors are `{code, requestId, error}`: 400 names the parameter, 401, "
        "404 when no path connects the tokens or the pools cannot absorb the amount, 500."
    ),
    responses={
        200: {
            "description": "The route",
            "content": {"application/json": {"schema": RouteResult.model_json_schema()}},
        },
        **{
            code: {
                "description": text,
                "content": {"application/json": {"schema": SwapErrorBody.model_json_schema()}},
            }
            for code, text in (
                (400, "Bad parameters"),
                (401, "Missing or unknown credentials"),
                (404, "No viable route"),
            )
        },
    },
    openapi_extra={
        **operation(path=["network"], query=RouteQuery),
        "security": [{"SwapBasic": []}],
    },
)
@unlocked
async def route(request: Request) -> Response:
    request_id = "0x" + secrets.token_hex(16)
    try:
        service = service_of(request)
        _authenticate(request, service.scenario.auth.accepts)
        network = request.path_params["network"]
        chain_id = NETWORKS.get(network)
        if chain_id is None or chain_id not in service.chains.ledgers:
            served = [n for n, c in NETWORKS.items() if c in service.chains.ledgers]
            raise _bad("network", f"one of {', '.join(served) or 'no network'}", network)
        amount_text = request.query_params.get("amountIn")
        if amount_text is None or not _DIGITS.match(amount_text) or len(amount_text) > 80:
            raise _bad("amountIn", "a decimal integer (digits only)", amount_text)
        amount_in = int(amount_text)
        token_in = _address(request, "tokenIn")
        token_out = _address(request, "tokenOut")
        slippage = _integer(request, "slippageBps", 0, 10_000, 50)
        timeout_ms = _integer(request, "timeout", 1, _INT32_MAX, None)
        assert slippage is not None

        def search() -> Any:
            # tens of milliseconds of path search: in a worker thread, holding the state's lock
            with service.lock:
                return find_route(
                    service.chains.ledger(chain_id),
                    token_in,
                    token_out,
                    amount_in,
                    slippage_bps=slippage,
                    timeout_s=None if timeout_ms is None else timeout_ms / 1000,
                    now=service.now(),
                )

        try:
            found = await anyio.to_thread.run_sync(search)
        except ArgumentError as exc:
            raise _bad(exc.name, exc.rule, str(exc.value)) from None
        except NoSwapRoute as exc:
            raise _Answer(404, str(exc)) from None
    except _Answer as answer:
        return _error(answer.status, request_id, answer.error)
    except Exception:
        _log.exception("swap route %s failed", request_id)
        return _error(500, request_id, "internal error")
    body = {
        "requestId": request_id,
        "amountOut": str(found.amount_out),
        "minAmountOut": str(found.min_amount_out),
        "target": found.target,
        "callData": found.call_data,
        "gasUsed": found.gas_used,
        "gasLimit": found.gas_limit,
    }
    response = json_response(body)
    response.headers["Request-ID"] = request_id
    return response
