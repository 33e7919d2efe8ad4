"""Progress bars: one ``tqdm.auto`` bar (a terminal's or a notebook's) for every long job.

A job asks for its bar with ``progress=True`` (the default of the long jobs); the bar shows
only where someone is watching it, so that no stored output keeps a frozen ``0 %``:

- in an interactive session: stderr is a terminal, or an IPython kernel whose frontend takes
  input (a notebook open in Jupyter; nbconvert, nbval and papermill run kernels without stdin,
  so a notebook they execute stores no bar);
- or when the environment asks for bars anyway: ``TOOLKIT_PROGRESS=1``;
- never when ``TQDM_DISABLE=1``, which hides every bar (what ``make notebooks`` sets).

(tqdm reads ``TQDM_DISABLE`` only for bars that are given no ``disable`` of their own; this
module decides once for every bar of the toolkit.)

>>> bar = progress_bar(total=3, desc="demo", unit="step", enabled=False)
>>> bar.disable
True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm.auto import tqdm

__all__ = ["interactive", "progress_bar", "shown"]

T = TypeVar("T")

_YES = ("1", "true", "yes")


def interactive() -> bool:
    """Whether someone watches the bars: stderr is a terminal, or this is an IPython kernel
    whose frontend takes input (a notebook open in Jupyter, not one executed by a tool).

    >>> isinstance(interactive(), bool)
    True
    """
    try:
        if sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # replaced or closed stderr
        pass
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    # ipykernel records whether the running cell's frontend accepts input: Jupyter's do,
    # nbconvert's, nbval's and papermill's executors do not
    return bool(getattr(kernel, "_allow_stdin", False))


def shown(enabled: bool) -> bool:
    """Whether a bar asked for (``enabled``) is shown: never under ``TQDM_DISABLE``, always
    under ``TOOLKIT_PROGRESS=1``, else only in an :func:`interactive` session.

    >>> shown(False)
    False
    """
    if not enabled or os.environ.get("TQDM_DISABLE", "").lower() not in ("", "0", "false"):
        return False
    return os.environ.get("TOOLKIT_PROGRESS", "").lower() in _YES or interactive()


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
