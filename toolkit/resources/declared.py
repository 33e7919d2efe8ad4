"""Configuration files as declared models: the base of every TOML table and the field rules they
share, and the one formatter of their faults (``section.key[i].field`` and the rule).

A TOML document is checked by a pydantic model whose fields carry their rules; a fault is named
by its key path in a document's words ("must be a table", "unknown key"), so the scenario files
(:mod:`toolkit.scenario`) and the chain registry (:mod:`toolkit.chain.registry`) report errors
the same way, each under its own exception.

>>> from typing import Annotated
>>> from pydantic import create_model
>>> seconds = Annotated[int, integer_rule("must be a positive integer", 1)]
>>> Window = create_model("Window", __base__=ConfigTable, seconds=seconds)
>>> try:
...     Window.model_validate({"seconds": True, "secs": 1})
... except ValidationError as error:
...     [f"{fault.field}: {fault.rule}" for fault in config_errors(error)]
['seconds: must be a positive integer', 'secs: unknown key']
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError

from toolkit.resources.errors import FieldError, field_errors

__all__ = ["TOML_TERMS", "ConfigTable", "choice_rule", "config_errors", "integer_rule", "text_rule"]

#: Rules of pydantic's error types in the words of a TOML document (tables and arrays).
TOML_TERMS: Final = {
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dataclass_type": "must be a table",
    "list_type": "must be an array",
    "tuple_type": "must be an array",
    "bool_type": "must be true or false",
}
_DIGITS: Final = "must be an integer or a string of digits"


class ConfigTable(BaseModel):
    """A table of a configuration file: unknown keys are errors, so a misspelt key never
    silently falls back to a default; frozen; built objects are checked through their
    attributes."""

    model_config = ConfigDict(extra="forbid", frozen=True, from_attributes=True)


def config_errors(error: ValidationError, root: str = "") -> tuple[FieldError, ...]:
    """Every fault of a document's ``error``: its key path (``root`` when it is the whole
    document) and its rule, in pydantic's order (fields as declared, unknown keys last)."""
    return field_errors(error, root=root, unknown="unknown key", terms=TOML_TERMS)


def integer_rule(
    rule: str, minimum: int = 0, maximum: int | None = None, *, strings: bool = False
) -> Any:
    """A whole-number rule for ``Annotated[int, ...]``: ``minimum`` to ``maximum``, never a bool
    (TOML ``true`` is no count); with ``strings``, also a string of digits (TOML integers stop at
    2**63, and 1000 WETH in wei does not fit)."""

    def check(value: object) -> int:
        if strings and isinstance(value, str):
            if not value.isascii() or not value.isdigit():
                raise ValueError(_DIGITS)
            value = int(value)
        if type(value) is not int or value < minimum or (maximum is not None and value > maximum):
            raise ValueError(rule)
        return value

    return PlainValidator(check)


def text_rule(rule: str = "must be a non-empty string", *, empty: bool = False) -> Any:
    """A string rule for ``Annotated[str, ...]``: with ``empty`` False, something in it."""

    def check(value: object) -> str:
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise ValueError(rule)
        return value

    return PlainValidator(check)


def choice_rule(rule: str, *choices: str) -> Any:
    """A choice rule for ``Annotated[str, ...]``: one of ``choices``."""

    def check(value: object) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ValueError(rule)
        return value

    return PlainValidator(check)
