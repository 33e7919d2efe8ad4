"""The field types of a scenario document, each declaring its rule once in the words errors use.

A TOML document and an already built part (a :class:`~toolkit.scenario.model.Pool`, say) are
checked by the same declared models (:mod:`toolkit.scenario.document`): the document as parsed,
the part through its attributes. Every type here rejects ``bool`` where it wants a number (TOML
``true`` is never a count). Amounts may be strings of digits: TOML integers stop at 2**63, and
1000 WETH in wei does not fit. Decimal figures (USD) may be strings or numbers.

>>> from pydantic import TypeAdapter
>>> TypeAdapter(PositiveAmount).validate_python("123456789012345678901234567890")
123456789012345678901234567890
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Final, TypeVar

from pydantic import AfterValidator, PlainValidator, TypeAdapter, ValidationError, ValidationInfo

from toolkit.resources.declared import choice_rule, integer_rule, text_rule
from toolkit.scenario.address import check_private_key, checksum
from toolkit.scenario.errors import ScenarioError, scenario_error
from toolkit.scenario.model import POOL_TYPES

__all__ = [
    "Address",
    "Amount",
    "BlockTime",
    "Count",
    "Decimals",
    "FeeBps",
    "Name",
    "NonEmptyText",
    "NonNegativeDecimal",
    "PoolType",
    "Positive",
    "PositiveAmount",
    "PositiveDecimal",
    "PrivateKey",
    "Symbol",
    "TickerSymbol",
    "at_least_one",
    "check",
]

T = TypeVar("T")

_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_SYMBOL: Final = re.compile(r"^[A-Z][A-Z0-9.]{0,15}$")
_DECIMAL: Final = "must be a decimal number (string or number)"


def check(schema: TypeAdapter[T], data: object, under: str = "", *, stored: bool = False) -> T:
    """Validate ``data`` (a TOML table or a built part) by ``schema``; the first fault raises
    :class:`ScenarioError` naming its key path below ``under``. ``stored``: addresses must be
    in the EIP-55 form a parsed scenario keeps (a TOML file may spell them in lower case)."""
    try:
        return schema.validate_python(data, context={"stored": stored})
    except ValidationError as error:
        fault: ScenarioError = scenario_error(error, under)
    # Raised outside the handler, so no traceback chains pydantic's error, which holds the input.
    raise fault


def _decimal(rule: str, accept: Callable[[Decimal], bool]) -> Any:
    def decimal(value: object) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
            raise ValueError(_DECIMAL)
        try:
            # str() first so that a TOML float 0.05 becomes Decimal("0.05"), not its binary value.
            result = value if isinstance(value, Decimal) else Decimal(str(value))
        except InvalidOperation:
            raise ValueError(_DECIMAL) from None
        if not result.is_finite() or not accept(result):
            raise ValueError(rule)
        return result

    return PlainValidator(decimal)


def _matching(pattern: re.Pattern[str], rule: str) -> Any:
    def matching(value: object) -> str:
        if not isinstance(value, str) or not pattern.match(value):
            raise ValueError(rule)
        return value

    return PlainValidator(matching)


def _address(value: object, info: ValidationInfo) -> str:
    try:
        result = checksum(value, "")
    except ScenarioError as error:
        raise ValueError(error.rule) from None
    if info.context and info.context.get("stored") and result != value:
        raise ValueError("must be stored in EIP-55 checksummed form")
    return result


def _private_key(value: object) -> str:
    try:
        return check_private_key(value, "")
    except ScenarioError as error:
        raise ValueError(error.rule) from None  # the rule only: never the key


def _block_time(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of seconds > 0")
    if not 0 < value <= 3600:
        raise ValueError("must be a number of seconds > 0 and <= 3600")
    return float(value)


def at_least_one(what: str) -> Any:
    """A rule on an array: it holds at least one ``what``."""

    def nonempty(value: tuple[Any, ...]) -> tuple[Any, ...]:
        if not value:
            raise ValueError(f"must hold at least one {what}")
        return value

    return AfterValidator(nonempty)


#: A count: 0 or more (seconds, basis points without a ceiling).
Count = Annotated[int, integer_rule("must be a non-negative integer")]
#: 1 or more (chain ids, windows).
Positive = Annotated[int, integer_rule("must be a positive integer", 1)]
#: An amount in smallest units, 0 or more: an integer or a string of digits.
Amount = Annotated[int, integer_rule("must be a non-negative integer", strings=True)]
#: An amount in smallest units, 1 or more: an integer or a string of digits.
PositiveAmount = Annotated[int, integer_rule("must be a positive integer", 1, strings=True)]
#: A fee or a threshold in basis points below 100 %.
FeeBps = Annotated[int, integer_rule("must be an integer from 0 to 9999", 0, 9999)]
#: A token's decimals.
Decimals = Annotated[int, integer_rule("must be an integer from 0 to 36", 0, 36)]
#: A USD figure of 0 or more.
NonNegativeDecimal = Annotated[
    Decimal, _decimal("must be a non-negative decimal", lambda d: d >= 0)
]
#: A USD price: above 0.
PositiveDecimal = Annotated[Decimal, _decimal("must be a positive decimal", lambda d: d > 0)]
#: A block time in seconds: above 0, at most one hour.
BlockTime = Annotated[float, PlainValidator(_block_time)]
#: A 20-byte hex address, kept in its EIP-55 form (all-lower or all-upper carries no checksum).
Address = Annotated[str, PlainValidator(_address)]
#: A secp256k1 private key as 0x + 64 hex digits; errors never echo it.
PrivateKey = Annotated[str, PlainValidator(_private_key)]
#: A scenario or chain name.
Name = Annotated[str, _matching(_NAME, "must be a lower-case name (letters, digits, - and _)")]
#: A token symbol of the intents surface.
Symbol = Annotated[str, _matching(_SYMBOL, "must be an upper-case symbol such as USDC")]
#: A collateral's display symbol (``yoBTC``): ASCII letters and digits.
TickerSymbol = Annotated[
    str, _matching(re.compile(r"^[A-Za-z0-9]+$"), "must be an ASCII letters-and-digits symbol")
]
#: One of the liquidity API's pool types.
PoolType = Annotated[str, choice_rule(f"must be one of {', '.join(POOL_TYPES)}", *POOL_TYPES)]
#: A string with something in it.
NonEmptyText = Annotated[str, text_rule("must be a non-empty string", empty=False)]
