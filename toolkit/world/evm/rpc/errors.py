"""JSON-RPC errors: the codes, :class:`RpcError`, and the errors the methods share (a bad
parameter, a revert)."""

from __future__ import annotations

from typing import Any, Final

import eth_abi

from toolkit.errors import ChainError
from toolkit.world.evm.contracts import ERROR_SELECTOR, Revert

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
SERVER_ERROR: Final = -32000
EXECUTION_REVERTED: Final = 3


class RpcError(ChainError):
    """A JSON-RPC error: code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid(name: str, rule: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"invalid params: {name}: {rule}")


def revert_error(exc: Revert) -> RpcError:
    message = "execution reverted"
    if exc.data[:4] == ERROR_SELECTOR:
        try:
            (reason,) = eth_abi.decode(["string"], exc.data[4:])
            message = f"execution reverted: {reason}"
        except Exception:
            pass
    return RpcError(EXECUTION_REVERTED, message, "0x" + exc.data.hex())
