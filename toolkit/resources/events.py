"""Payloads of the liquidity event stream (``event: liquidity`` and ``event: fee``)."""

from __future__ import annotations

from toolkit.resources.base import Resource
from toolkit.resources.codecs import parse_caip2
from toolkit.resources.liquidity import FeeTier
from toolkit.resources.types import Amount, Caip2, HexAddress, NonEmptyStr, PoolType

__all__ = ["FeeEvent", "LiquidityEvent"]


class LiquidityEvent(Resource):
    """A pool's liquidity changed: ``balance`` is available now; ``reserved`` is held by live
    reservations; ``outstanding`` is lent and awaiting repayment.

    >>> e = LiquidityEvent(chain="eip155:8453", token="USDC", pool_type="usdc",
    ...     address="0x" + "11" * 20, balance="10", reserved="2", outstanding="0",
    ...     reason="reservation_created")
    >>> e.to_wire()["poolType"], e.chain_id
    ('usdc', 8453)
    """

    chain: Caip2
    token: NonEmptyStr
    pool_type: PoolType
    address: HexAddress
    balance: Amount
    reserved: Amount
    outstanding: Amount
    reason: NonEmptyStr

    @property
    def chain_id(self) -> int:
        """``chain`` as a chain id."""
        return parse_caip2(self.chain)


class FeeEvent(Resource):
    """A route's fee tiers changed."""

    src_chain: Caip2
    dst_chain: Caip2
    token: NonEmptyStr
    tiers: list[FeeTier]
