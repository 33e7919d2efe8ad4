"""The clients' timeouts and the names of the main interface's variables.

Where the clients connect is one :class:`~toolkit.client.target.Target` (``TOOLKIT_BASE_URL``,
``TOOLKIT_API_KEY`` and the other surfaces' variables, or a profile); ``TOOLKIT_API_KEY`` is
the key sent as ``X-Auth-Token``, held in a :class:`~toolkit.scenario.Secret` and never shown.
"""

from __future__ import annotations

import httpx

from toolkit.arguments import number

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_TIMEOUT", "resolve_timeout"]

BASE_URL_ENV = "TOOLKIT_BASE_URL"
API_KEY_ENV = "TOOLKIT_API_KEY"

#: Connect, read, write and pool timeouts of every request (seconds).
DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0, pool=5.0)


def resolve_timeout(timeout: httpx.Timeout | float | None) -> httpx.Timeout:
    """An ``httpx.Timeout`` from a number of seconds, a Timeout, or None (the default).

    >>> resolve_timeout(2.5).read
    2.5
    """
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(number(timeout, "timeout", above=0))
