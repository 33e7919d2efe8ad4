"""The one error a scenario raises: a key path and the rule it breaks."""

from __future__ import annotations

from toolkit.errors import InputError

__all__ = ["ScenarioError"]


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
