"""Progress bars: one ``tqdm.auto`` bar (a terminal's or a notebook's) for every long job.

A job shows its bar when asked to (``progress=True``, the default of the long jobs) unless the
environment says no: ``TQDM_DISABLE=1`` hides every bar, which is what ``make notebooks`` sets so
that nbval compares results, not progress. (tqdm reads ``TQDM_DISABLE`` only for bars that are
given no ``disable`` of their own; this module decides once for every bar of the toolkit.)

>>> bar = progress_bar(total=3, desc="demo", unit="step", enabled=False)
>>> bar.disable
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm.auto import tqdm

__all__ = ["progress_bar", "shown"]

T = TypeVar("T")


def shown(enabled: bool) -> bool:
    """Whether a bar asked for (``enabled``) is shown: not when ``TQDM_DISABLE`` is set.

    >>> shown(True) == (os.environ.get("TQDM_DISABLE", "").lower() in ("", "0", "false"))
    True
    """
    return enabled and os.environ.get("TQDM_DISABLE", "").lower() in ("", "0", "false")


def progress_bar(
    iterable: Iterable[T] | None = None,
    *,
    total: int | None = None,
    desc: str,
    unit: str,
    enabled: bool,
) -> Any:
    """A ``tqdm.auto`` bar over ``iterable`` (or counting to ``total``) that does not stay on
    screen when done; hidden unless :func:`shown`."""
    return tqdm(
        iterable, total=total, desc=desc, unit=unit, disable=not shown(enabled), leave=False
    )
