"""Every surface's client from one :class:`~toolkit.client.Target`, as namespaces of one object.

:class:`Connection` opens the target once: on the embedded target one in-process service is
started and shared by every surface; on a served or real target each surface uses its own URL
and credentials, and a surface the target lacks raises (naming its variable) when first used,
never falling back to the simulator.

>>> from toolkit.client import Target
>>> with Connection(Target.simulated()) as conn:
...     conn.service.health().status, conn.chain(8453).eth.chain_id, conn.kind
('ok', 8453, 'embedded')
"""

from __future__ import annotations

from typing import Any

from web3 import Web3

from toolkit.client.chain import chain_web3
from toolkit.client.closing import Closing
from toolkit.client.credit import CreditClient
from toolkit.client.embedded import EmbeddedService
from toolkit.client.swap import SwapClient
from toolkit.client.sync import ServiceClient
from toolkit.client.target import Target
from toolkit.clock import Clock
from toolkit.resources.retry import RetryPolicy

__all__ = ["Connection"]


class Connection(Closing):
    """The surfaces of ``target``: :attr:`service` (intents and liquidity), :attr:`swap`,
    :attr:`credit` and :meth:`chain` (web3.py per chain id), built on first use. ``clock``
    is the embedded service's clock (embedded target) or the clients' (others); ``retry``
    the policy of every surface's client, chains included (one policy: its ``max_rps`` is
    shared by all of them)."""

    def __init__(
        self, target: Target, *, clock: Clock | None = None, retry: RetryPolicy | None = None
    ) -> None:
        if not isinstance(target, Target):
            raise ValueError("target: must be a toolkit.client.Target")
        self.target = target
        self._clock = clock
        self._retry = retry
        self.embedded: EmbeddedService | None = None
        if target.embedded:
            options: dict[str, Any] = {} if clock is None else {"clock": clock}
            self.embedded = EmbeddedService(target.scenario, **options)
        self._service: ServiceClient | None = None
        self._swap: SwapClient | None = None
        self._credit: CreditClient | None = None
        self._credit_client: ServiceClient | None = None
        self._chains: dict[int, Web3] = {}

    @property
    def kind(self) -> str:
        """``embedded``, ``served`` or ``real`` (:attr:`Target.kind`)."""
        return self.target.kind

    def _client(self, url: str | None) -> ServiceClient:
        if self.embedded is not None:
            return ServiceClient(embedded=self.embedded, clock=self._clock, retry=self._retry)
        key = self.target.api_key
        return ServiceClient(url, api_key=key, clock=self._clock, retry=self._retry, env={})

    @property
    def service(self) -> ServiceClient:
        """The partner-intents and liquidity client (``TOOLKIT_BASE_URL``)."""
        if self._service is None:
            url = None if self.embedded is not None else self.target.require("service")
            self._service = self._client(url)
        return self._service

    @property
    def swap(self) -> SwapClient:
        """The swap API client (``TOOLKIT_SWAP_URL`` and its credentials)."""
        if self._swap is None:
            if self.embedded is not None:
                self._swap = SwapClient(
                    embedded=self.embedded, clock=self._clock, retry=self._retry, env={}
                )
            else:
                self._swap = SwapClient(
                    self.target.require("swap"),
                    username=self.target.swap_username,
                    api_key=self.target.swap_api_key,
                    clock=self._clock,
                    retry=self._retry,
                    env={},
                )
        return self._swap

    @property
    def credit_service(self) -> ServiceClient:
        """The client the credit surface is read through: the main one, or one on
        ``TOOLKIT_CREDIT_URL`` where it differs."""
        if self.embedded is not None or self.target.credit_url is None:
            if self.target.credit_url is None and self.embedded is None:
                self.target.require("credit")  # no URL at all: the error names the variable
            return self.service
        if self._credit_client is None:
            self._credit_client = self._client(self.target.require("credit"))
        return self._credit_client

    @property
    def credit(self) -> CreditClient:
        """The credit client (``TOOLKIT_CREDIT_URL``, else the main interface's URL)."""
        if self._credit is None:
            self._credit = CreditClient(self.credit_service)
        return self._credit

    def chain(self, chain_id: int) -> Web3:
        """web3.py on ``chain_id`` (``TOOLKIT_RPC_URL_<chainId>``, or the embedded chain)."""
        if chain_id not in self._chains:
            # One policy for every surface: its retry budget, and its max_rps shared by all.
            options: dict[str, Any] = {} if self._retry is None else {"retry": self._retry}
            if self.embedded is not None:
                self._chains[chain_id] = chain_web3(chain_id, embedded=self.embedded, **options)
            else:
                url = self.target.rpc(chain_id)
                self._chains[chain_id] = chain_web3(chain_id, url=url, **options)
        return self._chains[chain_id]

    def close(self) -> None:
        """Close every client built, then the embedded service."""
        for client in (self._service, self._swap, self._credit_client):
            if client is not None:
                client.close()
        for w3 in self._chains.values():
            w3.provider.close()  # type: ignore[attr-defined]
        if self.embedded is not None:
            self.embedded.close()

    def __repr__(self) -> str:
        return f"Connection({self.target!r})"
