"""Queries of the transaction-building credit endpoints (each answers with ``Calls``)."""

from __future__ import annotations

from pydantic import model_validator

from toolkit.resources.base import Query, RuleError
from toolkit.resources.types import (
    Amount,
    DigitString,
    Flag,
    HexAddress,
    NonEmptyStr,
    PositiveAmount,
)

__all__ = [
    "AutoTopUpQuery",
    "DrawQuery",
    "EnableQuery",
    "LockQuery",
    "LockQueryV1",
    "ReceiverQuery",
    "RepayQuery",
    "UnlockQuery",
    "UnlockQueryV1",
]


class LockQuery(Query):
    """``.../lock``: deposit ``amount`` of ``earnAsset``; ``earn`` wraps into that strategy."""

    amount: PositiveAmount
    earn_asset: HexAddress
    earn: NonEmptyStr | None = None


class UnlockQuery(Query):
    """``.../unlock``: withdraw ``amount`` of ``collateral``; ``unwrap`` adds the unwrap call."""

    amount: PositiveAmount
    collateral: HexAddress
    unwrap: Flag | None = None


class DrawQuery(Query):
    """``.../draw``: draw ``amount`` (smallest units) of credit to ``receiver``.

    >>> DrawQuery(amount="1000000", receiver="0x" + "11" * 20).amount_int
    1000000
    """

    amount: PositiveAmount
    receiver: HexAddress

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)


class RepayQuery(Query):
    """``.../repay``: repay ``amount`` (smallest units)."""

    amount: PositiveAmount

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)


class AutoTopUpQuery(Query):
    """``.../auto-topup/enable`` and ``/update``; ``healthFactor`` in basis points.

    >>> from toolkit.resources import parse_query
    >>> parse_query(AutoTopUpQuery, {"receiver": "0x" + "11" * 20, "threshold": "10",
    ...                              "targetBalance": "5"})
    Traceback (most recent call last):
    ...
    toolkit.resources.errors.InvalidInput: targetBalance: must be at least threshold
    """

    receiver: HexAddress
    threshold: Amount
    target_balance: Amount
    health_factor: DigitString | None = None

    @model_validator(mode="after")
    def _target_at_least_threshold(self) -> AutoTopUpQuery:
        if int(self.target_balance) < int(self.threshold):
            raise RuleError(("targetBalance",), "must be at least threshold")
        return self


class ReceiverQuery(Query):
    """``.../auto-topup/disable`` and ``/config``: the receiver concerned."""

    receiver: HexAddress


class LockQueryV1(Query):
    """v1 ``/credit/accounts/{account}/lock``: ``asset`` is the collateral's address or symbol."""

    amount: PositiveAmount
    asset: NonEmptyStr
    earn: NonEmptyStr | None = None


class UnlockQueryV1(Query):
    """v1 ``/credit/accounts/{account}/unlock``: ``asset`` is the collateral's address or symbol."""

    amount: PositiveAmount
    asset: NonEmptyStr
    unwrap: Flag | None = None


class EnableQuery(Query):
    """v1 ``.../operator/auto-topup/enable``: ``receiver``, and optionally the top-up settings
    (``threshold`` and ``targetBalance`` together, ``healthFactor`` in basis points).

    >>> from toolkit.resources import parse_query
    >>> parse_query(EnableQuery, {"receiver": "0x" + "11" * 20, "threshold": "10"})
    Traceback (most recent call last):
    ...
    toolkit.resources.errors.InvalidInput: targetBalance: is required with threshold
    """

    receiver: HexAddress
    threshold: Amount | None = None
    target_balance: Amount | None = None
    health_factor: DigitString | None = None

    @model_validator(mode="after")
    def _settings_together(self) -> EnableQuery:
        if self.threshold is not None and self.target_balance is None:
            raise RuleError(("targetBalance",), "is required with threshold")
        if self.target_balance is not None and self.threshold is None:
            raise RuleError(("threshold",), "is required with targetBalance")
        if (
            self.threshold is not None
            and self.target_balance is not None
            and int(self.target_balance) < int(self.threshold)
        ):
            raise RuleError(("targetBalance",), "must be at least threshold")
        return self
