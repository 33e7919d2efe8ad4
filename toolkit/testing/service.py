"""An embedded service under a virtual clock, for deterministic tests and regression notebooks."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.arguments import whole
from toolkit.clock import VirtualClock
from toolkit.errors import ChainError

if TYPE_CHECKING:
    import httpx
    import polars as pl

    from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient
    from toolkit.client.asgi import ASGIApp
    from toolkit.resources import Quote
    from toolkit.scenario import Scenario

__all__ = ["Harness", "RpcFailure", "embedded_service"]


class RpcFailure(ChainError, AssertionError):
    """A JSON-RPC error answered to :meth:`Harness.rpc`: ``code``, ``message`` and ``data``."""

    def __init__(self, method: str, chain_id: int, error: dict[str, Any]) -> None:
        self.chain_id = chain_id
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")
        detail = f" (data {self.data})" if self.data is not None else ""
        super().__init__(f"{method} on chain {chain_id}: {self.code} {self.message}{detail}")


@dataclass(frozen=True)
class Harness:
    """What :func:`embedded_service` yields: the client, its clock, the app and the scenario.

    - ``client``: a :class:`toolkit.client.ServiceClient` on the in-process app (no socket),
      with the scenario's API key, a retry policy seeded with the harness seed and the
      harness clock (a retry back-off takes virtual time, not wall time);
    - ``clock``: the :class:`VirtualClock` the app reads; move it with ``clock.advance``;
    - ``app``: the ASGI app of :func:`toolkit.server.create_app`;
    - ``embedded``: the :class:`toolkit.client.EmbeddedService` wrapping the app (for a web3.py
      ``Web3`` on a chain: ``Web3(toolkit.client.chain_provider(svc.embedded, chain_id))``);
    - ``http``: a plain ``httpx.Client`` on the same transport, for the JSON-RPC endpoints
      ``/rpc/{chainId}`` and the read-only ``/sim/orders``, which the client does not wrap.

    The chains are driven through standard JSON-RPC, as any Ethereum tool would:
    :meth:`broadcast` sends a built quote's transaction from a development account
    (``eth_sendTransaction``) and mines it, :meth:`advance` moves the service's time
    (``evm_increaseTime``: the filler fills and settles what falls due), :meth:`mine` produces
    a chain's next block (``evm_mine``), :meth:`pools` reads every pool contract's views
    (``eth_call``), :meth:`rpc` calls any method. :meth:`now` is the service's time: the clock
    plus what ``evm_increaseTime`` added.
    """

    client: ServiceClient
    clock: VirtualClock
    app: ASGIApp
    embedded: EmbeddedService
    http: httpx.Client
    scenario: Scenario

    def now(self) -> float:
        """The service's time: ``clock()`` plus the offset the development namespace moved."""
        now: float = self.app.state.service.now()  # type: ignore[attr-defined]
        return now

    def rpc(self, chain_id: int, method: str, *params: Any) -> Any:
        """Call JSON-RPC ``method`` on chain ``chain_id``; its result.

        A JSON-RPC error raises :class:`RpcFailure` (an AssertionError with the code, the
        message and the revert data).

        >>> with embedded_service("single-pool") as svc:
        ...     svc.rpc(8453, "eth_chainId")
        '0x2105'
        """
        chain_id = whole(chain_id, "chain_id", minimum=1)
        if not isinstance(method, str) or not method:
            raise ValueError(f"method: must be a JSON-RPC method name, got {method!r}")
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
        response = self.http.post(f"/rpc/{chain_id}", json=request)
        if response.is_error:
            raise AssertionError(
                f"POST /rpc/{chain_id}: HTTP {response.status_code}: {response.text}"
            )
        body = response.json()
        if "error" in body:
            raise RpcFailure(method, chain_id, body["error"])
        return body["result"]

    def advance(self, seconds: float) -> float:
        """Move the service's time ``seconds`` on through JSON-RPC (``evm_increaseTime``); the
        new :meth:`now`.

        Every timer moves with it (reservations, blocks, the filler): what falls due by then
        is done before this returns (the escrow's ``Open`` events reach the engine, due orders
        are filled, proven and finalised, each transaction pooled for its chain's next block
        and acted on once mined).
        """
        whole(seconds, "seconds", minimum=0)
        self.rpc(self.scenario.chains[0].id, "evm_increaseTime", int(seconds))
        return self.now()

    def mine(self, chain_id: int) -> float:
        """Mine chain ``chain_id``'s next block now (``evm_mine``: the service's time moves to
        that block's slot, and what falls due by then is done); the new :meth:`now`."""
        self.rpc(chain_id, "evm_mine")
        return self.now()

    def sim(self, method: str, path: str, json: Any = None) -> Any:
        """Call a ``/sim`` endpoint and return its JSON body; an error status raises.

        ``path`` is relative to ``/sim`` (``"orders/0x..."``).
        """
        if not isinstance(path, str) or not path or path.startswith(("/", "http")):
            raise ValueError(
                f"path: must be a path under /sim such as 'orders/0x...', got {path!r}"
            )
        response = self.http.request(method, f"/sim/{path}", json=json)
        if response.is_error:
            raise AssertionError(
                f"{method} /sim/{path}: HTTP {response.status_code}: {response.text}"
            )
        return response.json()

    def order(self, order_id: str) -> Any:
        """The escrowed order ``order_id`` and the reservation held under its id
        (``GET /sim/orders/{orderId}``); ``status`` is ``Built`` before it is opened on chain."""
        return self.sim("GET", f"orders/{order_id}")

    def order_id(self, built: Quote) -> str:
        """The escrow order id of a quote returned by the transaction endpoint.

        It is what the reservation is re-keyed to, and the ``{orderId}`` of ``/sim/orders``.
        """
        from toolkit.codecs.escrow import decode_open, order_id

        request = getattr(built, "transaction_request", None)
        if request is None:
            raise ValueError("built: must be a quote returned by client.transaction()")
        return order_id(decode_open(request.data), request.to)

    def broadcast(self, built: Quote, *, account: int = 0) -> Any:
        """Send a built quote's transaction on its origin chain, as a wallet would, and mine it.

        Development account ``account`` (``eth_accounts``, funded with every token) approves
        the escrow for the order's inputs when its allowance is short (``eth_sendTransaction``,
        mined in a block of its own), then sends the ``transactionRequest`` (its ``to``,
        ``data`` and ``value``; the escrow pulls the inputs from the sender, the order's user
        gets any refund) and mines it (``evm_mine``): the escrow's ``Open`` event reaches the
        engine. Returns the escrowed order (``GET /sim/orders``) with the ``txHash``. A
        transaction the escrow would refuse raises :class:`RpcFailure` (``execution reverted``,
        the custom error's selector as data) and changes nothing.
        """
        from toolkit.codecs.escrow import decode_open, token_address
        from toolkit.codecs.functions import encode_call
        from toolkit.world.evm.accounts import dev_accounts

        request = getattr(built, "transaction_request", None)
        if request is None:
            raise ValueError("built: must be a quote returned by client.transaction()")
        accounts = dev_accounts(self.scenario)
        whole(account, "account", minimum=0)
        if account >= len(accounts):
            raise ValueError(f"account: must be below {len(accounts)}, got {account}")
        sender = accounts[account].address
        chain = request.chain_id
        approvals = 0
        for token, amount in decode_open(request.data).inputs:
            address = token_address(token)
            call = {"to": address, "data": encode_call("erc20.allowance", sender, request.to)}
            if int(self.rpc(chain, "eth_call", call), 16) < amount:
                data = encode_call("erc20.approve", request.to, 2**256 - 1)
                self.rpc(
                    chain, "eth_sendTransaction", {"from": sender, "to": address, "data": data}
                )
                approvals += 1
        if approvals:
            self.mine(chain)
        transaction = {"from": sender, "to": request.to, "data": request.data}
        transaction["value"] = hex(request.value_int)
        tx_hash = self.rpc(chain, "eth_sendTransaction", transaction)
        self.mine(chain)
        receipt = self.rpc(chain, "eth_getTransactionReceipt", tx_hash)
        if receipt is None or receipt["status"] != "0x1":
            raise AssertionError(f"the escrow's open() was not mined with success: {receipt}")
        body = self.order(self.order_id(built))
        body["txHash"] = tx_hash
        return body

    def pools(self) -> pl.DataFrame:
        """Every pool's figures now, one row per pool in scenario order (amounts exact), read
        over JSON-RPC from the pool contracts (``eth_call`` of ``balance``, ``reserved``,
        ``outstanding``, ``available``; one batch per chain).

        Columns: ``pool``, ``chain``, ``token``, ``pool_type``, ``balance``, ``reserved``,
        ``outstanding``, ``available`` (Int128, smallest units).
        """
        import polars as pl

        from toolkit.codecs.functions import encode_call

        amounts = ("balance", "reserved", "outstanding", "available")
        pools = self.scenario.pools
        figures: dict[tuple[str, str], int] = {}
        for chain in dict.fromkeys(pool.chain for pool in pools):
            asked = [(pool, name) for pool in pools if pool.chain == chain for name in amounts]
            batch = [
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "eth_call",
                    "params": [
                        {
                            "to": pool.address,
                            "data": encode_call(
                                f"pool.{name}", self.scenario.token(chain, pool.token).address
                            ),
                        },
                        "latest",
                    ],
                }
                for i, (pool, name) in enumerate(asked)
            ]
            response = self.http.post(f"/rpc/{chain}", json=batch)
            answers = sorted(response.json(), key=lambda answer: answer["id"])
            for (pool, name), answer in zip(asked, answers, strict=True):
                if "error" in answer or answer["result"] == "0x":
                    error = answer.get("error", {"message": "no pool contract at the address"})
                    raise RpcFailure(f"eth_call pool.{name} of {pool.id}", chain, error)
                figures[pool.id, name] = int(answer["result"], 16)
        return pl.DataFrame(
            {
                "pool": [p.id for p in pools],
                "chain": [p.chain for p in pools],
                "token": [p.token for p in pools],
                "pool_type": [p.type for p in pools],
                **{
                    name: pl.Series([figures[p.id, name] for p in pools], dtype=pl.Int128)
                    for name in amounts
                },
            },
            schema_overrides={"chain": pl.Int64},
        )


def _scenario(scenario: object) -> Scenario:
    from toolkit.scenario import Scenario, read_scenario

    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str | os.PathLike):
        # read_scenario ignores TOOLKIT_API_KEY / TOOLKIT_SIGNER_KEY: a test harness must not
        # change behaviour with the caller's environment.
        return read_scenario(scenario)
    raise TypeError(
        f"scenario: must be a scenario name, a path or a Scenario, got {type(scenario).__name__}"
    )


@contextmanager
def embedded_service(
    scenario: Scenario | str | os.PathLike[str] = "default",
    *,
    seed: int = 0,
    clock: VirtualClock | None = None,
    retry: RetryPolicy | None = None,
) -> Iterator[Harness]:
    """An embedded service on a virtual clock, with a client; everything repeats run to run.

    The app is :func:`toolkit.server.create_app` for ``scenario`` (a scenario name, a path or
    a loaded Scenario, read without environment overrides) with
    ``clock`` (a new :class:`VirtualClock` at its default start when None) and ``seed``. Quote
    ids and order nonces come from the engine's counters, the scenario and ``seed``, so the same
    calls give the same ids. ``retry`` is the client's retry policy; by default the client's
    usual policy with its jitter seeded by ``seed`` (``RetryPolicy.no_retries()`` makes every
    404 reach the caller). The service and client close on exit.

    >>> with embedded_service("single-pool") as svc:
    ...     usdc = svc.scenario.token(8453, "USDC").address
    ...     quote = svc.client.rfq(src_chain=1, dst_chain=8453, amount=10**9, token=usdc,
    ...                            user="0x" + "11" * 20, type="ExactOutput")
    ...     reserved = svc.pools()["reserved"].to_list()
    ...     lapsed = svc.clock.advance(15)
    ...     quote.valid_until == lapsed, reserved, svc.pools()["reserved"].to_list()
    (True, [1000000000], [0])
    """
    import httpx

    from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient
    from toolkit.server import create_app

    whole(seed, "seed", minimum=0)
    if retry is None:
        retry = RetryPolicy(rng=random.Random(seed))
    elif not isinstance(retry, RetryPolicy):
        raise TypeError(f"retry: must be a RetryPolicy or None, got {type(retry).__name__}")
    if clock is None:
        clock = VirtualClock()
    elif not isinstance(clock, VirtualClock):
        raise TypeError(f"clock: must be a VirtualClock or None, got {type(clock).__name__}")
    loaded = _scenario(scenario)
    app = create_app(loaded, clock=clock, seed=seed)
    key = loaded.auth.api_keys[0] if loaded.auth.api_keys else None
    embedded = EmbeddedService(app=app, api_key=key, clock=clock)
    try:
        client = ServiceClient(embedded=embedded, api_key=key, retry=retry, env={})
        try:
            http = httpx.Client(base_url=embedded.base_url, transport=embedded.sync_transport())
            try:
                yield Harness(client, clock, app, embedded, http, loaded)
            finally:
                http.close()
        finally:
            client.close()
    finally:
        embedded.close()
