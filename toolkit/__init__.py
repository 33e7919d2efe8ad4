"""Analytics toolkit for a cross-chain intent liquidity, swap and credit service.

Packages, from the top layer down; each imports only from the layers below it (the
import-linter contract in ``pyproject.toml``, checked by ``make test``):

- ``toolkit.cli``: the ``toolkit`` command (parsing, printing, exit codes).
- ``toolkit.report`` | ``toolkit.testing``: figures and summaries | regression-notebook helpers.
- ``toolkit.backtest`` | ``toolkit.collect``: whole-flow replays | collectors writing to DuckDB.
- ``toolkit.client``: httpx clients for the service surfaces, and the embedded service in-process.
- ``toolkit.server``: the embedded service (FastAPI).
- ``toolkit.world``: the simulated on-chain world (escrow, filler, settlement).
- ``toolkit.engine``: the pure reservation engine (time is passed in).
- ``toolkit.scenario``: scenarios that configure the engine and the simulated world.
- ``toolkit.chain``: the chain/token registry, contract calls, EIP-712, the calldata guard.
- ``toolkit.resources``: pydantic models of every resource, query and error body.
- ``toolkit.codecs`` | ``toolkit.models`` | ``toolkit.store``: pure codecs (ERC-7930, CAIP-2,
  ABI, escrow ``open()``) | pricing, capacity and credit-health analytics | the DuckDB
  store.
- ``toolkit.amm``: Uniswap V2/V3 math and pools, wei-exact.
- ``toolkit.credit``: the credit product's rules and account figures, defined once.
- ``toolkit.clock``, ``toolkit.arguments``: clocks; the one numeric argument check.
- ``toolkit.errors``: the one exception tree, at the bottom: :class:`ToolkitError` and its
  families :class:`InputError` (also a ``ValueError``), :class:`CapacityError`,
  :class:`ChainError`, :class:`StorageError` and :class:`HttpError`, exported here. Every error
  the toolkit raises on purpose is one of them, so ``except ToolkitError`` catches them all.

One convention for what is public: a package's ``__init__`` ``__all__`` is its API. Module file
names carry no underscore; a module's ``__all__`` lists what it offers its package.
"""

from toolkit.errors import (
    CapacityError,
    ChainError,
    HttpError,
    InputError,
    StorageError,
    ToolkitError,
)

__all__ = [
    "CapacityError",
    "ChainError",
    "HttpError",
    "InputError",
    "StorageError",
    "ToolkitError",
    "__version__",
]

__version__ = "0.1.0"
