"""The embedded service: the partner-intents and liquidity surfaces of the interface over HTTP.

:func:`create_app` builds a FastAPI app around one reservation engine (:mod:`toolkit.engine`)
and a scenario (:mod:`toolkit.scenario`); ``toolkit serve`` runs it with uvicorn on 127.0.0.1.
Responses follow the spec and validate against the vendor's OpenAPI document; errors are
``{error, debug?}`` with the spec's status codes. ``/rpc/{chainId}`` and ``/sim/...`` (tag
``simulation``) are not part of the interface: the simulated chains behind standard Ethereum
JSON-RPC (a whole flow runs on them: the user's transactions, the filler's fills, time; the
pools are contracts whose views read the engine), and the engine's record of an order, which no
chain holds.

In-process use goes through ``httpx.ASGITransport``; the endless event stream needs a socket,
which :func:`serve_in_thread` provides on a free loopback port.

>>> import asyncio, httpx
>>> from toolkit.scenario import load_scenario
>>> from toolkit.server import create_app
>>> from toolkit.clock import VirtualClock
>>> app = create_app(load_scenario("default"), clock=VirtualClock())
>>> async def rfq():
...     transport = httpx.ASGITransport(app=app)
...     async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
...         answer = await client.get("/partner-intents/rfq", headers={"X-Auth-Token": "demo-key"},
...             params={"srcChain": "eip155:1", "dstChain": "eip155:8453", "amount": "1000000000",
...                     "token": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
...                     "user": "0x" + "11" * 20})
...         return answer.json()["quotes"][0]["validUntil"]
>>> asyncio.run(rfq())
1760000015
"""

from toolkit.server.app import create_app
from toolkit.server.errors import ApiError
from toolkit.server.loopback import serve_in_thread
from toolkit.server.service import PROTOCOL, Service

__all__ = ["PROTOCOL", "ApiError", "Service", "create_app", "serve_in_thread"]
