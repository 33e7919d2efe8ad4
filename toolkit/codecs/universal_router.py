"""Calldata of the Uniswap Universal Router: ``execute(bytes commands, bytes[] inputs, uint256
deadline)`` with the V2/V3 exact-input swap, wrap, unwrap and sweep commands.

Command bytes and input layouts are those of ``Uniswap/universal-router``'s ``Commands.sol``
and ``Dispatcher.sol`` (v1.2): a command is one byte (``0x80`` is its allow-revert flag, the low
six bits its type) and its input is the ABI encoding of:

- ``V3_SWAP_EXACT_IN`` (``0x00``): ``(address recipient, uint256 amountIn, uint256 amountOutMin,
  bytes path, bool payerIsUser)``, ``path`` packed as ``token (20) | fee (3) | token ...``;
- ``SWEEP`` (``0x04``): ``(address token, address recipient, uint256 amountMin)``;
- ``V2_SWAP_EXACT_IN`` (``0x08``): ``(address recipient, uint256 amountIn, uint256 amountOutMin,
  address[] path, bool payerIsUser)``;
- ``WRAP_ETH`` (``0x0b``) and ``UNWRAP_WETH`` (``0x0c``): ``(address recipient, uint256
  amountMin)``.

Recipients ``MSG_SENDER`` (``address(1)``) and ``ADDRESS_THIS`` (``address(2)``) stand for the
caller and the router; an amount of ``CONTRACT_BALANCE`` (``2**255``) means the router's whole
balance of the token. One deliberate difference from the deployed router: a payer-is-user input
is pulled with a plain ERC-20 ``transferFrom`` to the router's allowance, not through Permit2.

>>> command = V3SwapExactIn(MSG_SENDER, 10**6, 0, (USDC, 500, WETH), True)
>>> data = encode_execute([command], deadline=1_800_000_000)
>>> data[:10]
'0x3593564c'
>>> decode_execute(data) == ((command,), 1_800_000_000)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from eth_abi.exceptions import DecodingError, InsufficientDataBytes

from toolkit.codecs import abi, plain_abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import decode_call, encode_call

__all__ = [
    "ADDRESS_THIS",
    "CONTRACT_BALANCE",
    "MSG_SENDER",
    "UNIVERSAL_ROUTER",
    "Command",
    "Sweep",
    "UnwrapWeth",
    "V2SwapExactIn",
    "V3SwapExactIn",
    "WrapEth",
    "decode_commands",
    "decode_execute",
    "encode_execute",
    "encode_v3_path",
]

#: The Universal Router (v1.2) deployment, the same address on Ethereum and Base (CREATE2).
#: The chain registry (``swap_router`` in ``toolkit/chain/registry.toml``) is where the
#: simulated chains and the swap API read each network's router from.
UNIVERSAL_ROUTER: Final = "0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD"
#: ``Constants.MSG_SENDER`` and ``Constants.ADDRESS_THIS``.
MSG_SENDER: Final = "0x0000000000000000000000000000000000000001"
ADDRESS_THIS: Final = "0x0000000000000000000000000000000000000002"
#: ``ActionConstants.CONTRACT_BALANCE``: the router's whole balance.
CONTRACT_BALANCE: Final = 1 << 255

# For doctests: the mainnet USDC and WETH addresses.
USDC: Final = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
WETH: Final = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"

_V3_SWAP_EXACT_IN: Final = 0x00
_SWEEP: Final = 0x04
_V2_SWAP_EXACT_IN: Final = 0x08
_WRAP_ETH: Final = 0x0B
_UNWRAP_WETH: Final = 0x0C
_TYPE_MASK: Final = 0x3F


def encode_v3_path(path: Sequence[str | int]) -> bytes:
    """``token, fee, token[, fee, token ...]`` packed as the V3 routers read it.

    >>> encode_v3_path((USDC, 500, WETH)).hex()[40:46]
    '0001f4'
    """
    if len(path) < 3 or len(path) % 2 == 0:
        raise InvalidValue("path", "must be token, fee, token[, fee, token ...]")
    out = b""
    for i, item in enumerate(path):
        if i % 2 == 0:
            out += bytes.fromhex(str(item)[2:])
        else:
            fee = int(item)
            if not 0 <= fee < 1 << 24:
                raise InvalidValue("path", f"fee {fee} is not a uint24")
            out += fee.to_bytes(3, "big")
    return out


def _decode_v3_path(raw: bytes) -> tuple[str | int, ...]:
    if len(raw) < 43 or (len(raw) - 20) % 23:
        raise InvalidValue("path", "a V3 path is 20 bytes then 23 per hop")
    items: list[str | int] = [abi.checksum(raw[:20])]
    for at in range(20, len(raw), 23):
        items.append(int.from_bytes(raw[at : at + 3], "big"))
        items.append(abi.checksum(raw[at + 3 : at + 23]))
    return tuple(items)


@dataclass(frozen=True)
class V3SwapExactIn:
    """``V3_SWAP_EXACT_IN``; ``path`` is ``(token, fee, token, ...)``."""

    recipient: str
    amount_in: int
    amount_out_min: int
    path: tuple[str | int, ...]
    payer_is_user: bool

    def encode(self) -> tuple[int, bytes]:
        body = plain_abi.encode(
            ["address", "uint256", "uint256", "bytes", "bool"],
            [
                self.recipient,
                self.amount_in,
                self.amount_out_min,
                encode_v3_path(self.path),
                self.payer_is_user,
            ],
        )
        return _V3_SWAP_EXACT_IN, body


@dataclass(frozen=True)
class V2SwapExactIn:
    """``V2_SWAP_EXACT_IN``; ``path`` is the token addresses, first to last."""

    recipient: str
    amount_in: int
    amount_out_min: int
    path: tuple[str, ...]
    payer_is_user: bool

    def encode(self) -> tuple[int, bytes]:
        body = plain_abi.encode(
            ["address", "uint256", "uint256", "address[]", "bool"],
            [
                self.recipient,
                self.amount_in,
                self.amount_out_min,
                list(self.path),
                self.payer_is_user,
            ],
        )
        return _V2_SWAP_EXACT_IN, body


@dataclass(frozen=True)
class WrapEth:
    """``WRAP_ETH``: wrap ``amount_min`` (or ``CONTRACT_BALANCE``) of the router's native coin."""

    recipient: str
    amount_min: int

    def encode(self) -> tuple[int, bytes]:
        return _WRAP_ETH, plain_abi.encode(
            ["address", "uint256"], [self.recipient, self.amount_min]
        )


@dataclass(frozen=True)
class UnwrapWeth:
    """``UNWRAP_WETH``: unwrap all the router's WETH (at least ``amount_min``) to ``recipient``."""

    recipient: str
    amount_min: int

    def encode(self) -> tuple[int, bytes]:
        body = plain_abi.encode(["address", "uint256"], [self.recipient, self.amount_min])
        return _UNWRAP_WETH, body


@dataclass(frozen=True)
class Sweep:
    """``SWEEP``: send the router's whole ``token`` balance (at least ``amount_min``)."""

    token: str
    recipient: str
    amount_min: int

    def encode(self) -> tuple[int, bytes]:
        body = plain_abi.encode(
            ["address", "address", "uint256"], [self.token, self.recipient, self.amount_min]
        )
        return _SWEEP, body


Command = V3SwapExactIn | V2SwapExactIn | WrapEth | UnwrapWeth | Sweep


def encode_execute(commands: Sequence[Command], *, deadline: int) -> str:
    """``execute(commands, inputs, deadline)`` calldata as ``0x`` hex."""
    if not commands:
        raise InvalidValue("commands", "must hold at least one command")
    encoded = [command.encode() for command in commands]
    kinds = bytes(kind for kind, _ in encoded)
    return encode_call("universalRouter.execute", kinds, [body for _, body in encoded], deadline)


def _decode_one(kind: int, body: bytes) -> Command:
    if kind == _V3_SWAP_EXACT_IN:
        r, a, m, p, u = plain_abi.decode(["address", "uint256", "uint256", "bytes", "bool"], body)
        return V3SwapExactIn(abi.checksum(r), a, m, _decode_v3_path(p), u)
    if kind == _V2_SWAP_EXACT_IN:
        r, a, m, p, u = plain_abi.decode(
            ["address", "uint256", "uint256", "address[]", "bool"], body
        )
        if len(p) < 2:
            raise InvalidValue("inputs", "a V2 path holds at least two tokens")
        return V2SwapExactIn(abi.checksum(r), a, m, tuple(abi.checksum(t) for t in p), u)
    if kind == _WRAP_ETH:
        r, a = plain_abi.decode(["address", "uint256"], body)
        return WrapEth(abi.checksum(r), a)
    if kind == _UNWRAP_WETH:
        r, a = plain_abi.decode(["address", "uint256"], body)
        return UnwrapWeth(abi.checksum(r), a)
    if kind == _SWEEP:
        t, r, a = plain_abi.decode(["address", "address", "uint256"], body)
        return Sweep(abi.checksum(t), abi.checksum(r), a)
    raise InvalidValue("commands", f"unsupported command 0x{kind:02x}")


def decode_execute(data: str | bytes) -> tuple[tuple[Command, ...], int]:
    """The commands and deadline of ``execute`` calldata; unsupported commands (anything but
    the five above), allow-revert flags and malformed inputs raise ``InvalidValue``."""
    call = decode_call(data)
    if call.function != "universalRouter.execute":
        raise InvalidValue("data", f"not a Universal Router execute call ({call.function})")
    kinds: bytes = call.args["commands"]
    inputs = call.args["inputs"]
    return decode_commands(kinds, inputs), call.args["deadline"]


def decode_commands(kinds: bytes, inputs: Sequence[bytes]) -> tuple[Command, ...]:
    """The commands of ``execute``'s ``commands`` and ``inputs`` arguments (see
    :func:`decode_execute`)."""
    if len(kinds) != len(inputs):
        raise InvalidValue("inputs", "must hold one input per command (LengthMismatch)")
    commands = []
    for kind, body in zip(kinds, inputs, strict=True):
        if kind & ~_TYPE_MASK:
            raise InvalidValue("commands", f"command 0x{kind:02x}: flags are not supported")
        try:
            commands.append(_decode_one(kind, body))
        except InvalidValue:
            raise
        except (DecodingError, InsufficientDataBytes, OverflowError, ValueError) as exc:
            raise InvalidValue("inputs", f"malformed input of command 0x{kind:02x}") from exc
    return tuple(commands)
