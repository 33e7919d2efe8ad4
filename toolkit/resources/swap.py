"""Swap API resources: the route query and the route result."""

from __future__ import annotations

from typing import Annotated

from pydantic import model_validator

from toolkit.resources.base import Query, Resource, RuleError
from toolkit.resources.types import Amount, HexAddress, HexData, Int, RequestId, Uint64, between

__all__ = ["RouteQuery", "RouteResult"]


class RouteQuery(Query):
    """Query of ``GET {swap_url}/{network}/v1/route``; the zero address is the native coin.

    >>> q = RouteQuery(amount_in="100", token_in="0x" + "00" * 20, token_out="0x" + "11" * 20)
    >>> q.slippage_bps
    50
    """

    amount_in: Amount
    token_in: HexAddress
    token_out: HexAddress
    slippage_bps: Annotated[Int, between(0, 10_000)] = 50
    timeout: Annotated[Int, between(1, 2**31 - 1)] | None = None

    @property
    def amount_in_int(self) -> int:
        """``amountIn`` as an integer."""
        return int(self.amount_in)


class RouteResult(Resource):
    """A swap route: send ``callData`` to ``target``; ``gasLimit`` is ``gasUsed`` × 1.3."""

    request_id: RequestId
    amount_out: Amount
    min_amount_out: Amount
    target: HexAddress
    call_data: HexData
    gas_used: Uint64
    gas_limit: Uint64

    @model_validator(mode="after")
    def _minimum_within_output(self) -> RouteResult:
        if int(self.min_amount_out) > int(self.amount_out):
            raise RuleError(("minAmountOut",), "must not exceed amountOut")
        return self

    @property
    def amount_out_int(self) -> int:
        """``amountOut`` as an integer."""
        return int(self.amount_out)

    @property
    def min_amount_out_int(self) -> int:
        """``minAmountOut`` as an integer."""
        return int(self.min_amount_out)
