"""Amounts and times as text for people: ``$1.23M``, ``2025-03-01 12:00 UTC``.

>>> format_usd(1_234_567.8), format_usd(0.42)
('$1.23M', '$0.42')
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_usd", "utc_date"]


def format_usd(value: float | None) -> str:
    """A USD amount for people: ``$1.23M``, ``$45.6k``, ``$100``, ``$0.42``, ``-$10M``.

    Parameters
    ----------
    value : float or None
        The amount in USD.

    Returns
    -------
    str
        The amount with its unit; empty for None.

    Examples
    --------
    >>> format_usd(-1e7), format_usd(100.0), format_usd(None)
    ('-$10M', '$100', '')
    """
    if value is None:
        return ""
    sign, size = ("-" if value < 0 else ""), abs(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{sign}${size / limit:.3g}{suffix}"
    return f"{sign}${size:.0f}" if size == int(size) else f"{sign}${size:.2f}"


def utc_date(value: datetime | None) -> str:
    """A time for people, to the minute: ``2025-03-01 12:00 UTC``.

    Parameters
    ----------
    value : datetime or None
        A timezone-aware time.

    Returns
    -------
    str
        The time in UTC; empty for None.

    Examples
    --------
    >>> utc_date(datetime(2025, 3, 1, 12, 0, tzinfo=UTC))
    '2025-03-01 12:00 UTC'
    """
    if value is None:
        return ""
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
