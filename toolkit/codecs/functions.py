"""A generic ABI codec over the one table of contract functions
(:mod:`toolkit.codecs.function_table`): calls and results encoded and decoded by table key.

>>> decode_call(encode_call("erc20.transfer", "0x" + "22" * 20, 5)).args["amount"]
5
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import eth_abi
from eth_abi.exceptions import DecodingError, EncodingError, InsufficientDataBytes

from toolkit.codecs import abi, escrow, plain_abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.function_table import FUNCTIONS, Function

__all__ = [
    "DecodedCall",
    "decode_call",
    "decode_result",
    "encode_call",
    "encode_result",
    "json_abi",
]

_BY_SELECTOR: dict[str, Function] = {}
for _fn in FUNCTIONS.values():
    if _fn.selector in _BY_SELECTOR:  # pragma: no cover - guards the table above
        raise RuntimeError(f"{_fn.key} and {_BY_SELECTOR[_fn.selector].key} share a selector")
    _BY_SELECTOR[_fn.selector] = _fn


@dataclass(frozen=True)
class DecodedCall:
    """A decoded call: the function's table key and its arguments by parameter name.

    Addresses are checksummed, integers are ``int``, ``bytes`` parameters are ``bytes``; the
    argument of ``escrow.open`` is ``order`` (a :class:`~toolkit.codecs.escrow.StandardOrder`).
    """

    function: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> tuple[Any, ...]:
        """The arguments in declaration order."""
        return tuple(self.args.values())


def _lookup(function: str) -> Function:
    if not isinstance(function, str) or function not in FUNCTIONS:
        known = ", ".join(sorted(FUNCTIONS))
        raise InvalidValue("function", f"unknown function {function!r}; known: {known}")
    return FUNCTIONS[function]


def _normalise(type_: str, value: Any, name: str) -> Any:
    if type_ == "address":
        return abi.address(value, name)
    if type_ == "bytes":
        return abi.data(value, name)
    if type_ == "bytes32":
        if isinstance(value, bytes) and len(value) == 32:
            return value
        return bytes.fromhex(abi.bytes32(value, name)[2:])
    if not type_.startswith("uint"):
        return value  # a struct (tuple) or array: eth-abi checks it while encoding
    return abi.uint(value, int(type_[4:]), name)


def encode_call(function: str, *args: Any) -> str:
    """ABI-encode a call of a known function as ``0x`` hex calldata.

    Example:
        >>> encode_call("erc20.approve", "0x000025c3226C00B2Cdc200005a1600509f4e00C0", 5)[:10]
        '0x095ea7b3'
    """
    fn = _lookup(function)
    if function == "escrow.open":
        if len(args) != 1:
            raise InvalidValue("args", f"escrow.open takes 1 argument (order), got {len(args)}")
        return escrow.encode_open(args[0])
    if len(args) != len(fn.params):
        names = ", ".join(n for _, n in fn.params)
        raise InvalidValue(
            "args", f"{function} takes {len(fn.params)} arguments ({names}), got {len(args)}"
        )
    values = [_normalise(t, v, n) for (t, n), v in zip(fn.params, args, strict=True)]
    try:
        body = plain_abi.encode(fn.types, values)
    except (EncodingError, TypeError, ValueError) as exc:
        raise InvalidValue("args", f"cannot encode {function} ({exc})") from exc
    return fn.selector + body.hex()


#: ABI types of one 32-byte word: eth_abi's strict decoder already refuses their non-canonical
#: encodings (dirty padding, a bool other than 0 or 1), so only the length is left to check.
_STATIC = re.compile(r"(address|bool|u?int\d*|bytes([1-9]|[12]\d|3[012]))")


def decode_call(data: str | bytes, *, checksum: bool = True) -> DecodedCall:
    """Decode calldata of a known function; unknown selectors and malformed data are rejected.

    Addresses come back EIP-55 checksummed, or lowercase with ``checksum=False`` (the simulated
    contracts' hot path: a checksum is a keccak per address).

    Example:
        >>> call = decode_call(encode_call("creditHub.setOperator", "0x" + "ab" * 20))
        >>> call.function, call.args
        ('creditHub.setOperator', {'operator': '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB'})
    """
    raw = abi.data(data, "data")
    if len(raw) < 4:
        raise InvalidValue("data", "too short to hold a function selector")
    selector = abi.hexstr(raw[:4])
    fn = _BY_SELECTOR.get(selector)
    if fn is None:
        raise InvalidValue("data", f"unknown function selector {selector}")
    if fn.key == "escrow.open":
        try:
            order = escrow.decode_open(raw)
        except InvalidValue as exc:
            raise InvalidValue("data", exc.rule) from exc
        return DecodedCall(fn.key, {"order": order})
    decoded = plain_abi.decode_canonical(fn.types, raw[4:])
    if decoded is None:  # dynamic values, or something eth_abi has to name
        decoded = _decode_checked(fn, raw)
    if not checksum:
        return DecodedCall(fn.key, dict(zip((n for _, n in fn.params), decoded, strict=True)))
    args = {
        name: abi.checksum(value) if type_ == "address" else value
        for (type_, name), value in zip(fn.params, decoded, strict=True)
    }
    return DecodedCall(fn.key, args)


def _decode_checked(fn: Function, raw: bytes) -> list[Any]:
    """eth_abi's decoding of a call's arguments, refused unless ``raw`` is their canonical
    encoding."""
    try:
        decoded = eth_abi.decode(fn.types, raw[4:])
    except InsufficientDataBytes as exc:
        raise InvalidValue("data", f"truncated {fn.key} calldata ({exc})") from exc
    except (DecodingError, OverflowError, ValueError) as exc:
        raise InvalidValue("data", f"malformed {fn.key} calldata ({exc})") from exc
    types = fn.types
    if all(_STATIC.fullmatch(t) for t in types):
        canonical = len(raw) == 4 + 32 * len(types)
    else:  # offsets and lengths of dynamic values: only a re-encoding tells
        canonical = eth_abi.encode(types, list(decoded)) == raw[4:]
    if not canonical:
        raise InvalidValue("data", f"not the canonical ABI encoding of {fn.key}")
    return list(decoded)


def encode_result(function: str, *values: Any) -> bytes:
    """ABI-encode what a known function returns (its declared outputs).

    >>> encode_result("erc20.balanceOf", 5).hex()[-4:]
    '0005'
    """
    fn = _lookup(function)
    return plain_abi.encode(fn.outputs, values)


def decode_result(function: str, data: str | bytes) -> tuple[Any, ...]:
    """Decode what a known function returned.

    >>> decode_result("erc20.symbol", encode_result("erc20.symbol", "USDC"))
    ('USDC',)
    """
    fn = _lookup(function)
    raw = abi.data(data, "data")
    try:
        return tuple(eth_abi.decode(list(fn.outputs), raw))
    except (DecodingError, InsufficientDataBytes, OverflowError, ValueError) as exc:
        raise InvalidValue("data", f"malformed {fn.key} result ({exc})") from exc


def json_abi(*families: str) -> list[dict[str, Any]]:
    """The JSON ABI of every function of the given families (e.g. ``"erc20"``, ``"weth"``).

    >>> [entry["name"] for entry in json_abi("weth")]
    ['deposit', 'withdraw']
    """
    return [
        fn.abi()
        for key, fn in FUNCTIONS.items()
        if key.partition(".")[0] in families and not any(t.startswith("(") for t in fn.types)
    ]
