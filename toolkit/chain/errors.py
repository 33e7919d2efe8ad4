"""The chain package's own error: a chain, token or contract the registry does not know.

Malformed values raise :class:`toolkit.codecs.errors.InvalidValue`, the codecs' error, here too.
"""

from __future__ import annotations

from toolkit.errors import InputError

__all__ = ["NotInRegistry"]


class NotInRegistry(InputError, LookupError):
    """A chain, token or contract the registry does not know (an input error, and a
    ``LookupError`` as before).

    Example:
        >>> str(NotInRegistry("chain 999"))
        'chain 999: not in the registry'
    """

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: not in the registry")
        self.what = what
