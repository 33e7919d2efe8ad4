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

if TYPE_CHECKING:
    import httpx
    import polars as pl

    from toolkit.client import EmbeddedService, RetryPolicy, ServiceClient
    from toolkit.client.asgi import ASGIApp
    from toolkit.resources import Quote
    from toolkit.scenario import Scenario

__all__ = ["Harness", "embedded_service"]


@dataclass(frozen=True)
class Harness:
    """What :func:`embedded_service` yields: the client, its clock, the app and the scenario.

    - ``client``: a :class:`toolkit.client.ServiceClient` on the in-process app (no socket),
      with the scenario's API key, a retry policy seeded with the harness seed and the
      harness clock (a retry back-off takes virtual time, not wall time);
    - ``clock``: the :class:`VirtualClock` the app reads; move it with ``advance``;
    - ``app``: the ASGI app of :func:`toolkit.server.create_app`;
    - ``embedded``: the :class:`toolkit.client.EmbeddedService` wrapping the app;
    - ``http``: a plain ``httpx.Client`` on the same transport, for the ``/sim`` endpoints
      that stand in for the chains (broadcast, fill, settle), which the client does not wrap.
    """

    client: ServiceClient
    clock: VirtualClock
    app: ASGIApp
    embedded: EmbeddedService
    http: httpx.Client
    scenario: Scenario

    def sim(self, method: str, path: str, json: Any = None) -> Any:
        """Call a ``/sim`` endpoint and return its JSON body; an error status raises.

        ``path`` is relative to ``/sim`` (``"broadcast"``, ``"fill/0x..."``, ``"pools"``).
        """
        if not isinstance(path, str) or not path or path.startswith(("/", "http")):
            raise ValueError(f"path: must be a path under /sim such as 'pools', got {path!r}")
        response = self.http.request(method, f"/sim/{path}", json=json)
        if response.is_error:
            raise AssertionError(
                f"{method} /sim/{path}: HTTP {response.status_code}: {response.text}"
            )
        return response.json()

    def order_id(self, built: Quote) -> str:
        """The escrow order id of a quote returned by the transaction endpoint.

        It is what the reservation is re-keyed to, and the ``{orderId}`` of ``/sim/orders``.
        """
        from toolkit.codecs.escrow import decode_open, order_id

        request = getattr(built, "transaction_request", None)
        if request is None:
            raise ValueError("built: must be a quote returned by client.transaction()")
        return order_id(decode_open(request.data), request.to)

    def broadcast(self, built: Quote) -> Any:
        """Send a built quote's transaction to the simulated origin chain (``/sim/broadcast``).

        Returns the escrowed order (``orderId``, ``status``, ``fillDeadline``, ...).
        """
        request = getattr(built, "transaction_request", None)
        if request is None:
            raise ValueError("built: must be a quote returned by client.transaction()")
        return self.sim("POST", "broadcast", json=request.model_dump(by_alias=True, mode="json"))

    def pools(self) -> pl.DataFrame:
        """Every pool's figures now, one row per pool in scenario order (amounts exact).

        Columns: ``pool``, ``chain``, ``token``, ``pool_type``, ``balance``, ``reserved``,
        ``outstanding``, ``available`` (Int128, smallest units).
        """
        import polars as pl

        rows = self.sim("GET", "pools")["data"]
        amounts = ("balance", "reserved", "outstanding", "available")
        return pl.DataFrame(
            {
                "pool": [r["id"] for r in rows],
                "chain": [int(r["chain"].split(":", 1)[1]) for r in rows],
                "token": [r["token"] for r in rows],
                "pool_type": [r["poolType"] for r in rows],
                **{
                    name: pl.Series([int(r[name]) for r in rows], dtype=pl.Int128)
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
