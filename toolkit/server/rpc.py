"""``POST /rpc/{chainId}``: standard Ethereum JSON-RPC 2.0 for each simulated chain.

Not part of the service interface (OpenAPI tag ``simulation``): the chains of the scenario as
geth-like nodes, so that web3.py, ethers or viem can read balances, send signed transactions
and read receipts and logs. The body is a JSON-RPC request or a batch; the answer is always
HTTP 200 with the JSON-RPC response (errors inside it), or 204 when the body held only
notifications. The dispatcher is :class:`toolkit.world.evm.Rpc`; it reads the service's
clock, and its development namespace (``evm_increaseTime``, ``evm_snapshot``, ...) moves the
service's clock offset. A chain id the scenario does not have is a 404; a body past
``MAX_RPC_BODY_BYTES`` is a 413 (with a JSON-RPC error), refused as it streams in.

The dispatcher runs in a worker thread (the state's lock taken per method, see
:mod:`toolkit.server.locking`); the bounds on one request's work are
:mod:`toolkit.world.evm.rpc.limits`.
"""

from __future__ import annotations

import json
import re
from typing import Final

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from toolkit.server.errors import ApiError
from toolkit.server.params import read_limited, service_of
from toolkit.server.routing import surface_router, unlocked
from toolkit.world.evm.rpc import INVALID_REQUEST

__all__ = ["MAX_RPC_BODY_BYTES", "router"]

router = surface_router(tags=["simulation"])

#: Methods whose single call costs well under a millisecond (reads of one value, a contract
#: call, a transaction's submission or receipt): answered on the event loop when nothing holds
#: the state. Everything else (batches, logs, filters, fee history, blocks, the development
#: namespace) runs in a worker thread.
CHEAP_METHODS: Final = frozenset(
    {
        "eth_blockNumber",
        "eth_chainId",
        "net_version",
        "eth_getBalance",
        "eth_getTransactionCount",
        "eth_getCode",
        "eth_call",
        "eth_estimateGas",
        "eth_gasPrice",
        "eth_maxPriorityFeePerGas",
        "eth_getTransactionReceipt",
        "eth_getTransactionByHash",
        "eth_sendRawTransaction",
    }
)
_INLINE_BYTES: Final = 4096
_METHOD: Final = re.compile(rb'"method"\s*:\s*"([A-Za-z0-9_]{1,64})"')


def _cheap(body: bytes) -> bool:
    """A single request (not a batch) naming one cheap method, in a small body."""
    if len(body) > _INLINE_BYTES or body.lstrip()[:1] != b"{":
        return False
    names = _METHOD.findall(body)
    return len(names) == 1 and names[0].decode() in CHEAP_METHODS and body.count(b'"method"') == 1


#: Bodies larger than this are refused while they stream in (a batch of a thousand calls
#: fits); geth's own cap on a request body is 5 MB.
MAX_RPC_BODY_BYTES = 4 * 1024 * 1024


_REQUEST = {
    "type": "object",
    "required": ["jsonrpc", "method"],
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"type": ["string", "integer", "null"]},
        "method": {"type": "string"},
        "params": {"type": ["array", "null"]},
    },
}
_RESPONSE = {
    "type": "object",
    "required": ["jsonrpc", "id"],
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"type": ["string", "integer", "null"]},
        "result": {},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
        },
    },
}


@router.post(
    "/rpc/{chainId}",
    summary="Ethereum JSON-RPC 2.0 of a simulated chain (simulation)",
    responses={
        200: {
            "description": "A JSON-RPC response or batch of responses (errors inside)",
            "content": {
                "application/json": {
                    "schema": {"oneOf": [_RESPONSE, {"type": "array", "items": _RESPONSE}]}
                }
            },
        },
        204: {"description": "The body held only notifications"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "oneOf": [
                            _REQUEST,
                            {"type": "array", "items": _REQUEST, "minItems": 1, "maxItems": 1000},
                        ]
                    }
                }
            },
        }
    },
)
@unlocked
async def rpc(request: Request) -> Response:
    service = service_of(request)
    text = request.path_params["chainId"]
    chain_id = int(text) if text.isascii() and text.isdigit() and len(text) < 20 else None
    if chain_id is None or chain_id not in service.chains.ledgers:
        raise ApiError(404, f"chainId: the scenario has no chain {text}")
    try:
        body = await read_limited(request, MAX_RPC_BODY_BYTES, status=413)
    except ApiError as exc:
        if exc.status != 413:
            raise
        # geth's answer to an oversized body: HTTP 413, here with a JSON-RPC error inside.
        error = {"code": INVALID_REQUEST, "message": f"request too large: {exc.error}"}
        payload = {"jsonrpc": "2.0", "id": None, "error": error}
        # Connection: close, so that the rest of the body is never read.
        return Response(
            json.dumps(payload),
            status_code=413,
            media_type="application/json",
            headers={"Connection": "close"},
        )
    if _cheap(body) and service.lock.try_acquire():
        # A single cheap call with the state free: answered on the loop (a thread hop would
        # cost more than the call).
        try:
            answer = service.rpc.handle_bytes(chain_id, body, held=True)
        finally:
            service.lock.release()
    else:
        # Off the event loop: a heavy batch keeps a worker thread busy, never /health or a quote.
        answer = await anyio.to_thread.run_sync(service.rpc.handle_bytes, chain_id, body)
    if answer is None:
        return Response(status_code=204)
    service.notify()
    return Response(answer, media_type="application/json")
