"""A value that must never be shown: API keys and signing keys."""

from __future__ import annotations

import hmac

__all__ = ["Secret"]


class Secret:
    """Wrap a secret string so that reprs, logs and tracebacks show ``Secret('***')``.

    Comparison is constant-time so that checking an API key does not leak its prefix.

    >>> key = Secret("demo-key")
    >>> key
    Secret('***')
    >>> key.reveal()
    'demo-key'
    >>> key.matches("demo-key")
    True
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError("secret: must be a non-empty string")
        self._value = value

    def reveal(self) -> str:
        """Return the wrapped value; call it only where the value is used, never to print it."""
        return self._value

    def matches(self, candidate: str) -> bool:
        """Compare ``candidate`` with the secret in constant time (False for a non-string)."""
        if not isinstance(candidate, str):
            return False
        return hmac.compare_digest(self._value.encode(), candidate.encode())

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return self.matches(other._value)

    def __hash__(self) -> int:
        return hash((Secret, self._value))
