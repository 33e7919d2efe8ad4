"""Output contexts of the partner-escrow order: limit orders and exclusive limit orders.

The output settler reads the first byte of ``MandateOutput.context``: empty or ``0x00`` is a
plain limit order; ``0xe0 ‖ exclusiveFor (bytes32) ‖ startTime (uint32)`` (37 bytes) lets only
``exclusiveFor`` fill before ``startTime``. Dutch auctions (``0x01``, ``0xe1``) exist in the
protocol but are not produced or accepted by the toolkit.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue

__all__ = ["Exclusivity", "exclusivity_context", "parse_context"]

_EXCLUSIVE = 0xE0
_EXCLUSIVE_LENGTH = 37


@dataclass(frozen=True)
class Exclusivity:
    """An exclusive limit order context: only ``filler`` may fill before ``start_time``."""

    filler: str
    start_time: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "filler", abi.address(self.filler, "filler"))
        abi.uint(self.start_time, 32, "startTime")


def exclusivity_context(filler: str, start_time: int) -> bytes:
    """The 37-byte context ``0xe0 ‖ bytes32(filler) ‖ uint32(start_time)``.

    Example:
        >>> exclusivity_context("0x94807fe4300d15909c1a4fd39f76c61d68aee11e", 1759999060).hex()
        'e000000000000000000000000094807fe4300d15909c1a4fd39f76c61d68aee11e68e77454'
    """
    exclusive = Exclusivity(filler, start_time)
    return (
        bytes([_EXCLUSIVE])
        + bytes.fromhex(abi.to_bytes32(exclusive.filler, "filler")[2:])
        + exclusive.start_time.to_bytes(4, "big")
    )


_UNSUPPORTED = {0x01: "Dutch auction", 0xE1: "exclusive Dutch auction"}


def parse_context(context: bytes | str) -> Exclusivity | None:
    """Read an output context: ``None`` for a plain limit order, else its :class:`Exclusivity`.

    Accepts ``b""`` and ``0x00`` (limit order) and the 37-byte ``0xe0`` form. Other order
    types and wrong lengths are rejected with the reason.

    Example:
        >>> parse_context(b"") is None
        True
        >>> parse_context(exclusivity_context("0x94807fe4300d15909c1a4fd39f76c61d68aee11e", 5))
        Exclusivity(filler='0x94807fE4300D15909C1a4fd39f76c61D68aee11E', start_time=5)
    """
    raw = abi.data(context, "context")
    if not raw:
        return None
    kind = raw[0]
    if kind == 0x00:
        if len(raw) != 1:
            raise InvalidValue("context", f"a 0x00 context must be exactly 1 byte, got {len(raw)}")
        return None
    if kind == _EXCLUSIVE:
        if len(raw) != _EXCLUSIVE_LENGTH:
            raise InvalidValue(
                "context",
                f"a 0xe0 context must be exactly {_EXCLUSIVE_LENGTH} bytes, got {len(raw)}",
            )
        word = abi.hexstr(raw[1:33])
        try:
            filler = abi.from_bytes32(word, "context.exclusiveFor")
        except InvalidValue as exc:
            raise InvalidValue("context", f"exclusiveFor {exc.rule}") from exc
        return Exclusivity(filler, int.from_bytes(raw[33:37], "big"))
    if kind in _UNSUPPORTED:
        raise InvalidValue(
            "context", f"{_UNSUPPORTED[kind]} orders (0x{kind:02x}) are not supported"
        )
    raise InvalidValue("context", f"unknown order type 0x{kind:02x}")
