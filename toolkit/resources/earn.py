"""Earn-vault queries and results: wrap, unwrap and claim."""

from __future__ import annotations

from typing import Annotated

from pydantic import model_validator

from toolkit.resources.base import Query, Resource, RuleError
from toolkit.resources.calls import ContractCall
from toolkit.resources.types import (
    Amount,
    Caip2,
    HexAddress,
    NonEmptyStr,
    Number,
    PositiveAmount,
    between,
)

__all__ = ["ClaimQuery", "UnwrapQuery", "UnwrapResult", "WrapQuery", "WrapResult"]


class WrapQuery(Query):
    """``GET /credit/earn/wrap``: deposit ``amount`` of ``token`` into an earn vault."""

    account: HexAddress
    amount: PositiveAmount
    token: HexAddress
    earn: NonEmptyStr | None = None
    chain: Caip2


class WrapResult(Resource):
    """Estimated shares, the approve + deposit calls and the share token."""

    amount_out: Amount
    calls: list[ContractCall]
    token_out: HexAddress


class UnwrapQuery(Query):
    """``GET /credit/earn/unwrap``; ``slippage`` is a percentage (0.5 means 0.5 %).

    >>> from toolkit.resources import parse_query
    >>> a = "0x" + "11" * 20
    >>> parse_query(UnwrapQuery, {"owner": a, "receiver": a, "amount": "1", "asset": a,
    ...                           "chain": "eip155:8453", "slippage": "101"})
    Traceback (most recent call last):
    ...
    toolkit.resources.errors.InvalidInput: slippage: must be between 0 and 100
    """

    owner: HexAddress
    receiver: HexAddress
    amount: PositiveAmount
    asset: HexAddress
    chain: Caip2
    slippage: Annotated[Number, between(0, 100)] = 0.3


class UnwrapResult(Resource):
    """Estimated and minimum output, the token received and the calls."""

    amount_out: Amount
    min_amount_out: Amount
    token_out: HexAddress
    calls: list[ContractCall]

    @model_validator(mode="after")
    def _minimum_within_output(self) -> UnwrapResult:
        if int(self.min_amount_out) > int(self.amount_out):
            raise RuleError(("minAmountOut",), "must not exceed amountOut")
        return self


class ClaimQuery(Query):
    """``GET /credit/earn/claim``: claim a settled asynchronous withdrawal request."""

    owner: HexAddress
    receiver: HexAddress
    asset: HexAddress
    chain: Caip2
    claim_request_id: NonEmptyStr
