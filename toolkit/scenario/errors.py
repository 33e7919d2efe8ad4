"""The one error a scenario raises: a key path and the rule it breaks, and the one formatter
that turns pydantic's ``ValidationError`` into it."""

from __future__ import annotations

from pydantic import ValidationError

from toolkit.errors import InputError
from toolkit.resources.declared import config_errors

__all__ = ["ScenarioError", "scenario_error"]


class ScenarioError(InputError):
    """A scenario breaks a rule; ``path`` is the TOML key path (``pools[3].balance``).

    >>> str(ScenarioError("pools[3].balance", "must be a positive integer"))
    'pools[3].balance: must be a positive integer'
    """

    field: str
    rule: str

    def __init__(self, path: str, rule: str, source: str | None = None) -> None:
        self.path = path
        self.field = path
        self.rule = rule
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{path}: {rule}")

    def with_source(self, source: str) -> ScenarioError:
        """The same error, naming the file it came from."""
        return ScenarioError(self.path, self.rule, source)


def scenario_error(error: ValidationError, under: str = "") -> ScenarioError:
    """The first fault of ``error`` as a :class:`ScenarioError` naming ``section.key[i].field``.

    ``under`` is the key path of what was checked (``windows``; empty: the whole document).
    Only the path and the rule are kept: pydantic's error holds the offending input, which may
    be a signing key.

    >>> from toolkit.scenario.document import WindowsDoc
    >>> try:
    ...     WindowsDoc.model_validate({"quote_seconds": 0})
    ... except ValidationError as error:
    ...     print(scenario_error(error, "windows"))
    windows.quote_seconds: must be a positive integer
    """
    first = config_errors(error)[0]
    field = first.field
    if not under:
        return ScenarioError(field or "(document)", first.rule)
    if not field:
        return ScenarioError(under, first.rule)
    return ScenarioError(under + field if field.startswith("[") else f"{under}.{field}", first.rule)
