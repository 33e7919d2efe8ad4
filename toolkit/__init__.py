"""Analytics toolkit for a cross-chain intent liquidity, swap and credit service.

Packages (imports point from the edges toward the pure core):

- ``toolkit.resources``: pydantic models of every resource, query and error body.
- ``toolkit.chain``: ERC-7930/CAIP-2 codecs, escrow ``open()`` encoding, contract calls,
  EIP-712 borrow authorizations, the calldata guard, the chain/token registry.
- ``toolkit.scenario``: TOML scenarios that configure the engine and the simulated world.
- ``toolkit.engine``: the pure reservation engine (time is passed in).
- ``toolkit.world``: the simulated on-chain world (escrow, filler, settlement).
- ``toolkit.server``: the embedded service (FastAPI), ``toolkit serve``.
- ``toolkit.client``: httpx clients for the service surfaces.
- ``toolkit.collect``: collectors writing to DuckDB.
- ``toolkit.store``: the DuckDB schema and queries.
- ``toolkit.models``: pricing and capacity analytics on polars frames.
- ``toolkit.backtest``: whole-flow replay under a virtual clock.
- ``toolkit.testing``: helpers for deterministic regression notebooks.
"""

__version__ = "0.1.0"
