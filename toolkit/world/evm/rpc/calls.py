"""Calls against the latest state: ``eth_call`` and ``eth_estimateGas`` (a revert is error 3
with its data)."""

from __future__ import annotations

from typing import Any

from toolkit.world.evm.admission import Rejected
from toolkit.world.evm.contracts import Revert
from toolkit.world.evm.rpc.errors import SERVER_ERROR, RpcError, revert_error
from toolkit.world.evm.rpc.params import arg, block_number, call_object, to_hex
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


def _simulate(c: Call, params: list[Any]) -> tuple[bytes, int, int | None]:
    sender, to, data, value, limit = call_object(arg(params, 0, "transaction"), "transaction")
    block_number(c, arg(params, 1, "block", "latest"), "block", state=True)
    try:
        result = c.ledger.call(sender, to, data, value, c.now)
    except Revert as exc:
        raise revert_error(exc) from None
    except Rejected as exc:
        raise RpcError(SERVER_ERROR, str(exc)) from None
    return result.output, result.gas, limit


@_method("eth_call")
def _eth_call(rpc: Host, c: Call, params: list[Any]) -> Any:
    output, _, _ = _simulate(c, params)
    return "0x" + output.hex()


@_method("eth_estimateGas")
def _estimate(rpc: Host, c: Call, params: list[Any]) -> Any:
    _, needed, limit = _simulate(c, params)
    if limit is not None and limit < needed:
        raise RpcError(SERVER_ERROR, f"gas required exceeds allowance ({limit})")
    return to_hex(needed)
