"""The one exception the store raises."""

from __future__ import annotations

from toolkit.errors import StorageError

__all__ = ["StoreError"]


class StoreError(StorageError):
    """Anything the store refuses or cannot do; the message names the path, table or column
    and the rule that was broken, and never carries a secret.

    Example:
        >>> str(StoreError("amount: must be an integer"))
        'amount: must be an integer'
    """
