"""A web3.py provider that speaks JSON-RPC over httpx: to any node, or in-process to the
embedded service's simulated chains (``POST /rpc/{chainId}``) with no socket.

>>> from web3 import Web3
>>> from toolkit.client import EmbeddedService
>>> service = EmbeddedService("single-pool", env={})
>>> w3 = Web3(chain_provider(service, 8453))
>>> w3.eth.chain_id
8453
>>> service.close()
"""

from __future__ import annotations

from typing import Any

import httpx
from web3.providers.base import JSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse

from toolkit.client.config import DEFAULT_TIMEOUT
from toolkit.client.embedded import EmbeddedService

__all__ = ["ChainProvider", "chain_provider"]


class ChainProvider(JSONBaseProvider):
    """JSON-RPC over one ``httpx.Client`` (pass ``transport`` for an in-process app).

    The URL is the node's JSON-RPC endpoint (for the embedded service
    ``{base_url}/rpc/{chainId}``); batches go as one JSON array.
    """

    def __init__(
        self,
        url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.url = url
        self._client = httpx.Client(transport=transport, timeout=timeout)

    def _post(self, body: bytes) -> Any:
        response = self._client.post(
            self.url, content=body, headers={"Content-Type": "application/json"}
        )
        response.raise_for_status()
        return self.decode_rpc_response(response.content)

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        answer: RPCResponse = self._post(self.encode_rpc_request(method, params))
        return answer

    def make_batch_request(
        self, requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        answer = self._post(self.encode_batch_rpc_request(requests))
        if isinstance(answer, list):
            return sorted(answer, key=lambda item: item.get("id") or 0)
        result: RPCResponse = answer
        return result

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def __repr__(self) -> str:
        return f"ChainProvider({self.url!r})"


def chain_provider(service: EmbeddedService, chain_id: int) -> ChainProvider:
    """A provider for chain ``chain_id`` of an embedded service, in-process."""
    return ChainProvider(f"{service.base_url}/rpc/{chain_id}", transport=service.sync_transport())
