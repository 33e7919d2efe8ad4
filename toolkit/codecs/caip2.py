"""CAIP-2 chain ids of the ``eip155`` namespace: ``eip155:<decimal chain id>`` ↔ ``int``."""

from __future__ import annotations

import re
from typing import Final

from toolkit.errors import InputError

__all__ = ["Caip2Error", "format", "parse"]

NAMESPACE: Final = "eip155"
# CAIP-2 caps a chain reference at 32 characters.
_MAX_DIGITS: Final = 32
_NAMESPACE_RE: Final = re.compile(r"[-a-z0-9]{3,8}")


class Caip2Error(InputError):
    """A malformed CAIP-2 chain id; ``field`` names the input, ``rule`` the broken rule."""

    field: str
    rule: str

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


def parse(text: str, field: str = "chain") -> int:
    """The numeric chain id of an ``eip155:<id>`` CAIP-2 string.

    >>> parse("eip155:8453")
    8453
    """
    if not isinstance(text, str):
        raise Caip2Error(field, "must be a string like eip155:8453")
    namespace, colon, reference = text.partition(":")
    if not colon:
        raise Caip2Error(field, "must have the form <namespace>:<reference>, e.g. eip155:8453")
    if namespace != NAMESPACE:
        if _NAMESPACE_RE.fullmatch(namespace) is None:
            raise Caip2Error(field, f"namespace {namespace!r} is not a valid CAIP-2 namespace")
        raise Caip2Error(field, f"namespace {namespace!r} is not supported (only eip155)")
    if not reference.isascii() or not reference.isdigit():
        raise Caip2Error(field, "chain id must be decimal digits")
    if len(reference) > _MAX_DIGITS:
        raise Caip2Error(field, f"chain id must have at most {_MAX_DIGITS} digits")
    if reference.startswith("0"):
        if reference == "0":
            raise Caip2Error(field, "chain id must not be 0")
        raise Caip2Error(field, "chain id must not have leading zeros")
    return int(reference)


def format(chain_id: int, field: str = "chainId") -> str:
    """The CAIP-2 string of an eip155 chain id.

    >>> format(8453)
    'eip155:8453'
    """
    if isinstance(chain_id, bool) or not isinstance(chain_id, int):
        raise Caip2Error(field, "must be an integer")
    if chain_id <= 0:
        raise Caip2Error(field, "must be positive")
    if len(str(chain_id)) > _MAX_DIGITS:
        raise Caip2Error(field, f"must have at most {_MAX_DIGITS} digits")
    return f"{NAMESPACE}:{chain_id}"
