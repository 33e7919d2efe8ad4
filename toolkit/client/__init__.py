"""httpx clients for the partner-intents and liquidity surfaces, sync and async (and, in
:mod:`toolkit.client.swap`, for the swap API).

The same code talks to the real service (``base_url`` + ``api_key``, or the one
:class:`Target` configuration: ``TOOLKIT_BASE_URL`` + ``TOOLKIT_API_KEY`` and the other
surfaces' variables, or a profile) and, when named (``embedded=True``), to the simulated
embedded service in-process (no socket). Nothing configured is :class:`NoTarget`. Methods
return :mod:`toolkit.resources` models and raise typed errors (:class:`ServiceError` and its
subclasses). The retry policy (:class:`RetryPolicy`) is explicit and every HTTP attempt is
reported to an ``on_attempt`` hook as an :class:`Attempt`, which is how the collectors record
every attempt. The API key is held in a ``Secret`` and never appears in a repr, log line or
error message.

>>> from toolkit.client import ServiceClient, RetryPolicy
>>> import httpx
>>> def handler(request):
...     return httpx.Response(200, json={"status": "ok"})
>>> client = ServiceClient("https://service.example", api_key="k-123",
...                        transport=httpx.MockTransport(handler))
>>> client.health().status
'ok'
>>> "k-123" in repr(client)
False
"""

from toolkit.client.aio import AsyncServiceClient
from toolkit.client.asgi import StreamingASGITransport
from toolkit.client.asgi_sync import SyncASGITransport
from toolkit.client.cards import ServiceCardBackend, run_cards
from toolkit.client.chain import (
    RPC_URL_ENV,
    AsyncChainProvider,
    ChainProvider,
    async_chain_web3,
    chain_provider,
    chain_web3,
    rpc_url,
)
from toolkit.client.config import API_KEY_ENV, BASE_URL_ENV, DEFAULT_TIMEOUT
from toolkit.client.connect import Connection
from toolkit.client.credit import AsyncCreditClient, CreditClient, execute_calls
from toolkit.client.embedded import EmbeddedService
from toolkit.client.errors import (
    BadRequest,
    GarbledResponse,
    InvalidResponse,
    NoCapacity,
    NotFound,
    ServerError,
    ServiceError,
    TransportError,
    Unauthorized,
)
from toolkit.client.events import StreamEvent
from toolkit.client.operations import DEFAULT_PROTOCOL
from toolkit.client.retry import Attempt
from toolkit.client.swap import AsyncSwapClient, SwapClient
from toolkit.client.sync import ServiceClient
from toolkit.client.target import NoTarget, Target, TargetError
from toolkit.client.webhook import Delivery, Webhook
from toolkit.resources.retry import RetryPolicy

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_PROTOCOL",
    "DEFAULT_TIMEOUT",
    "RPC_URL_ENV",
    "AsyncChainProvider",
    "AsyncCreditClient",
    "AsyncServiceClient",
    "AsyncSwapClient",
    "Attempt",
    "BadRequest",
    "ChainProvider",
    "Connection",
    "CreditClient",
    "Delivery",
    "EmbeddedService",
    "GarbledResponse",
    "InvalidResponse",
    "NoCapacity",
    "NoTarget",
    "NotFound",
    "RetryPolicy",
    "ServerError",
    "ServiceCardBackend",
    "ServiceClient",
    "ServiceError",
    "StreamEvent",
    "StreamingASGITransport",
    "SwapClient",
    "SyncASGITransport",
    "Target",
    "TargetError",
    "TransportError",
    "Unauthorized",
    "Webhook",
    "async_chain_web3",
    "chain_provider",
    "chain_web3",
    "execute_calls",
    "rpc_url",
    "run_cards",
]
