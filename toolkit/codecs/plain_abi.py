"""ABI encoding and decoding as eth_abi does it, with a fast path for the plain types the
simulated chains use (private to the codecs).

The simulated chains encode and decode thousands of calls, results and logs a run (a token
transfer is a call, its ``bool`` result and a ``Transfer`` log; a swap through the router is a
dozen of them), and eth_abi's validation and type parsing were most of their cost. Here the
plain types (``address``, ``bool``, ``uintN``, ``intN``, ``bytes`` and dynamic arrays of them,
``T[]``) in their plain Python forms are joined and split directly; anything else (other
types, a value out of range, bytes for an address, non-canonical data) goes to eth_abi, which
encodes, decodes or refuses it with its own error. ``tests/codecs/test_plain_abi.py`` holds
both paths to the same bytes and values.

>>> raw = encode(["address", "bytes[]", "int24"], ["0x" + "11" * 20, [b"\\x01"], -1])
>>> raw == eth_abi.encode(["address", "bytes[]", "int24"], ["0x" + "11" * 20, [b"\\x01"], -1])
True
>>> decode(["address", "bytes[]", "int24"], raw)
['0x1111111111111111111111111111111111111111', (b'\\x01',), -1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import eth_abi

__all__ = ["decode", "decode_canonical", "encode", "word"]

_BITS = {f"{sign}int{n}": n for n in range(8, 257, 8) for sign in ("", "u")}
_BITS |= {"uint": 256, "int": 256}
_WORDS = {"address", "bool", *_BITS}  # the types whose value is one word


def word(type_: str, value: Any) -> bytes | None:
    """The 32-byte word of an ``address``, ``uintN``, ``intN`` or ``bool`` in its plain form
    (a ``0x`` string of 40 hex digits in any case, an int in range, a bool), else None.

    >>> word("uint8", 5)[-1], word("uint8", 256), word("int24", -1)[0]
    (5, None, 255)
    """
    kind = type(value)
    if type_ == "address":
        if kind is str and len(value) == 42 and value[:2] == "0x":
            try:  # eth_abi takes any case without checking a checksum: so does this
                return bytes(12) + bytes.fromhex(value[2:])
            except ValueError:
                return None
        return None
    if kind is int:
        bits = _BITS.get(type_)
        if bits is None:
            return None
        if type_[0] == "u":
            return value.to_bytes(32, "big") if 0 <= value < 1 << bits else None
        low = -(1 << (bits - 1))  # two's complement over the whole word
        return value.to_bytes(32, "big", signed=True) if low <= value < -low else None
    if kind is bool and type_ == "bool":
        return bytes(31) + (b"\x01" if value else b"\x00")
    return None


def _tail(type_: str, value: Any) -> bytes | None:
    """The tail of a dynamic ``bytes`` or ``T[]`` value, else None."""
    if type_ == "bytes":
        if type(value) is not bytes:
            return None
        return len(value).to_bytes(32, "big") + value + bytes(-len(value) % 32)
    if type_.endswith("[]") and type(value) in (list, tuple):
        body = _plain([type_[:-2]] * len(value), value)
        return None if body is None else len(value).to_bytes(32, "big") + body
    return None


def _plain(types: Sequence[str], values: Sequence[Any]) -> bytes | None:
    """The encoding of ``values`` as the tuple ``types`` when every one is plain, else None.
    Each plain type's head is one word (the value, or the offset of its tail)."""
    if len(types) != len(values):
        return None
    heads: list[bytes] = []
    tails: list[bytes] = []
    offset = 32 * len(types)
    for type_, value in zip(types, values, strict=True):
        head = word(type_, value)
        if head is None:
            tail = _tail(type_, value)
            if tail is None:
                return None
            head = offset.to_bytes(32, "big")
            tails.append(tail)
            offset += len(tail)
        heads.append(head)
    return b"".join(heads) + b"".join(tails)


def encode(types: Sequence[str], values: Sequence[Any]) -> bytes:
    """``eth_abi.encode(types, values)``: the same bytes, the same errors.

    >>> encode(["address", "uint256"], ["0x" + "11" * 20, 7])[-1]
    7
    """
    raw = _plain(types, values)
    return eth_abi.encode(list(types), list(values)) if raw is None else raw


def _read(types: Sequence[str], raw: bytes, start: int) -> list[Any] | None:
    """The values of the tuple ``types`` encoded from ``raw[start:]``; None when a type is not
    plain, a word is not its value's canonical word, or an offset or length points outside
    ``raw`` (offsets and padding of dynamic values are left to the caller's re-encoding)."""
    out: list[Any] = []
    for i, type_ in enumerate(types):
        at = start + 32 * i
        if at + 32 > len(raw):
            return None
        number = int.from_bytes(raw[at : at + 32], "big")
        if type_ == "address":
            if number >> 160:
                return None
            out.append("0x" + raw[at + 12 : at + 32].hex())
        elif type_ == "bool":
            if number > 1:
                return None
            out.append(number == 1)
        elif type_ in _BITS:
            bits = _BITS[type_]
            if type_[0] == "u":
                if number >> bits:
                    return None
            else:
                if number >> 255:  # two's complement: the top bit is the sign
                    number -= 1 << 256
                if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
                    return None
            out.append(number)
        elif type_ == "bytes" or type_.endswith("[]"):
            offset = start + number
            if offset + 32 > len(raw):
                return None
            length = int.from_bytes(raw[offset : offset + 32], "big")
            if type_ == "bytes":
                if offset + 32 + length > len(raw):
                    return None
                out.append(raw[offset + 32 : offset + 32 + length])
                continue
            if 32 * length > len(raw) - offset - 32:  # more heads than bytes: not ours to read
                return None
            items = _read([type_[:-2]] * length, raw, offset + 32)
            if items is None:
                return None
            out.append(tuple(items))
        else:
            return None
    return out


def decode_canonical(types: Sequence[str], raw: bytes) -> list[Any] | None:
    """What ``eth_abi.decode(types, raw)`` gives (addresses lowercase, arrays as tuples) when
    every type is plain and ``raw`` is exactly their canonical encoding; else None, and the
    caller asks eth_abi, which decodes or says what is wrong.

    >>> decode_canonical(["bool"], bytes(31) + b"\\x01")
    [True]
    >>> decode_canonical(["bool"], bytes(31) + b"\\x02") is None  # not a bool: eth_abi says why
    True
    """
    values = _read(types, raw, 0)
    if values is None:
        return None
    if len(raw) == 32 * len(types) and _WORDS.issuperset(types):
        return values  # one word each, each checked canonical by _read
    return values if _plain(types, values) == raw else None


def decode(types: Sequence[str], raw: bytes) -> list[Any]:
    """``eth_abi.decode(types, raw)`` as a list: the same values, the same errors.

    >>> decode(["uint256[]"], encode(["uint256[]"], [[1, 2]]))
    [(1, 2)]
    """
    values = decode_canonical(types, raw)
    return list(eth_abi.decode(list(types), raw)) if values is None else values
