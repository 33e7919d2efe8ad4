"""The clients traffic is sent through: built for an embedded service in-process or for one
served over HTTP (not a :class:`toolkit.client.Target`, which is the user's configuration of
every surface: this is the traffic's own set of retry-free clients on one service)."""

from __future__ import annotations

from web3 import Web3

from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient, SwapClient, chain_web3
from toolkit.clock import Clock
from toolkit.scenario import Secret

__all__ = ["TrafficClients"]


class TrafficClients:
    """Where traffic goes, and the one place its clients are built: an embedded service
    in-process, or one served at a base URL (``{base_url}``, ``{base_url}/swap`` and
    ``{base_url}/rpc/{chainId}``) with ``key``, which only the clients see."""

    def __init__(self, service: EmbeddedService | str, key: Secret | None, clock: Clock) -> None:
        self.embedded = service if isinstance(service, EmbeddedService) else None
        self.base_url = service.base_url if isinstance(service, EmbeddedService) else service
        self._key = key
        self.clock = clock

    def service(self) -> ServiceClient:
        """The main surface's client (no retries: a refusal is part of the market)."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return ServiceClient(embedded=self.embedded, clock=self.clock, retry=retry)
        return ServiceClient(
            self.base_url, api_key=self._key, env={}, clock=self.clock, retry=retry
        )

    def swap(self) -> SwapClient:
        """The swap surface's client."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return SwapClient(embedded=self.embedded, env={}, clock=self.clock, retry=retry)
        url = f"{self.base_url}/swap"
        return SwapClient(url, api_key=self._key, env={}, clock=self.clock, retry=retry)

    def chain(self, chain_id: int) -> Web3:
        """``Web3`` on chain ``chain_id`` of the service (no retries either: a node that does
        not answer is a service that went away)."""
        retry = RetryPolicy.no_retries()
        if self.embedded is not None:
            return chain_web3(chain_id, embedded=self.embedded, retry=retry)
        return chain_web3(chain_id, url=f"{self.base_url}/rpc/{chain_id}", retry=retry)
