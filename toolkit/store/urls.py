"""Credential stripping for the URLs the store records (run targets, event sources).

Secrets are never written to DuckDB. A URL can carry them in two places: the userinfo
(``https://user:pass@host``, HTTP Basic on the swap surface) and the query string
(``?apiKey=...``). Both are removed, not masked: a stored URL says where data came from,
not how the collector logged in.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolkit.store.errors import StoreError

__all__ = ["is_secret_name", "redact_url"]

# Matched against a parameter name lowered and stripped of "-" and "_": "apiKey", "api_key",
# "X-Auth-Token", "access_token", "signature", "password" all match. Over-matching (a
# ``token=`` filter naming an asset) only loses a filter from the record; under-matching leaks.
_SECRET_PARTS = (
    "key",
    "token",
    "secret",
    "passw",
    "pwd",
    "auth",
    "signature",
    "sig",
    "credential",
    "session",
    "jwt",
    "bearer",
)
_SEPARATORS = re.compile(r"[-_.\s]")


def is_secret_name(name: str) -> bool:
    """True when a parameter or field name looks like it holds a credential.

    Example:
        >>> is_secret_name("apiKey"), is_secret_name("X-Auth-Token"), is_secret_name("chain")
        (True, True, False)
    """
    normal = _SEPARATORS.sub("", name.lower())
    return any(part in normal for part in _SECRET_PARTS)


def redact_url(url: str, *, field: str = "target_url") -> str:
    """Return ``url`` without userinfo and without secret-looking query parameters.

    ``url`` must be absolute (``scheme://host...``); ``field`` names it in the error.

    Example:
        >>> redact_url("https://user:pass@host:8443/x?apiKey=abc&chain=1")
        'https://host:8443/x?chain=1'
    """
    if not isinstance(url, str) or not url.strip():
        raise StoreError(f"{field}: must be a non-empty URL string")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        # urllib's message may quote parts of the URL, and the URL may hold a secret.
        raise StoreError(f"{field}: not a valid URL (malformed host or port)") from None
    host = parts.hostname
    if not parts.scheme or not host:
        raise StoreError(f"{field}: must be an absolute URL such as https://host/path")
    if ":" in host:  # IPv6 literal: brackets were stripped by urlsplit
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    query = _without_secrets(parts.query)
    # A fragment is usually a plain label, but OAuth-style "#access_token=..." exists too.
    fragment = _without_secrets(parts.fragment) if "=" in parts.fragment else parts.fragment
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def _without_secrets(pairs: str) -> str:
    kept = [
        (name, value)
        for name, value in parse_qsl(pairs, keep_blank_values=True)
        if not is_secret_name(name)
    ]
    return urlencode(kept)
