"""The chain package's own error: a chain, token or contract the registry does not know.

Malformed values raise :class:`toolkit.codecs.errors.InvalidValue`, the codecs' error, here too.
"""

from __future__ import annotations

__all__ = ["NotInRegistry"]


class NotInRegistry(LookupError):
    """A chain, token or contract the registry does not know.

    Example:
        >>> str(NotInRegistry("chain 999"))
        'chain 999: not in the registry'
    """

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: not in the registry")
        self.what = what
