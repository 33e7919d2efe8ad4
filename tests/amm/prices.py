"""The v3-core test suites' own ``encodePriceSqrt``, shared by the AMM tests."""

from __future__ import annotations

from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext


def encode_price_sqrt(reserve1: int, reserve0: int) -> int:
    """v3-core ``test/shared/utilities.ts`` ``encodePriceSqrt``, digit for digit.

    It runs on bignumber.js with ``DECIMAL_PLACES: 40`` (half-up): ``reserve1 / reserve0`` and
    its square root are each rounded to 40 decimals, then times ``2**96``, floored.
    """
    places = Decimal(1).scaleb(-40)
    with localcontext() as ctx:
        ctx.prec = 200
        ratio = (Decimal(reserve1) / Decimal(reserve0)).quantize(places, ROUND_HALF_UP)
        root = ratio.sqrt().quantize(places, ROUND_HALF_UP)
        return int((root * (1 << 96)).to_integral_value(ROUND_FLOOR))
