"""The codecs as pydantic validators see them: a ``ValueError`` carrying the rule alone."""

from __future__ import annotations

from toolkit.codecs import caip2, erc7930


def parse_caip2(text: str) -> int:
    """The chain id of ``eip155:<id>``; raises ``ValueError`` carrying the rule alone."""
    try:
        return caip2.parse(text)
    except caip2.Caip2Error as error:
        raise ValueError(error.rule) from None


def decode_interop(text: str) -> erc7930.InteropAddress:
    """The decoded ERC-7930 address; raises ``ValueError`` with the rule in plain words."""
    try:
        return erc7930.decode(text)
    except erc7930.Erc7930Error as error:
        raise ValueError(f"must be an ERC-7930 interoperable address ({error})") from None
