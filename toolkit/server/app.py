"""``create_app``: the embedded service as one FastAPI application."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from fastapi import FastAPI

from toolkit.clock import WALL, Clock
from toolkit.scenario import Scenario, load_scenario
from toolkit.server import credit, events, intents, liquidity, rpc, signature, sim, swap
from toolkit.server.connections import BodyDeadline
from toolkit.server.docs import SECURITY_SCHEMES, complete
from toolkit.server.errors import install_error_handlers
from toolkit.server.service import Service

__all__ = ["create_app"]

#: py_ecc (imported by eth-account for its BLS keys) raises the interpreter's recursion limit to
#: this at import, so that a deep enough JSON document overflows the C stack (SIGSEGV) instead
#: of raising RecursionError. The service signs with secp256k1 only (eth-keys), never py_ecc's
#: recursive pairing code, so :func:`create_app` puts the interpreter's default back.
_PY_ECC_RECURSION_LIMIT: Final = 100_000
_DEFAULT_RECURSION_LIMIT: Final = 1000

_DESCRIPTION: Final = """\
The embedded intent liquidity service: the partner-intents and liquidity surfaces of the
interface, backed by the toolkit's reservation engine and a scenario's pools and routes.

Errors are `{error, debug?}` bodies: 400 names the parameter and the rule, 401 is a missing or
unknown `X-Auth-Token`, 404 is no capacity now (or an unknown path).

Endpoints tagged **simulation** are not part of the interface. `POST /rpc/{chainId}` serves
each simulated chain as standard Ethereum JSON-RPC (web3.py, ethers, viem), with the
anvil/hardhat development namespace: a whole flow runs on it (the user's `approve` and `open()`,
the service's fills and settlements, time by `evm_increaseTime`/`evm_mine`), and each pool is a
contract whose views (`balance`, `reserved`, `outstanding`, `available` of a token) answer the
engine's figures. `GET /sim/orders/{orderId}` reads what no chain holds: the engine's record of
an order and the reservation under its id.

The swap API is served at `{base_url}/swap` (`GET /swap/{network}/v1/route`, HTTP Basic with an
API key as password, errors `{code, requestId, error}`), on the simulated chains' AMM pools.
"""

_TAGS: Final = [
    {"name": "partner-intents", "description": "Firm quotes and the escrow open() transaction."},
    {"name": "liquidity", "description": "Discovery, borrow quotes, authorizations, events."},
    {"name": "swap", "description": "The swap API, `{base_url}/swap/{network}/v1/route`."},
    {"name": "credit", "description": "Credit: account info, lock, draw, repay, unlock, earn."},
    {
        "name": "simulation",
        "description": (
            "Not part of the interface: the simulated chains' JSON-RPC, and the engine's "
            "record of an order."
        ),
    },
]


def create_app(
    scenario: Scenario | str | os.PathLike[str] | None = None,
    *,
    clock: Clock = WALL,
    heartbeat: float = 15.0,
    tick: float = 1.0,
    max_events: int = 100_000,
    seed: int = 0,
) -> FastAPI:
    """The embedded service for ``scenario`` (default ``default``) as an ASGI app.

    ``clock`` is the service's :class:`~toolkit.clock.Clock` (a ``VirtualClock`` in tests);
    ``heartbeat`` is the seconds between ``: ping`` comments on idle event streams; ``tick`` the
    seconds between a stream's checks for lapsed reservations; ``max_events`` how many engine
    events the log keeps for resuming streams; ``seed`` varies the engine's quote ids and the
    order nonces (the same seed gives the same ids on every run). The app holds one engine;
    ``app.state.service`` is its :class:`Service`.

    >>> import httpx, asyncio
    >>> from toolkit.scenario import load_scenario
    >>> app = create_app(load_scenario("default"))
    >>> async def health():
    ...     transport = httpx.ASGITransport(app=app)
    ...     async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
    ...         return (await client.get("/health")).json()
    >>> asyncio.run(health())
    {'status': 'ok'}
    """
    if sys.getrecursionlimit() == _PY_ECC_RECURSION_LIMIT:
        sys.setrecursionlimit(_DEFAULT_RECURSION_LIMIT)
    service = Service(
        load_scenario(scenario, env=os.environ),  # a name: as served, keys from the environment
        clock=clock,
        heartbeat=heartbeat,
        tick=tick,
        max_events=max_events,
        seed=seed,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            service.close_streams()

    app = FastAPI(
        title="Embedded intent liquidity service",
        version="0.0.1",
        description=_DESCRIPTION,
        openapi_tags=_TAGS,
        lifespan=lifespan,
    )
    app.state.service = service
    install_error_handlers(app)
    app.add_middleware(BodyDeadline)
    first = 0  # ahead of FastAPI's own document routes: the service's are the ones asked for
    for module in (intents, liquidity, signature, events, credit, sim, rpc, swap):
        # The routes join the app's own table as they are (tags and prefix are already theirs)
        # rather than through include_router, which keeps each router as a branch that FastAPI
        # matches through again on every request (about half of the time of a /health answer).
        app.router.routes[first:first] = module.router.routes
        first += len(module.router.routes)
    _add_security_schemes(app, sorted(service.chains.ledgers))
    return app


def _add_security_schemes(app: FastAPI, chains: list[int]) -> None:
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = complete(generate(), chains)
        schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(
            SECURITY_SCHEMES
        )
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
