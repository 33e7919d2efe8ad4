"""Where the clients connect and with which key: arguments first, then the environment.

``TOOLKIT_BASE_URL`` names the service (the real one, or ``toolkit serve`` on loopback); with no
URL the clients talk to the embedded service in-process. ``TOOLKIT_API_KEY`` is the key sent as
``X-Auth-Token``; it is held in a :class:`~toolkit.scenario.Secret` and never shown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import httpx

from toolkit.arguments import number
from toolkit.scenario.secret import Secret

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_TIMEOUT",
    "display_url",
    "resolve_api_key",
    "resolve_base_url",
    "resolve_timeout",
]

BASE_URL_ENV = "TOOLKIT_BASE_URL"
API_KEY_ENV = "TOOLKIT_API_KEY"

#: Connect, read, write and pool timeouts of every request (seconds).
DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=5.0, pool=5.0)


def display_url(url: str) -> str:
    """``url`` without userinfo, query or fragment: safe to print, log and store.

    >>> display_url("https://user:pw@api.example:8443/v1?apiKey=x")
    'https://api.example:8443/v1'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def resolve_base_url(base_url: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The service URL from the argument or ``TOOLKIT_BASE_URL``; None means embedded.

    Raises ``ValueError`` naming the rule for anything but an absolute http(s) URL; the message
    shows the URL without credentials.

    >>> resolve_base_url("http://127.0.0.1:8700/", env={})
    'http://127.0.0.1:8700'
    >>> resolve_base_url(None, env={})
    """
    environ = os.environ if env is None else env
    source = "base_url"
    if base_url is None:
        base_url = environ.get(BASE_URL_ENV) or None
        source = BASE_URL_ENV
    if base_url is None:
        return None
    if not isinstance(base_url, str):
        raise ValueError(f"{source}: must be a URL string")
    text = base_url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise ValueError(
            f"{source}: not a valid URL ({display_url(text)}); expected http(s)://host[:port]"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{source}: must be an absolute http(s) URL such as https://host[:port], "
            f"got {display_url(text)!r}"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"{source}: must not carry a query string or fragment")
    return text.rstrip("/")


def resolve_api_key(
    api_key: str | Secret | None, env: Mapping[str, str] | None = None
) -> Secret | None:
    """The API key from the argument or ``TOOLKIT_API_KEY``, wrapped in a ``Secret``.

    >>> resolve_api_key("k-123", env={})
    Secret('***')
    >>> resolve_api_key(None, env={}) is None
    True
    """
    if isinstance(api_key, Secret):
        return api_key
    if api_key is not None:
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("api_key: must be a non-empty string")
        return Secret(api_key.strip())
    environ = os.environ if env is None else env
    value = (environ.get(API_KEY_ENV) or "").strip()
    # TOOLKIT_API_KEY may list several keys for the embedded service; a client sends the first.
    first = value.split(",")[0].strip()
    return Secret(first) if first else None


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
