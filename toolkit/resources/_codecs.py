"""Late-bound access to the chain codecs.

``toolkit.chain`` re-exports modules that themselves import ``toolkit.resources``. Importing the
codecs at module level here would run ``toolkit/chain/__init__.py`` while this package is still
half-initialised, so the codecs are imported on first use instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.chain.erc7930 import InteropAddress


def parse_caip2(text: str) -> int:
    """The chain id of ``eip155:<id>``; raises ``ValueError`` carrying the rule alone."""
    from toolkit.chain import caip2

    try:
        return caip2.parse(text)
    except caip2.Caip2Error as error:
        raise ValueError(error.rule) from None


def decode_interop(text: str) -> InteropAddress:
    """The decoded ERC-7930 address; raises ``ValueError`` with the rule in plain words."""
    from toolkit.chain import erc7930

    try:
        return erc7930.decode(text)
    except erc7930.Erc7930Error as error:
        raise ValueError(f"must be an ERC-7930 interoperable address ({error})") from None
