"""The one error of the codecs: a value that cannot be encoded or decoded.

It carries the offending field and the rule it broke, so a caller (the embedded service, a
notebook) can turn it into a 400 body or a readable message without parsing text.
"""

from __future__ import annotations

from toolkit.errors import InputError

__all__ = ["InvalidValue"]


class InvalidValue(InputError):
    """A value that cannot be encoded, decoded or built; the message is ``"<field>: <rule>"``.

    Example:
        >>> str(InvalidValue("amount", "must be an integer"))
        'amount: must be an integer'
    """

    field: str
    rule: str

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule
