"""Unsigned contract calls returned by the transaction-building credit endpoints."""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import BeforeValidator, WithJsonSchema

from toolkit.resources.base import Resource
from toolkit.resources.codecs import parse_caip2
from toolkit.resources.types import Amount, HexAddress, HexData

__all__ = ["Calls", "ContractCall"]

_CHAIN_ID_RE: Final = re.compile(r"[1-9][0-9]*")


def _chain_id_text(value: object) -> str:
    # The live service has been seen writing both "8453" and "eip155:8453"; keep the former.
    if isinstance(value, str) and value.startswith("eip155:"):
        return str(parse_caip2(value))
    if isinstance(value, str) and _CHAIN_ID_RE.fullmatch(value) is not None:
        return value
    raise ValueError("must be a numeric chain id such as 8453 (or eip155:8453)")


ChainIdText = Annotated[
    str,
    BeforeValidator(_chain_id_text),
    WithJsonSchema({"type": "string", "pattern": "^[1-9][0-9]*$"}),
]


class ContractCall(Resource):
    """One unsigned call: chain id, target, calldata and native value.

    >>> call = ContractCall(chain="eip155:8453", to="0x" + "ab" * 20, data="0x")
    >>> (call.chain, call.value, call.chain_id)
    ('8453', '0', 8453)
    """

    chain: ChainIdText
    to: HexAddress
    data: HexData
    value: Amount = "0"

    @property
    def chain_id(self) -> int:
        """``chain`` as an integer."""
        return int(self.chain)

    @property
    def value_int(self) -> int:
        """``value`` as an integer (wei)."""
        return int(self.value)


class Calls(Resource):
    """``{calls: [ContractCall]}``; the list may be empty (nothing to do)."""

    calls: list[ContractCall]
