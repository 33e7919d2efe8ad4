"""The async client of the partner-intents and liquidity surfaces (same API, awaitable).

In a notebook, ``await client.rfq(...)`` at the top level. The examples here drive each
coroutine with ``run`` (an event loop's ``run_until_complete``), as plain doctests cannot await.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, TypeVar

import httpx

from toolkit.client import intents, liquidity
from toolkit.client import operations as ops
from toolkit.client.core import (
    DEFAULT_STREAM_TIMEOUT,
    AsyncLifecycle,
    AttemptHook,
    ClientCore,
    ClientSettings,
    Endpoint,
)
from toolkit.client.embedded import EmbeddedService
from toolkit.client.errors import InvalidResponse, ServiceError
from toolkit.client.events import StreamEvent
from toolkit.client.network import NetworkTransport
from toolkit.client.session import SSE_HEADERS, CallSession, StreamSession
from toolkit.client.sse import EventStreamDecoder
from toolkit.clock import Clock, sleep_async
from toolkit.resources import (
    BorrowAuthorization,
    BorrowQuote,
    FeeTier,
    Health,
    PoolLiquidity,
    Quote,
    SolverResponse,
    SupportedToken,
)
from toolkit.resources.retry import RetryPolicy
from toolkit.resources.types import PoolType, QuoteType
from toolkit.scenario.secret import Secret

__all__ = ["AsyncServiceClient"]

T = TypeVar("T")


class AsyncServiceClient(ClientSettings, AsyncLifecycle):
    """Async client for the partner-intents and liquidity surfaces.

    The target is ``base_url``, else ``embedded`` (an :class:`~toolkit.client.EmbeddedService`,
    or ``True`` for a new simulated one this client owns), else the configured
    :class:`~toolkit.client.Target` (``TOOLKIT_BASE_URL`` or a profile); with none of these it
    raises :class:`~toolkit.client.NoTarget` saying how to choose one: the simulator is never
    started unasked. ``api_key`` defaults to ``TOOLKIT_API_KEY`` (or the embedded scenario's key).
    Every HTTP attempt is reported to ``on_attempt`` as an :class:`~toolkit.client.Attempt`;
    ``retry`` is the :class:`~toolkit.client.RetryPolicy`; back-offs wait on ``clock`` (a
    :mod:`toolkit.clock` clock), which collectors on this client read and sleep on too. It
    defaults to the embedded service's clock (given a ``clock``, an embedded service this
    client starts runs on it), else the wall clock.

    >>> import asyncio
    >>> async def main() -> str:
    ...     async with AsyncServiceClient(embedded=True) as client:
    ...         return (await client.health()).status
    >>> asyncio.run(main())
    'ok'
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | Secret | None = None,
        protocol: str = ops.DEFAULT_PROTOCOL,
        timeout: httpx.Timeout | float | None = None,
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT,
        retry: RetryPolicy | None = None,
        on_attempt: AttemptHook | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        embedded: EmbeddedService | bool | None = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        target = Endpoint(
            base_url,
            transport_given=transport is not None,
            embedded=embedded,
            env=env,
            clock=clock,
        )
        try:
            self._core = ClientCore(
                target,
                api_key=api_key,
                protocol=protocol,
                timeout=timeout,
                stream_timeout=stream_timeout,
                retry=retry,
                on_attempt=on_attempt,
            )
            if target.embedded is not None:
                transport = target.embedded.async_transport()
            elif transport is None:
                # aiohttp's connection pool under the httpx API: httpcore's stalls when many
                # tasks share a client (encode/httpx#3215); bench/bench_client.py measures it.
                transport = NetworkTransport()
            self._http = httpx.AsyncClient(
                base_url=target.base_url, transport=transport, timeout=self._core.timeout
            )
        except BaseException:
            target.close()
            raise
        self.clock: Clock = target.clock

    # -- the engine ----------------------------------------------------------------------

    async def _send(self, op: ops.Operation[T]) -> tuple[int, T]:
        headers = self._core.headers(op)
        if op.parse_event is None:
            response = await self._http.request(
                op.method, op.path, params=op.params, json=op.json, headers=headers
            )
            if not response.is_success:
                raise ops.error_for(op, response, self._core.secret_text())
            assert op.parse is not None
            return response.status_code, op.parse(response)
        async with self._http.stream(
            op.method, op.path, params=op.params, json=op.json, headers={**headers, **SSE_HEADERS}
        ) as response:
            if not response.is_success:
                await response.aread()
                raise ops.error_for(op, response, self._core.secret_text())
            ops.check_event_stream(op, response)
            decoder = EventStreamDecoder()
            async for text in response.aiter_text():
                for event in decoder.feed(text):
                    value = op.parse_event(event)
                    if value is not None:
                        return response.status_code, value
        raise InvalidResponse(op.name, response.status_code, detail="the event stream ended empty")

    async def call(self, op: ops.Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op`` under the retry policy; return its value or raise a typed error."""
        session = CallSession(self._core, op, on_attempt)
        while True:
            session.start()
            try:
                status, value = await self._send(op)
            except httpx.TransportError as exc:
                error: ServiceError = self._core.transport_error(op.name, exc)
            except ServiceError as exc:
                error = exc
            else:
                session.succeeded(status)
                return value
            await sleep_async(self.clock, session.failed(error))

    # -- partner-intents -----------------------------------------------------------------

    async def rfq(
        self,
        *,
        src_chain: int | str,
        dst_chain: int | str,
        amount: int | str,
        token: str,
        user: str,
        src_token: str | None = None,
        receiver: str | None = None,
        type: QuoteType = "ExactInput",
        on_attempt: AttemptHook | None = None,
    ) -> Quote:
        """Request one quote (``GET /partner-intents/rfq``); chains as ids or CAIP-2.

        Raises :class:`NoCapacity` once the capacity budget is spent, :class:`BadRequest` for
        an unknown route or bad parameters, :class:`Unauthorized` for a bad key.

        >>> quote = run(client.rfq(src_chain=1, dst_chain=8453,
        ...                        amount=10**9, token=usdc_base, user=me))
        >>> quote.quote_id
        'qt_0_3'
        """
        op = intents.rfq(
            src_chain=src_chain,
            dst_chain=dst_chain,
            amount=amount,
            token=token,
            user=user,
            src_token=src_token,
            receiver=receiver,
            type=type,
        )
        return await self.call(op, on_attempt=on_attempt)

    async def transaction(self, quote: Quote, *, on_attempt: AttemptHook | None = None) -> Quote:
        """The quote with its unsigned escrow ``open()`` call (never retried).

        >>> run(client.transaction(quote)).transaction_request.to
        '0x000025c3226C00B2Cdc200005a1600509f4e00C0'
        """
        return await self.call(intents.transaction(quote), on_attempt=on_attempt)

    # -- liquidity -----------------------------------------------------------------------

    async def tokens(self, chain: int | str) -> dict[str, SupportedToken]:
        """Supported tokens of ``chain`` by symbol.

        >>> run(client.tokens(8453))["USDC"].decimals
        6
        """
        return await self.call(liquidity.tokens(chain))

    async def pool(self, pool_type: PoolType, chain: int | str, token_symbol: str) -> PoolLiquidity:
        """A pool's address and the balance available now.

        >>> run(client.pool("usdc", 8453, "USDC")).balance_int > 0
        True
        """
        return await self.call(liquidity.pool(pool_type, chain, token_symbol))

    async def fees(
        self, src_chain: int | str, dst_chain: int | str, src_token: str, dst_token: str
    ) -> list[FeeTier]:
        """Fee tiers of a route (:class:`NotFound` when it is not configured).

        >>> run(client.fees(1, 8453, "USDC", "USDC"))[0].fee_bps
        5.0
        """
        return await self.call(
            liquidity.fees(src_chain, dst_chain, src_token, dst_token, protocol=self.protocol)
        )

    async def solver(
        self,
        amount: int,
        source_chain: int | str,
        destination_chain: int | str,
        source_token: str,
        destination_token: str,
    ) -> SolverResponse:
        """The solver address and fill time for an amount in whole USD.

        >>> run(client.solver(1000, 1, 8453, "USDC", "USDC")).duration
        38
        """
        return await self.call(
            liquidity.solver(
                amount,
                source_chain,
                destination_chain,
                source_token,
                destination_token,
                protocol=self.protocol,
            )
        )

    async def health(self) -> Health:
        """``GET /health``.

        >>> run(client.health()).status
        'ok'
        """
        return await self.call(liquidity.health())

    async def borrow_quote(
        self,
        *,
        src_chain: int | str,
        dst_chain: int | str,
        amount: int | str,
        token: str,
        type: QuoteType = "ExactInput",
        exclusive: bool | None = None,
        pool: str | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> BorrowQuote:
        """A borrow quote; its ``id`` reserves liquidity for ``quoteDuration`` seconds.

        >>> q = run(client.borrow_quote(src_chain=1, dst_chain=8453,
        ...                             amount=10**8, token=usdc_base))
        >>> q.fee_bps
        5
        """
        op = liquidity.borrow_quote(
            src_chain=src_chain,
            dst_chain=dst_chain,
            amount=amount,
            token=token,
            type=type,
            exclusive=exclusive,
            pool=pool,
            protocol=self.protocol,
        )
        return await self.call(op, on_attempt=on_attempt)

    async def authorize(
        self,
        *,
        dst_chain: int | str,
        caller: str,
        input: str,
        quote_id: str,
        tx_hash: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> BorrowAuthorization:
        """A signed borrow authorization, read from the event named ``data`` (never retried).

        >>> auth = run(client.authorize(dst_chain=8453, caller=me,
        ...                             input="0x", quote_id=borrow.id, tx_hash=deposit))
        >>> auth.signature[:2]
        '0x'
        """
        op = liquidity.authorize(
            dst_chain=dst_chain,
            caller=caller,
            input=input,
            quote_id=quote_id,
            tx_hash=tx_hash,
            metadata=metadata,
            protocol=self.protocol,
        )
        return await self.call(op)

    async def liquidity_events(
        self,
        protocol: str | None = None,
        *,
        last_event_id: int | None = None,
        duration: float | None = None,
        on_attempt: AttemptHook | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Typed liquidity and fee events, reconnecting with ``Last-Event-ID`` after drops.

        Ends after ``duration`` seconds (None: never; stop by closing the iterator). Each
        connection is reported to ``on_attempt`` when it ends. Consecutive failed connections
        are bounded by the retry policy's ``error_retries``; 400/401 end it at once.

        >>> async def first_event() -> str:
        ...     async for event in client.liquidity_events(duration=5):
        ...         return event.event
        ...     return "none"
        >>> run(first_event())
        'liquidity'

        """
        op: ops.Operation[None] = ops.Operation(
            "liquidity_events",
            "GET",
            f"/liquidity/protocol/{ops.protocol_segment(protocol or self.protocol)}/events",
        )
        session = StreamSession(
            self._core, op, last_event_id=last_event_id, duration=duration, hook=on_attempt
        )
        while session.running():
            error: ServiceError | None
            try:
                async with self._http.stream("GET", op.path, **session.connect()) as response:
                    if not response.is_success:
                        await response.aread()
                    session.opened(response)
                    async for text in response.aiter_text():
                        for event in session.feed(text):
                            yield event
                        if session.expired():
                            break
                error = session.ended()
            except GeneratorExit:
                session.finish()
                raise
            except (httpx.TransportError, ServiceError) as exc:
                error = session.error(exc)
            if error is None:
                session.finish()
                return
            await sleep_async(self.clock, session.retry(error))
