"""Decoding a request's params: quantities, data, addresses, hashes, block tags and call
objects; each refusal is -32602 naming the parameter."""

from __future__ import annotations

import re
from typing import Any, Final

from toolkit.world.evm.contracts import ZERO
from toolkit.world.evm.rpc.errors import INVALID_PARAMS, SERVER_ERROR, RpcError, invalid
from toolkit.world.evm.rpc.limits import UINT64_MAX, UINT256_MAX
from toolkit.world.evm.rpc.registry import Call

QUANTITY = re.compile(r"^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$")
DATA = re.compile(r"^0x(?:[0-9a-fA-F]{2})*$")
ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
PENDING: Final = -1


def quantity(value: Any, name: str, maximum: int = UINT256_MAX) -> int:
    """A hex quantity up to ``maximum`` (its type's range: 2**256 - 1 for values and balances,
    2**64 - 1 for nonces, gas, block numbers and timestamps)."""
    if isinstance(value, str) and len(value) <= 66 and QUANTITY.match(value):
        number = int(value, 16)
        if number <= maximum:
            return number
    elif not isinstance(value, str) or not QUANTITY.match(value):
        raise invalid(name, "must be a hex quantity (0x-prefixed, no leading zeros)")
    raise invalid(name, f"must be at most {_bound(maximum)}")


def integer(value: Any, name: str, maximum: int = UINT64_MAX) -> int:
    """A JSON number or a hex quantity (the development namespace takes both), 0..maximum."""
    if type(value) is int:
        if 0 <= value <= maximum:
            return value
        raise invalid(name, f"must be between 0 and {_bound(maximum)}")
    return quantity(value, name, maximum)


def _bound(maximum: int) -> str:
    if maximum == UINT64_MAX:
        return "2**64 - 1"
    if maximum == UINT256_MAX:
        return "2**256 - 1"
    return str(maximum)


def address(value: Any, name: str) -> str:
    if isinstance(value, str) and ADDRESS.match(value):
        return value.lower()
    raise invalid(name, "must be a 0x-prefixed 20-byte hex address")


def data(value: Any, name: str) -> bytes:
    if isinstance(value, str) and DATA.match(value):
        return bytes.fromhex(value[2:])
    raise invalid(name, "must be 0x-prefixed hex data of whole bytes")


def hash32(value: Any, name: str) -> str:
    if isinstance(value, str) and HASH.match(value):
        return value.lower()
    raise invalid(name, "must be a 0x-prefixed 32-byte hex hash")


def boolean(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise invalid(name, "must be true or false")


def to_hex(value: int) -> str:
    return hex(value)


def request_params(request: dict[str, Any]) -> list[Any]:
    params = request.get("params", [])
    if params is None:
        return []
    if not isinstance(params, list):
        raise RpcError(INVALID_PARAMS, "invalid params: params: must be an array")
    return params


def arg(params: list[Any], index: int, name: str, default: Any = ...) -> Any:
    if index < len(params) and params[index] is not None:
        return params[index]
    if default is ...:
        raise invalid(name, "is required")
    return default


def block_number(c: Call, value: Any, name: str, *, state: bool = False) -> int:
    """A block tag or number; ``PENDING`` for pending. With ``state`` only the latest
    state (or pending) is accepted."""
    latest = c.ledger.block_number(c.now)
    if value in ("latest", "safe", "finalized"):
        return latest
    if value == "pending":
        return PENDING
    if value == "earliest":
        number = 0
    elif isinstance(value, dict):
        if "blockNumber" in value:
            number = quantity(value["blockNumber"], f"{name}.blockNumber", UINT64_MAX)
        elif "blockHash" in value:
            found = c.ledger.number_of(hash32(value["blockHash"], f"{name}.blockHash"), c.now)
            if found is None:
                raise RpcError(SERVER_ERROR, "header for hash not found")
            number = found
        else:
            raise invalid(name, "must hold blockNumber or blockHash")
    elif isinstance(value, str) and QUANTITY.match(value):
        number = quantity(value, name, UINT64_MAX)
    else:
        raise invalid(name, "must be a block number or latest, earliest, pending, safe, finalized")
    if state:
        if number > latest:
            raise RpcError(SERVER_ERROR, "header not found")
        if number < latest:
            raise RpcError(
                SERVER_ERROR,
                f"historical state is not available: block {number} "
                f"(the simulated chain keeps the latest state only, block {latest})",
            )
    return number


def call_object(value: Any, name: str) -> tuple[str, str | None, bytes, int, int | None]:
    if not isinstance(value, dict):
        raise invalid(name, "must be a transaction call object")
    sender = address(value.get("from", ZERO), f"{name}.from")
    to = None if value.get("to") is None else address(value["to"], f"{name}.to")
    raw = value.get("input", value.get("data"))
    payload = b"" if raw is None else data(raw, f"{name}.input")
    amount = 0 if value.get("value") is None else quantity(value["value"], f"{name}.value")
    limit = None if value.get("gas") is None else quantity(value["gas"], f"{name}.gas", UINT64_MAX)
    return sender, to, payload, amount, limit
