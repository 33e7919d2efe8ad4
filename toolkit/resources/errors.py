"""Bad input as one exception that names the wire field and the rule it breaks."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from toolkit.errors import InputError
from toolkit.resources.base import RuleError

__all__ = ["FieldError", "InvalidInput", "field_errors", "parse", "parse_query", "parse_value"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class FieldError(NamedTuple):
    """One broken rule: the wire field path (``preview.inputs[0].amount``) and the rule."""

    field: str
    rule: str


class InvalidInput(InputError):
    """Malformed input. The message is ``"<field>: <rule>"`` for the first problem found.

    >>> str(InvalidInput("amount", "must be a string of digits"))
    'amount: must be a string of digits'
    """

    field: str
    rule: str

    def __init__(self, field: str, rule: str, errors: tuple[FieldError, ...] = ()) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule
        self.errors: tuple[FieldError, ...] = errors or (FieldError(field, rule),)


def parse(model_cls: type[ModelT], data: Any, *, root: str = "body") -> ModelT:
    """Validate wire data (a mapping, or JSON text/bytes) into ``model_cls``.

    Raises :class:`InvalidInput` naming the wire field path; ``root`` names the whole input.

    >>> from toolkit.resources import ErrorBody
    >>> parse(ErrorBody, {"error": "no route"}).error
    'no route'
    """
    try:
        if isinstance(data, str | bytes | bytearray):
            try:
                loaded = json.loads(data)
            except (ValueError, UnicodeDecodeError):
                raise InvalidInput(root, "must be valid JSON") from None
        else:
            loaded = data
        # Wire data uses wire names only: a snake_case key is an unknown field, not an alias.
        return model_cls.model_validate(loaded, by_alias=True, by_name=False)
    except ValidationError as error:
        raise _invalid(error, root=root, unknown="is not a known field") from None


def parse_query(model_cls: type[ModelT], params: Mapping[str, str]) -> ModelT:
    """Validate query parameters (every value a string) into ``model_cls``.

    >>> from toolkit.resources import RouteQuery
    >>> q = parse_query(RouteQuery, {"amountIn": "100", "slippageBps": "50",
    ...     "tokenIn": "0x" + "11" * 20, "tokenOut": "0x" + "22" * 20})
    >>> q.slippage_bps
    50
    """
    if not isinstance(params, Mapping):
        raise InvalidInput("query", "must be a mapping of parameter names to strings")
    for name, value in params.items():
        if not isinstance(value, str):
            raise InvalidInput(str(name), "must be a string")
    try:
        return model_cls.model_validate(dict(params), by_alias=True, by_name=False)
    except ValidationError as error:
        raise _invalid(error, root="query", unknown="is not a known parameter") from None


def parse_value(type_: Any, value: Any, field: str) -> Any:
    """Validate one value (a path parameter, say) against a field type such as ``Caip2``.

    >>> from toolkit.resources import Caip2
    >>> parse_value(Caip2, "eip155:8453", "srcChain")
    'eip155:8453'
    """
    try:
        return _adapter(type_).validate_python(value)
    except ValidationError as error:
        raise _invalid(error, root=field, unknown="is not a known field") from None


def _adapter(type_: Any) -> TypeAdapter[Any]:
    # Building an adapter compiles a validator; path parameters are checked on every request.
    try:
        return _cached_adapter(type_)
    except TypeError:  # an unhashable type expression
        return TypeAdapter(type_)


@functools.lru_cache(maxsize=256)
def _cached_adapter(type_: Any) -> TypeAdapter[Any]:
    return TypeAdapter(type_)


def field_errors(
    error: ValidationError, *, root: str, unknown: str, terms: Mapping[str, str] | None = None
) -> tuple[FieldError, ...]:
    """Every problem of ``error`` as a field path and a rule, in pydantic's order.

    ``root`` names the whole input, ``unknown`` is the rule of an unknown key, and ``terms``
    replaces the rule of a pydantic error type (a TOML document says "must be a table" where the
    wire says "must be an object").

    >>> from toolkit.resources import ErrorBody
    >>> try:
    ...     ErrorBody.model_validate({"error": 5})
    ... except ValidationError as error:
    ...     field_errors(error, root="body", unknown="unknown key")
    (FieldError(field='error', rule='must be a string'),)
    """
    return tuple(_field_error(d, root, unknown, terms or {}) for d in error.errors())


def _invalid(error: ValidationError, *, root: str, unknown: str) -> InvalidInput:
    found = field_errors(error, root=root, unknown=unknown)
    first = found[0]
    return InvalidInput(first.field, first.rule, found)


def _field_error(
    detail: ErrorDetails, root: str, unknown: str, terms: Mapping[str, str]
) -> FieldError:
    loc: tuple[int | str, ...] = tuple(detail["loc"])
    ctx = detail.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, RuleError):
        loc += cause.path
    kind = detail["type"]
    rule = terms[kind] if kind in terms else _rule(kind, ctx, detail["msg"], unknown)
    return FieldError(_path(loc, root), rule)


def _path(loc: tuple[int | str, ...], root: str) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"
        else:
            name = part or '""'  # an empty dict key must stay visible
            text += f".{name}" if text else name
    if not text:
        return root
    # A path that starts with an index ("[0]") or a key marker still needs an anchor; a name
    # that merely looks like one ("[") does not.
    starts_bare = isinstance(loc[0], int) or loc[0] == "[key]"
    return root + text if starts_bare else text


def _rule(kind: str, ctx: Mapping[str, Any], message: str, unknown: str) -> str:
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return str(ctx["error"])
    fixed = {
        "missing": "is required",
        "extra_forbidden": unknown,
        "string_type": "must be a string",
        "int_type": "must be an integer",
        "int_parsing": "must be an integer",
        "int_from_float": "must be an integer",
        "float_type": "must be a number",
        "float_parsing": "must be a number",
        "bool_type": "must be true or false",
        "bool_parsing": "must be true or false",
        "model_type": "must be an object",
        "model_attributes_type": "must be an object",
        "dict_type": "must be an object",
        "list_type": "must be a list",
        "json_invalid": "must be valid JSON",
        "none_required": "must be null",
    }
    if kind in fixed:
        return fixed[kind]
    if kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the allowed values')}"
    if kind == "too_short":
        count = ctx.get("min_length", 1)
        return "must hold at least one item" if count == 1 else f"must hold at least {count} items"
    if kind == "too_long":
        count = ctx.get("max_length", 0)
        return f"must hold at most {count} item{'s' if count != 1 else ''}"
    bounds = {
        "greater_than_equal": ("must be at least", "ge"),
        "greater_than": ("must be greater than", "gt"),
        "less_than_equal": ("must be at most", "le"),
        "less_than": ("must be less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{words} {ctx.get(key)}"
    return message[:1].lower() + message[1:]
