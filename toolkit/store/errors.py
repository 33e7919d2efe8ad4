"""The exceptions the store raises: :class:`StoreError`, and :class:`StoreBusy` when another
process held the file for longer than the store waits."""

from __future__ import annotations

from toolkit.errors import StorageError

__all__ = ["StoreBusy", "StoreError"]


class StoreError(StorageError):
    """Anything the store refuses or cannot do; the message names the path, table or column
    and the rule that was broken, and never carries a secret.

    Example:
        >>> str(StoreError("amount: must be an integer"))
        'amount: must be an integer'
    """


class StoreBusy(StoreError):
    """Another process held the database file for longer than the store waits for it
    (``lock_timeout_s``). Nothing was read or written: a writer keeps its rows and tries again.

    Example:
        >>> issubclass(StoreBusy, StoreError)
        True
    """
