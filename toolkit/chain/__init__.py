"""Chain-level encodings: addresses, the escrow ``open()`` call, contract calls, signatures.

Eagerly imported (pure codecs and the registry, no dependency on ``toolkit.resources``):

- :mod:`~toolkit.chain.erc7930` and :mod:`~toolkit.chain.caip2`: address and chain id codecs.
- :mod:`~toolkit.chain.escrow`: ``StandardOrder``, ``encode_open``/``decode_open``, ``order_id``,
  and the exclusivity context (:mod:`~toolkit.chain.context`).
- :mod:`~toolkit.chain.functions`: the contract function table and generic ABI codec.
- :mod:`~toolkit.chain.registry`: chains, tokens and contract addresses.

Loaded on first access (they build or check ``toolkit.resources`` models, and ``borrow`` pulls
in eth-account): :mod:`~toolkit.chain.borrow` (EIP-712 borrow authorizations),
:mod:`~toolkit.chain.builder` (``build_open``), :mod:`~toolkit.chain.calls` (typed
``ContractCall`` builders) and :mod:`~toolkit.chain.guard` (the calldata guard).

>>> from toolkit.chain import escrow, registry
>>> registry.default_registry().escrow(8453) == "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
True
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from toolkit.chain import caip2, context, erc7930, errors, escrow, functions, registry
from toolkit.chain.errors import InvalidValue, NotInRegistry
from toolkit.chain.registry import Registry, default_registry

if TYPE_CHECKING:
    from toolkit.chain import borrow, builder, calls, guard

__all__ = [
    "InvalidValue",
    "NotInRegistry",
    "Registry",
    "borrow",
    "builder",
    "caip2",
    "calls",
    "context",
    "default_registry",
    "erc7930",
    "errors",
    "escrow",
    "functions",
    "guard",
    "registry",
]

_LAZY = frozenset({"borrow", "builder", "calls", "guard"})


def __getattr__(name: str) -> ModuleType:
    # Lazy submodules keep ``import toolkit.chain`` free of the resources models and of
    # eth-account, so the resources package can use the codecs without an import cycle.
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
