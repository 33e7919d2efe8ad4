"""The one error a scenario raises: a key path and the rule it breaks, and the one formatter
that turns pydantic's ``ValidationError`` into it."""

from __future__ import annotations

from pydantic import ValidationError

from toolkit.errors import InputError
from toolkit.resources.declared import config_errors
from toolkit.scenario.renamed import renamed_key

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
    ...     WindowsDoc.model_validate({"quote_s": 0})
    ... except ValidationError as error:
    ...     print(scenario_error(error, "windows"))
    windows.quote_s: must be a positive integer
    """
    faults = config_errors(error)
    paths = [_path(under, fault.field) for fault in faults]
    # An old key is reported before any other fault: a file written for the old names would
    # otherwise first fail on the new name it lacks ("missing"), which hides the cause.
    for fault, path in zip(faults, paths, strict=True):
        new = renamed_key(path) if fault.rule == "unknown key" else None
        if new is not None:
            return ScenarioError(path, f"renamed to {new}")
    return ScenarioError(paths[0], faults[0].rule)


def _path(under: str, field: str) -> str:
    if not under:
        return field or "(document)"
    if not field:
        return under
    return under + field if field.startswith("[") else f"{under}.{field}"
