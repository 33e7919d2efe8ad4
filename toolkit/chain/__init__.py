"""What the toolkit builds and checks on top of the codecs and the resources models.

- :mod:`~toolkit.chain.registry`: chains, tokens and contract addresses (package data).
- :mod:`~toolkit.chain.builder`: ``build_open``, the escrow ``open()`` transaction of a quote.
- :mod:`~toolkit.chain.calls`: ``ContractCall`` builders: ``contract_call`` for any function of
  the table, typed ones for the calls the toolkit hands out.
- :mod:`~toolkit.chain.borrow`: EIP-712 borrow authorizations (sign and recover).
- :mod:`~toolkit.chain.guard`: the calldata guard, which checks a transaction or a list of
  calls against what the caller expects and reports :class:`Finding` objects.

The encodings themselves (ERC-7930, CAIP-2, ``open()``/orderId, the function table) live in
:mod:`toolkit.codecs`, which this package builds on.

>>> from toolkit.chain import default_registry
>>> default_registry().escrow(8453) == "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
True
"""

from __future__ import annotations

from toolkit.chain import borrow, builder, calls, guard, registry
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.finding import Finding
from toolkit.chain.registry import Registry, default_registry

__all__ = [
    "Finding",
    "NotInRegistry",
    "Registry",
    "borrow",
    "builder",
    "calls",
    "default_registry",
    "guard",
    "registry",
]
