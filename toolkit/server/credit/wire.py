"""Wire forms of credit figures (human amounts, health factors, dates, ``UserCreditInfoFMT``)
and of call lists."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from starlette.responses import Response

from toolkit.credit import AccountFigures
from toolkit.resources import ContractCall, HexAddress, parse_value
from toolkit.server.params import json_response


def human(units: int, decimals: int) -> str:
    """Smallest units as an exact decimal string (``995000000`` → ``995.000000``)."""
    return f"{Decimal(units).scaleb(-decimals):f}"


def ratio(value: Fraction | None) -> str:
    """A health factor rounded down to 4 decimals; ``Infinity`` for None (no debt)."""
    if value is None:
        return "Infinity"
    return f"{Decimal(value.numerator * 10**4 // value.denominator).scaleb(-4):f}"


def iso(seconds: int | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def info_wire(f: AccountFigures, decimals: int) -> dict[str, Any]:
    """``UserCreditInfoFMT`` of an account's figures.

    >>> from toolkit.credit import figures
    >>> info_wire(figures({"usdc": 10**9}, principal=5 * 10**8, due_date=0), 6)["healthFactor"]
    '1.8500'
    """
    return {
        "debt": human(f.debt, decimals),
        "principal": human(f.principal, decimals),
        "interest": human(f.interest, decimals),
        "healthFactor": ratio(f.health_factor),
        "mHealthFactor": ratio(f.m_health_factor),
        "liquidationLimit": human(f.liquidation_limit, decimals),
        "totalCollateralValue": human(f.total_collateral_value, decimals),
        "totalCreditCapacity": human(f.total_credit_capacity, decimals),
        "remainingCreditCapacity": human(f.remaining_credit_capacity, decimals),
        "dueDate": iso(f.due_date),
    }


def checksum(address: str) -> str:
    out: str = parse_value(HexAddress, address, "address")
    return out


def calls_response(calls: list[ContractCall]) -> Response:
    return json_response({"calls": [c.to_wire() for c in calls]})
