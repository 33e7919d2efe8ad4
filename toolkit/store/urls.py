"""The one credential-stripping policy for URLs: what the store records (run targets, event
sources) and what clients, providers, logs and messages show.

Secrets are never written to DuckDB, reprs, logs or messages. A URL can carry them in three
places: the userinfo (``https://user:pass@host``, HTTP Basic on the swap surface), the query
string (``?apiKey=...``) and, for JSON-RPC node URLs, the path (``/v2/<key>``). The first two
are always removed, not masked: a URL shown or stored says where data came from, not how the
collector logged in; ``path=False`` drops the path too (node URLs).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolkit.store.errors import StoreError

__all__ = ["is_secret_name", "redact_url", "shown_url", "target_kind_of"]

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


def redact_url(url: str, *, field: str = "target_url", path: bool = True) -> str:
    """Return ``url`` without userinfo and without secret-looking query parameters (and,
    with ``path=False``, without its path, query and fragment: node URLs keep keys in paths).

    ``url`` must be absolute (``scheme://host...``); ``field`` names it in the error.

    Example:
        >>> redact_url("https://user:pass@host:8443/x?apiKey=abc&chain=1")
        'https://host:8443/x?chain=1'
        >>> redact_url("https://user:pw@base.example.com/v2/s3cr3t?key=x", path=False)
        'https://base.example.com'
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
    if not path:
        return urlunsplit((parts.scheme, netloc, "", "", ""))
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


def shown_url(url: str, *, path: bool = True) -> str:
    """:func:`redact_url` for a message or repr: ``<invalid URL>`` instead of an error.

    >>> shown_url("https://user:secretpw@host/swap"), shown_url("http://[::1")
    ('https://host/swap', '<invalid URL>')
    """
    try:
        return redact_url(url, path=path)
    except StoreError:
        return "<invalid URL>"


def target_kind_of(url: str) -> str:
    """What a run's target URL says it observed: ``embedded`` (the in-process simulated
    service, ``http://embedded-<id>.invalid``), ``simulated`` (a backtest, ``backtest://``),
    ``served`` (a loopback host, such as ``toolkit serve``) or ``real``.

    >>> [target_kind_of(u) for u in ("http://embedded-ab12.invalid/swap", "backtest://default",
    ...  "http://127.0.0.1:8700", "https://svc.example")]
    ['embedded', 'simulated', 'served', 'real']
    """
    import ipaddress

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https"):
        return "simulated"
    if host.startswith("embedded-") and host.endswith(".invalid"):
        return "embedded"
    if host == "localhost":
        return "served"
    try:
        return "served" if ipaddress.ip_address(host).is_loopback else "real"
    except ValueError:
        return "real"
