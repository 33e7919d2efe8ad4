"""Errors raised by the chain package.

Both carry the offending field and the rule it broke, so a caller (the embedded service, a
notebook) can turn them into a 400 body or a readable message without parsing text.
"""

from __future__ import annotations

__all__ = ["InvalidValue", "NotInRegistry"]


class InvalidValue(ValueError):
    """A value that cannot be encoded, decoded or built; the message is ``"<field>: <rule>"``.

    Example:
        >>> str(InvalidValue("amount", "must be an integer"))
        'amount: must be an integer'
    """

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class NotInRegistry(LookupError):
    """A chain, token or contract the registry does not know.

    Example:
        >>> str(NotInRegistry("chain 999"))
        'chain 999: not in the registry'
    """

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: not in the registry")
        self.what = what
