"""Liquidity API resources: discovery (tokens, pools, fees, solver, health), borrow quotes and
borrow authorizations."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, model_validator

from toolkit.resources.base import Query, Resource, RuleError
from toolkit.resources.codecs import parse_caip2
from toolkit.resources.types import (
    Amount,
    Caip2,
    FlagText,
    Hash32,
    HexAddress,
    HexData,
    Int,
    NonEmptyStr,
    NonNegativeInt,
    Number,
    PositiveAmount,
    PositiveInt,
    at_least,
    between,
)

__all__ = [
    "BorrowAuthorization",
    "BorrowQuote",
    "BorrowQuoteQuery",
    "BorrowQuoteResponse",
    "FeeTier",
    "FeesQuery",
    "FeesResponse",
    "Health",
    "PoolLiquidity",
    "PoolLiquidityResponse",
    "PoolsQuery",
    "SignatureBody",
    "SignatureMetadata",
    "SignatureResponse",
    "SolverQuery",
    "SolverResponse",
    "SupportedToken",
    "TokensResponse",
]


class SupportedToken(Resource):
    """A supported token: address and decimals."""

    address: HexAddress
    decimals: Annotated[Int, between(0, 255)]


class TokensResponse(Resource):
    """``GET /liquidity/chain/{chainId}/tokens``: ``{data: {SYMBOL: SupportedToken}}``.

    >>> r = TokensResponse(data={"USDC": SupportedToken(address="0x" + "11" * 20, decimals=6)})
    >>> r.to_wire()["data"]["USDC"]["decimals"]
    6
    """

    data: dict[NonEmptyStr, SupportedToken]


class PoolsQuery(Query):
    """Query of ``GET /liquidity/pools/{poolType}``."""

    chain: Caip2
    token_symbol: NonEmptyStr

    @property
    def chain_id(self) -> int:
        """``chain`` as a chain id."""
        return parse_caip2(self.chain)


class PoolLiquidity(Resource):
    """A pool's address and the balance available now."""

    address: HexAddress
    balance: Amount

    @property
    def balance_int(self) -> int:
        """``balance`` as an integer."""
        return int(self.balance)


class PoolLiquidityResponse(Resource):
    """``{data: PoolLiquidity}``."""

    data: PoolLiquidity


class FeesQuery(Query):
    """Query of ``GET /liquidity/protocol/{protocol}/fees`` (tokens by symbol or address)."""

    src_chain: Caip2
    dst_chain: Caip2
    src_token: NonEmptyStr
    dst_token: NonEmptyStr


class FeeTier(Resource):
    """One fee tier: ``feeBps`` applies to amounts from ``minAmount`` to ``maxAmount``.

    >>> FeeTier(fee_bps=5, min_amount=0, max_amount=100_000_000_000).to_wire()
    {'feeBps': 5.0, 'minAmount': 0, 'maxAmount': 100000000000}
    """

    fee_bps: Annotated[Number, at_least(0)]
    min_amount: NonNegativeInt
    max_amount: NonNegativeInt

    @model_validator(mode="after")
    def _ordered(self) -> FeeTier:
        if self.max_amount < self.min_amount:
            raise RuleError(("maxAmount",), "must be at least minAmount")
        return self


class FeesResponse(Resource):
    """``{data: [FeeTier]}``."""

    data: list[FeeTier]


class SolverQuery(Query):
    """Query of ``GET /protocol/{protocol}/solver``; ``amount`` is in whole USD."""

    amount: NonNegativeInt
    source_chain_id: Caip2
    destination_chain_id: Caip2
    source_token: NonEmptyStr
    destination_token: NonEmptyStr


class SolverResponse(Resource):
    """``{solver, duration}``: the solver's address and its fill time in seconds."""

    solver: HexAddress
    duration: NonNegativeInt


class Health(Resource):
    """``GET /health``: ``{status}``."""

    status: NonEmptyStr


class BorrowQuoteQuery(Query):
    """Query of the borrow quote endpoint (``srcChain``, protocol and type are path segments).

    >>> q = BorrowQuoteQuery(dst_chain="eip155:10", amount="5", token="0x" + "11" * 20,
    ...                      exclusive="true")
    >>> q.to_wire()["exclusive"]
    'true'
    """

    dst_chain: Caip2
    amount: PositiveAmount
    token: HexAddress
    exclusive: FlagText | None = None
    pool: HexAddress | None = None

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)


class BorrowQuote(Resource):
    """A borrow quote; ``id`` names the liquidity reservation it holds."""

    borrow_cost: Amount
    duration: NonNegativeInt
    estimated_fill_duration: NonNegativeInt
    fee_bps: NonNegativeInt
    id: NonEmptyStr | None = None
    liquidity_pool: HexAddress
    quote_duration: NonNegativeInt
    repayment_chain: PositiveInt
    repayment_recipient: HexAddress
    required_input: Amount
    required_output: Amount

    @property
    def borrow_cost_int(self) -> int:
        """``borrowCost`` as an integer."""
        return int(self.borrow_cost)

    @property
    def required_input_int(self) -> int:
        """``requiredInput`` as an integer."""
        return int(self.required_input)

    @property
    def required_output_int(self) -> int:
        """``requiredOutput`` as an integer."""
        return int(self.required_output)


class BorrowQuoteResponse(Resource):
    """``{data: BorrowQuote}``."""

    data: BorrowQuote


class SignatureMetadata(Resource):
    """Protocol-specific metadata; for ``partner-escrow`` the origin chain ``srcChain``.

    Other protocols' members are kept as they came.
    """

    model_config = ConfigDict(extra="allow")

    src_chain: Caip2 | None = None


class SignatureBody(Resource):
    """Body of the borrow signature request.

    >>> body = SignatureBody(caller="0x" + "11" * 20, input="0x", quote_id="q1",
    ...                      tx_hash="0x" + "ab" * 32, metadata={"srcChain": "eip155:1"})
    >>> body.to_wire()["metadata"]
    {'srcChain': 'eip155:1'}
    """

    caller: HexAddress
    input: HexData
    quote_id: NonEmptyStr
    tx_hash: Hash32
    metadata: SignatureMetadata | None = None


class BorrowAuthorization(Resource):
    """A signed borrow authorization for ``LiquidityPool.borrow``."""

    borrow_amount: Amount
    borrow_cost: Amount
    borrow_token: HexAddress
    liquidity_pool: HexAddress
    nonce: Amount
    signature: HexData
    deadline: Amount | None = None

    @property
    def borrow_amount_int(self) -> int:
        """``borrowAmount`` as an integer."""
        return int(self.borrow_amount)


class SignatureResponse(Resource):
    """``{data: BorrowAuthorization}``, the payload of the SSE event named ``data``."""

    data: BorrowAuthorization
