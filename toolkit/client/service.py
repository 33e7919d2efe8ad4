"""The partner-intents and liquidity endpoints, defined once for :class:`ServiceClient` and
:class:`AsyncServiceClient` (:mod:`toolkit.client.endpoints`): each method builds its request
from :mod:`toolkit.client.intents` or :mod:`toolkit.client.liquidity`; the sync client returns
the value, the async one the coroutine to await (``await client.rfq(...)``).

The examples use the sync client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.client import intents, liquidity
from toolkit.client.core import ClientSettings
from toolkit.client.endpoints import Call, endpoint
from toolkit.client.operations import Operation
from toolkit.client.retry import AttemptHook
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
from toolkit.resources.types import PoolType, QuoteType

__all__ = ["ServiceEndpoints"]


class ServiceEndpoints(ClientSettings):
    """The endpoints both service clients have (module docstring)."""

    # -- partner-intents -----------------------------------------------------------------

    @endpoint
    def rfq(
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
    ) -> Call[Quote]:
        """Request one quote (``GET /partner-intents/rfq``); chains as ids or CAIP-2.

        Raises :class:`NoCapacity` once the capacity budget is spent, :class:`BadRequest` for
        an unknown route or bad parameters, :class:`Unauthorized` for a bad key.

        >>> client.rfq(src_chain=1, dst_chain=8453, amount=10**9,
        ...            token=usdc_base, user=me).quote_id
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
        return Call(op, on_attempt)

    @endpoint
    def transaction(self, quote: Quote, *, on_attempt: AttemptHook | None = None) -> Call[Quote]:
        """The quote with its unsigned escrow ``open()`` call (never retried).

        >>> client.transaction(quote).transaction_request.to
        '0x000025c3226C00B2Cdc200005a1600509f4e00C0'
        """
        return Call(intents.transaction(quote), on_attempt)

    # -- liquidity -----------------------------------------------------------------------

    @endpoint
    def tokens(self, chain: int | str) -> Operation[dict[str, SupportedToken]]:
        """Supported tokens of ``chain`` by symbol.

        >>> client.tokens(8453)["USDC"].decimals
        6
        """
        return liquidity.tokens(chain)

    @endpoint
    def pool(
        self, pool_type: PoolType, chain: int | str, token_symbol: str
    ) -> Operation[PoolLiquidity]:
        """A pool's address and the balance available now.

        >>> client.pool("usdc", 8453, "USDC").balance_int > 0
        True
        """
        return liquidity.pool(pool_type, chain, token_symbol)

    @endpoint
    def fees(
        self, src_chain: int | str, dst_chain: int | str, src_token: str, dst_token: str
    ) -> Operation[list[FeeTier]]:
        """Fee tiers of a route (:class:`NotFound` when it is not configured).

        >>> client.fees(1, 8453, "USDC", "USDC")[0].fee_bps
        5.0
        """
        return liquidity.fees(src_chain, dst_chain, src_token, dst_token, protocol=self.protocol)

    @endpoint
    def solver(
        self,
        amount: int,
        source_chain: int | str,
        destination_chain: int | str,
        source_token: str,
        destination_token: str,
    ) -> Operation[SolverResponse]:
        """The solver address and fill time for an amount in whole USD.

        >>> client.solver(1000, 1, 8453, "USDC", "USDC").duration
        38
        """
        return liquidity.solver(
            amount,
            source_chain,
            destination_chain,
            source_token,
            destination_token,
            protocol=self.protocol,
        )

    @endpoint
    def health(self) -> Operation[Health]:
        """``GET /health``.

        >>> client.health().status
        'ok'
        """
        return liquidity.health()

    @endpoint
    def borrow_quote(
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
    ) -> Call[BorrowQuote]:
        """A borrow quote; its ``id`` reserves liquidity for ``quoteDuration`` seconds.

        >>> client.borrow_quote(src_chain=1, dst_chain=8453, amount=10**8,
        ...                     token=usdc_base).fee_bps
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
        return Call(op, on_attempt)

    @endpoint
    def authorize(
        self,
        *,
        dst_chain: int | str,
        caller: str,
        input: str,
        quote_id: str,
        tx_hash: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> Operation[BorrowAuthorization]:
        """A signed borrow authorization, read from the event named ``data`` (never retried).

        >>> client.authorize(dst_chain=8453, caller=me, input="0x",
        ...                  quote_id=borrow.id, tx_hash=deposit).signature[:2]
        '0x'
        """
        return liquidity.authorize(
            dst_chain=dst_chain,
            caller=caller,
            input=input,
            quote_id=quote_id,
            tx_hash=tx_hash,
            metadata=metadata,
            protocol=self.protocol,
        )
