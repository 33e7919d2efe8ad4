"""The base classes every resource, query and body derives from."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from toolkit.errors import InputError

__all__ = ["Query", "Resource", "RuleError"]


class RuleError(InputError):
    """A rule broken by a sub-field, raised from a model validator.

    ``path`` is appended to the location of the model, so the report names the sub-field
    (``preview.inputs``) rather than the model (``preview``).
    """

    def __init__(self, path: tuple[str | int, ...], rule: str) -> None:
        super().__init__(rule)
        self.path = path
        self.rule = rule


class Resource(BaseModel):
    """A wire object: snake_case attributes, camelCase wire names, immutable.

    Unknown wire fields are ignored, so a newer service that adds fields still parses.
    """

    # validate_by_name + validate_by_alias is pydantic's current spelling of populate_by_name.
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        frozen=True,
        extra="ignore",
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready wire form: camelCase names, absent optional fields left out.

        >>> from toolkit.resources import ErrorBody
        >>> ErrorBody(error="boom").to_wire()
        {'error': 'boom'}
        """
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Query(Resource):
    """Query-string parameters: an unknown parameter is an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")
