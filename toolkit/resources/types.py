"""Reusable field types: amounts, addresses, hex, chain ids and the interface's enumerations.

Each type checks its rule and raises a ``ValueError`` whose text is the rule in plain words
(``must be a string of digits``); :func:`toolkit.resources.parse` prefixes the wire field path.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from eth_utils import to_checksum_address
from pydantic import AfterValidator, BeforeValidator, PlainSerializer, WithJsonSchema

from toolkit.resources.codecs import decode_interop, parse_caip2

__all__ = [
    "MAX_UINT256",
    "Amount",
    "Caip2",
    "CreditAsset",
    "DateTimeText",
    "DecimalText",
    "DigitString",
    "Flag",
    "FlagText",
    "Hash32",
    "HealthFactorText",
    "HexAddress",
    "HexData",
    "HexQuantity",
    "Int",
    "InteropAddress",
    "NonEmptyStr",
    "NonNegativeInt",
    "Number",
    "PoolType",
    "PositiveAmount",
    "PositiveInt",
    "QuantityText",
    "QuoteType",
    "RequestId",
    "SwapNetwork",
    "Uint32",
    "Uint64",
    "at_least",
    "between",
]

MAX_UINT256: Final = 2**256 - 1

QuoteType = Literal["ExactInput", "ExactOutput"]
CreditAsset = Literal["usdc", "eure"]
PoolType = Literal["aave", "aave_v2", "usdc", "usdc_v2", "aave_long_term", "aave_long_term_v2"]
SwapNetwork = Literal["mainnet", "base"]

_DIGITS_RE: Final = re.compile(r"[0-9]+")
_INT_RE: Final = re.compile(r"-?[0-9]+")
_DECIMAL_RE: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NUMBER_RE: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_ADDRESS_RE: Final = re.compile(r"0x[0-9a-fA-F]{40}")
_HEX_DATA_RE: Final = re.compile(r"0x(?:[0-9a-fA-F]{2})*")
_QUANTITY_RE: Final = re.compile(r"0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)")
_QUANTITY_TEXT_RE: Final = re.compile(r"[0-9]+|0x[0-9a-fA-F]+")
_HASH32_RE: Final = re.compile(r"0x[0-9a-fA-F]{64}")
_REQUEST_ID_RE: Final = re.compile(r"0x[0-9a-fA-F]{32}")


def _digit_string(value: object) -> str:
    if not isinstance(value, str) or _DIGITS_RE.fullmatch(value) is None:
        raise ValueError("must be a string of digits")
    return value


def _amount(value: object) -> str:
    text = _digit_string(value)
    if int(text) > MAX_UINT256:
        raise ValueError("must be less than 2**256")
    return text


def _positive_amount(value: object) -> str:
    text = _amount(value)
    if int(text) == 0:
        raise ValueError("must be greater than 0")
    return text


def _hex_address(value: object) -> str:
    if not isinstance(value, str) or _ADDRESS_RE.fullmatch(value) is None:
        raise ValueError("must be a 0x-prefixed 20-byte hex address")
    # Stored checksummed so that equality between models ignores the input's case.
    return str(to_checksum_address(value))


def _hex_data(value: object) -> str:
    if not isinstance(value, str) or _HEX_DATA_RE.fullmatch(value) is None:
        raise ValueError("must be 0x-prefixed hex with an even number of digits")
    return value.lower()


def _hex_quantity(value: object) -> str:
    if not isinstance(value, str) or _QUANTITY_RE.fullmatch(value) is None:
        raise ValueError("must be a 0x-prefixed hex number without leading zeros, e.g. 0x0")
    if int(value, 16) > MAX_UINT256:
        raise ValueError("must be less than 2**256")
    return value.lower()


def _quantity_text(value: object) -> str:
    if not isinstance(value, str) or _QUANTITY_TEXT_RE.fullmatch(value) is None:
        raise ValueError("must be an integer as decimal digits or 0x-prefixed hex")
    if int(value, 0 if value.startswith("0x") else 10) > MAX_UINT256:
        raise ValueError("must be less than 2**256")
    return value


def _hash32(value: object) -> str:
    if not isinstance(value, str) or _HASH32_RE.fullmatch(value) is None:
        raise ValueError("must be 0x followed by 64 hex digits")
    return value.lower()


def _request_id(value: object) -> str:
    if not isinstance(value, str) or _REQUEST_ID_RE.fullmatch(value) is None:
        raise ValueError("must be 0x followed by 32 hex digits")
    return value


def _caip2(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a CAIP-2 string like eip155:8453")
    parse_caip2(value)
    return value


def _interop_address(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be an ERC-7930 interoperable address (0x-prefixed hex)")
    decode_interop(value)
    return value.lower()


def _decimal_text(value: object) -> str:
    if not isinstance(value, str) or _DECIMAL_RE.fullmatch(value) is None:
        raise ValueError("must be a decimal number in a string, e.g. 12.34")
    return value


def _health_factor_text(value: object) -> str:
    if value == "Infinity":
        return value
    if not isinstance(value, str) or _DECIMAL_RE.fullmatch(value) is None:
        raise ValueError("must be a decimal number in a string, e.g. 1.25, or Infinity")
    return value


def _date_time_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date-time string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 date-time string") from None
    if parsed.tzinfo is None:
        raise ValueError("must be an ISO 8601 date-time with a time zone")
    return value


def _non_empty(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _int(value: object) -> int:
    # Query values arrive as text; JSON numbers arrive as int. Floats and bools are refused.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT_RE.fullmatch(value) is not None:
        return int(value)
    raise ValueError("must be an integer")


def _number(value: object) -> float:
    is_text_number = isinstance(value, str) and _NUMBER_RE.fullmatch(value) is not None
    if isinstance(value, bool) or not (isinstance(value, int | float) or is_text_number):
        raise ValueError("must be a number")
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise ValueError("must be a finite number")
    return number


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError("must be true or false")


def between(low: int | float, high: int | float) -> AfterValidator:
    """A validator for ``low <= value <= high`` with the rule ``must be between low and high``
    (and ``minimum``/``maximum`` in the JSON schema).

    >>> from typing import Annotated
    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(Annotated[Int, between(0, 10)]).validate_python("7")
    7
    >>> TypeAdapter(Annotated[Int, between(0, 10)]).json_schema()
    {'maximum': 10, 'minimum': 0, 'type': 'integer'}
    """

    def check(value: Any) -> Any:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}")
        return value

    return _Bounded(check, bounds={"minimum": low, "maximum": high})


class _Bounded(AfterValidator):
    """An ``AfterValidator`` that also states its bounds in the JSON schema."""

    def __init__(self, func: Any, bounds: dict[str, int | float]) -> None:
        super().__init__(func)
        object.__setattr__(self, "_bounds", bounds)

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        schema.update(self._bounds)  # type: ignore[attr-defined]
        return schema


def at_least(low: int | float) -> AfterValidator:
    """A validator for ``value >= low`` with the rule ``must be at least low``.

    >>> from typing import Annotated
    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(Annotated[Int, at_least(1)]).validate_python(3)
    3
    """

    def check(value: Any) -> Any:
        if value < low:
            raise ValueError(f"must be at least {low}")
        return value

    return _Bounded(check, bounds={"minimum": low})


def _string_schema(pattern: str | None = None, **extra: Any) -> WithJsonSchema:
    schema: dict[str, Any] = {"type": "string", **extra}
    if pattern is not None:
        schema["pattern"] = pattern
    return WithJsonSchema(schema)


DigitString = Annotated[str, BeforeValidator(_digit_string), _string_schema("^[0-9]+$")]
"""A string of decimal digits (basis points, nonces, scores)."""

# At most 77 digits in the document: every such number is below 2**256 (~1.16e77).
Amount = Annotated[str, BeforeValidator(_amount), _string_schema("^0*[0-9]{1,77}$")]
"""An amount in the smallest denomination: a string of digits below 2**256."""

PositiveAmount = Annotated[
    str, BeforeValidator(_positive_amount), _string_schema("^0*[1-9][0-9]{0,76}$")
]
"""An :data:`Amount` greater than zero (requested amounts)."""

HexAddress = Annotated[str, BeforeValidator(_hex_address), _string_schema("^0x[a-fA-F0-9]{40}$")]
"""A 20-byte hex address; any case in, EIP-55 checksummed out."""

HexData = Annotated[str, BeforeValidator(_hex_data), _string_schema("^0x([0-9a-fA-F]{2})*$")]
"""Whole bytes as ``0x`` hex (calldata, signatures); stored lowercase."""

HexQuantity = Annotated[
    str, BeforeValidator(_hex_quantity), _string_schema("^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$")
]
"""A JSON-RPC style hex number such as ``0x0`` (native value of a transaction)."""

QuantityText = Annotated[str, BeforeValidator(_quantity_text), _string_schema()]
"""An integer written as decimal digits or ``0x`` hex (gas price and limit)."""

Hash32 = Annotated[str, BeforeValidator(_hash32), _string_schema("^0x[0-9a-fA-F]{64}$")]
"""A 32-byte hash (transaction hash) as ``0x`` hex; stored lowercase."""

RequestId = Annotated[str, BeforeValidator(_request_id), _string_schema("^0x[a-fA-F0-9]{32}$")]
"""A 16-byte swap request id as ``0x`` hex."""

Caip2 = Annotated[str, BeforeValidator(_caip2), _string_schema("^eip155:[1-9][0-9]*$")]
"""A CAIP-2 chain id of the eip155 namespace, e.g. ``eip155:8453``."""

InteropAddress = Annotated[
    str, BeforeValidator(_interop_address), _string_schema("^0x([0-9a-fA-F]{2})+$")
]
"""An ERC-7930 v1 interoperable address as hex; stored lowercase."""

DecimalText = Annotated[str, BeforeValidator(_decimal_text), _string_schema(r"^[0-9]+(\.[0-9]+)?$")]
"""A non-negative decimal number in a string (human units), e.g. ``750.25``."""

HealthFactorText = Annotated[str, BeforeValidator(_health_factor_text), _string_schema()]
"""A :data:`DecimalText` or ``Infinity`` (no debt)."""

DateTimeText = Annotated[str, BeforeValidator(_date_time_text), _string_schema(format="date-time")]
"""An ISO 8601 date-time with a time zone, e.g. ``2025-07-15T23:59:59Z``."""

NonEmptyStr = Annotated[str, BeforeValidator(_non_empty), _string_schema(r"\S")]
"""A string that is not blank."""

Int = Annotated[int, BeforeValidator(_int)]
"""An integer, from a JSON number or from query text of digits."""

NonNegativeInt = Annotated[Int, at_least(0)]
PositiveInt = Annotated[Int, at_least(1)]
Uint32 = Annotated[Int, between(0, 2**32 - 1)]
Uint64 = Annotated[Int, between(0, 2**64 - 1)]

Number = Annotated[float, BeforeValidator(_number)]
"""A finite number, from a JSON number or from query text."""

Flag = Annotated[bool, BeforeValidator(_flag)]
"""A boolean, from JSON or from the query text ``true``/``false``."""

FlagText = Annotated[
    bool,
    BeforeValidator(_flag),
    PlainSerializer(lambda value: "true" if value else "false", return_type=str),
    WithJsonSchema({"type": "string", "enum": ["true", "false"]}),
]
"""A boolean whose wire form is the string ``"true"`` or ``"false"``."""
