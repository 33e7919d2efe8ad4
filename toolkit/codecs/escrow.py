"""The input settler escrow's ``open(StandardOrder)`` call: types, ABI codec, orderId, context.

Follows the partner-escrow input settler (Open Intents Framework ``InputSettlerEscrow``):
selector ``0x7515fd56``, ``orderId`` exactly as the contract computes it, and the exclusivity
context ``0xe0 ‖ exclusiveFor (bytes32) ‖ startTime (uint32)`` carried by every output.

Representation: every ``bytes32`` field of :class:`MandateOutput` (oracle, settler, token,
recipient) is a lowercase ``0x`` + 64 hex string; ``callbackData`` and ``context`` are ``bytes``.
Addresses in :class:`StandardOrder` are EIP-55 checksummed strings. Inputs are
``(tokenId, amount)`` pairs where the escrow's tokenId is the token address as a uint256.
Use :func:`to_bytes32` / :func:`from_bytes32` and :func:`token_id` / :func:`token_address` to
move between the forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import eth_abi
from eth_abi.exceptions import DecodingError, EncodingError, InsufficientDataBytes
from eth_utils import keccak

from toolkit.codecs import abi
from toolkit.codecs.context import Exclusivity, exclusivity_context, parse_context
from toolkit.codecs.errors import InvalidValue

__all__ = [
    "ORDER_TYPE",
    "OUTPUT_TYPE",
    "SELECTOR",
    "Exclusivity",
    "MandateOutput",
    "StandardOrder",
    "decode_open",
    "encode_open",
    "exclusivity_context",
    "from_bytes32",
    "order_id",
    "parse_context",
    "to_bytes32",
    "token_address",
    "token_id",
]

OUTPUT_TYPE = "(bytes32,bytes32,uint256,bytes32,uint256,bytes32,bytes,bytes)"
ORDER_TYPE = f"(address,uint256,uint256,uint32,uint32,address,uint256[2][],{OUTPUT_TYPE}[])"
SELECTOR = "0x7515fd56"
_SELECTOR_BYTES = bytes.fromhex(SELECTOR[2:])

_ADDRESS_MASK = 2**160 - 1
# Zero bytes appended to tell a cut-off tail from garbage; an order's tail is far shorter.
_TRUNCATION_PROBE = 4096


def to_bytes32(address: str) -> str:
    """Left-pad a 20-byte address to the bytes32 form used by outputs (lowercase hex).

    Example:
        >>> to_bytes32("0x0000000000eC36B683C2E6AC89e9A75989C22a2e")
        '0x0000000000000000000000000000000000ec36b683c2e6ac89e9a75989c22a2e'
    """
    return abi.to_bytes32(address, "address")


def from_bytes32(value: str) -> str:
    """The checksummed address held in a bytes32 word (its upper 12 bytes must be zero).

    Example:
        >>> from_bytes32("0x" + "00" * 12 + "0000000000ec36b683c2e6ac89e9a75989c22a2e")
        '0x0000000000eC36B683C2E6AC89e9A75989C22a2e'
    """
    return abi.from_bytes32(value, "bytes32")


def token_id(address: str) -> int:
    """The escrow's input token id: the token address read as a uint256.

    Example:
        >>> hex(token_id("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"))
        '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'
    """
    return int(abi.address(address, "address"), 16)


def token_address(value: int) -> str:
    """The checksummed token address of an escrow input token id.

    Example:
        >>> token_address(0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913)
        '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
    """
    abi.uint(value, 256, "tokenId")
    if value > _ADDRESS_MASK:
        raise InvalidValue(
            "tokenId", "upper 12 bytes must be zero (an escrow token id is an address)"
        )
    return abi.checksum(value.to_bytes(20, "big"))


@dataclass(frozen=True)
class MandateOutput:
    """One output of an order: what must be delivered, where, to whom, and how it is proven.

    Example:
        >>> out = MandateOutput(
        ...     oracle=to_bytes32("0x0000003E06000007A224AeE90052fA6bb46d43C9"),
        ...     settler=to_bytes32("0x0000000000eC36B683C2E6AC89e9A75989C22a2e"),
        ...     chain_id=42161,
        ...     token=to_bytes32("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
        ...     amount=9968269,
        ...     recipient=to_bytes32("0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"),
        ... )
        >>> out.chain_id
        42161
    """

    oracle: str
    settler: str
    chain_id: int
    token: str
    amount: int
    recipient: str
    callback_data: bytes = b""
    context: bytes = b""

    def __post_init__(self) -> None:
        for name in ("oracle", "settler", "token", "recipient"):
            object.__setattr__(self, name, abi.bytes32(getattr(self, name), name))
        abi.uint(self.chain_id, 256, "chainId")
        abi.uint(self.amount, 256, "amount")
        object.__setattr__(self, "callback_data", abi.data(self.callback_data, "callbackData"))
        object.__setattr__(self, "context", abi.data(self.context, "context"))

    @classmethod
    def from_abi(cls, value: Sequence[Any]) -> MandateOutput:
        """The output an eth-abi decoded tuple holds (the inverse of :meth:`as_abi`).

        >>> out = MandateOutput("0x" + "01" * 32, "0x" + "02" * 32, 1, "0x" + "03" * 32, 5,
        ...                     "0x" + "04" * 32)
        >>> MandateOutput.from_abi(out.as_abi()) == out
        True
        """
        oracle, settler, chain_id, token, amount, recipient, callback_data, context = value
        return cls(
            oracle=abi.hexstr(bytes(oracle)),
            settler=abi.hexstr(bytes(settler)),
            chain_id=chain_id,
            token=abi.hexstr(bytes(token)),
            amount=amount,
            recipient=abi.hexstr(bytes(recipient)),
            callback_data=bytes(callback_data),
            context=bytes(context),
        )

    def as_abi(self) -> tuple[Any, ...]:
        """The tuple eth-abi encodes for this output."""
        return (
            bytes.fromhex(self.oracle[2:]),
            bytes.fromhex(self.settler[2:]),
            self.chain_id,
            bytes.fromhex(self.token[2:]),
            self.amount,
            bytes.fromhex(self.recipient[2:]),
            self.callback_data,
            self.context,
        )


@dataclass(frozen=True)
class StandardOrder:
    """The escrow order passed to ``open()``; field order matches the Solidity struct.

    Example:
        >>> order = StandardOrder(
        ...     user="0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
        ...     nonce=1,
        ...     origin_chain_id=8453,
        ...     expires=1760003600,
        ...     fill_deadline=1760000000,
        ...     input_oracle="0x0000003E06000007A224AeE90052fA6bb46d43C9",
        ...     inputs=((token_id("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), 10000000),),
        ...     outputs=(),
        ... )
        >>> order.fill_deadline <= order.expires
        True
    """

    user: str
    nonce: int
    origin_chain_id: int
    expires: int
    fill_deadline: int
    input_oracle: str
    inputs: tuple[tuple[int, int], ...]
    outputs: tuple[MandateOutput, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "user", abi.address(self.user, "user"))
        abi.uint(self.nonce, 256, "nonce")
        abi.uint(self.origin_chain_id, 256, "originChainId")
        abi.uint(self.expires, 32, "expires")
        abi.uint(self.fill_deadline, 32, "fillDeadline")
        object.__setattr__(self, "input_oracle", abi.address(self.input_oracle, "inputOracle"))
        object.__setattr__(self, "inputs", _inputs(self.inputs))
        object.__setattr__(self, "outputs", _outputs(self.outputs))

    def as_abi(self) -> tuple[Any, ...]:
        """The tuple eth-abi encodes for this order."""
        return (
            self.user,
            self.nonce,
            self.origin_chain_id,
            self.expires,
            self.fill_deadline,
            self.input_oracle,
            [list(pair) for pair in self.inputs],
            [output.as_abi() for output in self.outputs],
        )


def _inputs(value: Any) -> tuple[tuple[int, int], ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidValue("inputs", "must be a sequence of (tokenId, amount) pairs")
    pairs = []
    for i, pair in enumerate(value):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise InvalidValue(f"inputs[{i}]", "must be a (tokenId, amount) pair")
        token = abi.uint(pair[0], 256, f"inputs[{i}].tokenId")
        if token > _ADDRESS_MASK:
            # The escrow reverts with HasDirtyBits(): dirty bits would change the orderId
            # without changing the token actually pulled.
            raise InvalidValue(
                f"inputs[{i}].tokenId",
                "upper 12 bytes must be zero (an escrow token id is an address)",
            )
        amount = abi.uint(pair[1], 256, f"inputs[{i}].amount")
        pairs.append((token, amount))
    return tuple(pairs)


def _outputs(value: Any) -> tuple[MandateOutput, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidValue("outputs", "must be a sequence of MandateOutput")
    for i, output in enumerate(value):
        if not isinstance(output, MandateOutput):
            raise InvalidValue(f"outputs[{i}]", "must be a MandateOutput")
    return tuple(value)


def encode_open(order: StandardOrder) -> str:
    """ABI-encode ``open(order)`` as ``0x`` hex calldata (selector ``0x7515fd56``).

    Example:
        >>> order = StandardOrder("0x" + "11" * 20, 1, 8453, 2, 1, "0x" + "22" * 20, (), ())
        >>> encode_open(order)[:10]
        '0x7515fd56'
    """
    if not isinstance(order, StandardOrder):
        raise InvalidValue("order", "must be a StandardOrder")
    try:
        body = eth_abi.encode([ORDER_TYPE], [order.as_abi()])
    except EncodingError as exc:  # pragma: no cover - the dataclass validates every field
        raise InvalidValue("order", f"cannot be ABI-encoded: {exc}") from exc
    return abi.hexstr(_SELECTOR_BYTES + body)


def decode_open(calldata: str | bytes) -> StandardOrder:
    """Decode ``open()`` calldata back into a :class:`StandardOrder`.

    Rejects a wrong selector, truncated or malformed data, input token ids with dirty upper
    bits, and anything that is not the canonical encoding (e.g. trailing bytes), so that what
    is decoded is exactly what the escrow would see.

    Example:
        >>> order = StandardOrder("0x" + "11" * 20, 1, 8453, 2, 1, "0x" + "22" * 20, (), ())
        >>> decode_open(encode_open(order)) == order
        True
    """
    raw = abi.data(calldata, "calldata")
    if len(raw) < 4:
        raise InvalidValue("calldata", "too short to hold a function selector")
    if raw[:4] != _SELECTOR_BYTES:
        raise InvalidValue("calldata", f"selector {abi.hexstr(raw[:4])} is not open() ({SELECTOR})")
    try:
        (decoded,) = eth_abi.decode([ORDER_TYPE], raw[4:])
    except (DecodingError, OverflowError, ValueError) as exc:
        kind = "truncated" if _is_truncated(raw[4:], exc) else "malformed"
        raise InvalidValue("calldata", f"{kind} open() calldata ({exc})") from exc
    user, nonce, origin, expires, fill_deadline, oracle, inputs, outputs = decoded
    order = StandardOrder(
        user=user,
        nonce=nonce,
        origin_chain_id=origin,
        expires=expires,
        fill_deadline=fill_deadline,
        input_oracle=oracle,
        inputs=tuple((int(t), int(a)) for t, a in inputs),
        outputs=tuple(MandateOutput.from_abi(o) for o in outputs),
    )
    canonical = eth_abi.encode([ORDER_TYPE], [order.as_abi()])
    if canonical != raw[4:]:
        extra = len(raw) - 4 - len(canonical)
        detail = f"{extra} trailing bytes" if extra > 0 else "non-standard offsets or padding"
        raise InvalidValue("calldata", f"not the canonical ABI encoding of open() ({detail})")
    return order


def _is_truncated(body: bytes, exc: Exception) -> bool:
    """Whether the data decodes once zero-padded, i.e. its tail is missing rather than wrong."""
    if isinstance(exc, InsufficientDataBytes):
        return True
    try:
        eth_abi.decode([ORDER_TYPE], body + bytes(_TRUNCATION_PROBE))
    except (DecodingError, OverflowError, ValueError):
        return False
    return True


def order_id(order: StandardOrder, settler: str) -> str:
    """The orderId the escrow at ``settler`` assigns to ``order`` (``0x`` + 64 hex).

    The contract hashes ``block.chainid``, which ``open`` requires to equal
    ``order.originChainId``; the settler address is hashed too, so the same order has a
    different id on another settler.

    Example:
        >>> order = StandardOrder("0x" + "11" * 20, 1, 8453, 2, 1, "0x" + "22" * 20, (), ())
        >>> order_id(order, "0x000025c3226C00B2Cdc200005a1600509f4e00C0")[:10]
        '0x57af1c86'
    """
    if not isinstance(order, StandardOrder):
        raise InvalidValue("order", "must be a StandardOrder")
    settler20 = bytes.fromhex(abi.address(settler, "settler")[2:])
    inputs_hash = keccak(
        b"".join(t.to_bytes(32, "big") + a.to_bytes(32, "big") for t, a in order.inputs)
    )
    outputs_encoded = eth_abi.encode(
        [OUTPUT_TYPE + "[]"], [[output.as_abi() for output in order.outputs]]
    )
    packed = b"".join(
        (
            order.origin_chain_id.to_bytes(32, "big"),
            settler20,
            bytes.fromhex(order.user[2:]),
            order.nonce.to_bytes(32, "big"),
            order.expires.to_bytes(4, "big"),
            order.fill_deadline.to_bytes(4, "big"),
            bytes.fromhex(order.input_oracle[2:]),
            inputs_hash,
            outputs_encoded,
        )
    )
    return abi.hexstr(keccak(packed))
