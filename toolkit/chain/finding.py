"""A problem the calldata guard found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Finding", "Severity"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem found by the guard: the field at fault, what is wrong, and how bad it is.

    Example:
        >>> str(Finding("to", "is not the escrow"))
        'error: to: is not the escrow'
    """

    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.severity}: {self.field}: {self.message}"
