"""The one URL-redaction policy: what every URL the toolkit shows or stores looks like.

Client reprs, log lines, error messages, the store's run targets and event sources, and the CLI
all show a URL through :func:`redact_url` (or :func:`shown_url`, its never-raising form for
messages). A URL can carry a credential in three places, and each is handled the same way
everywhere:

- the userinfo (``https://user:pass@host``, HTTP Basic on the swap surface): removed;
- a query (or ``#a=b`` fragment) parameter whose name looks like a credential (``apiKey``,
  ``access_token``, ``X-Auth-Token``, ...): its value masked as ``***``;
- a path segment that looks like a key (node providers put it there: ``/v3/<key>``,
  ``/v2/<key>``, ``/<token>/``): masked as ``***``. Every segment after a version segment
  (``v2``, ``v3``) is masked, whatever its length, and so is any other key-like segment.

Masking rather than dropping keeps the URL's shape, so a reader still sees which endpoint and
that a key was given, never the key. A segment is key-like when it is at least 20 characters of
letters, digits, ``-`` and ``_`` mixing letters and digits, or any such run of 32 and more (hex,
base62 and UUID keys); ``0x``
values (addresses, hashes) are public data and stay. Only base URLs are shown (request paths
are logged as the operation's own path), so over-masking hides at most a label of a base URL
(``/v1/swap`` shows as ``/v1/***``); under-masking leaks, so the rule leans to masking.

Stdlib only, and it imports no other toolkit module: every layer may use it.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

from toolkit.errors import InputError

__all__ = ["MASK", "UrlError", "has_credentials", "is_secret_name", "redact_url", "shown_url"]

#: What a credential is replaced by (as in ``Secret('***')`` and scrubbed error texts).
MASK = "***"

# Matched against a parameter name lowered and stripped of "-", "_", "." and spaces: "apiKey",
# "api_key", "X-Auth-Token", "access_token", "signature", "password" all match. Over-matching
# (a ``token=`` filter naming an asset) only hides a filter; under-matching leaks.
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
_KEY_SEGMENT = re.compile(r"[A-Za-z0-9_-]{20,}")
_VERSION = re.compile(r"v[0-9]+")


class UrlError(InputError):
    """A value that is not an absolute URL; the message names the field and the rule, never the
    URL (it may hold the very secret being redacted)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}", field=field, rule=rule)


def is_secret_name(name: str) -> bool:
    """True when a parameter or field name looks like it holds a credential.

    >>> is_secret_name("apiKey"), is_secret_name("X-Auth-Token"), is_secret_name("chain")
    (True, True, False)
    """
    normal = _SEPARATORS.sub("", name.lower())
    return any(part in normal for part in _SECRET_PARTS)


def _key_like(segment: str) -> bool:
    text = unquote(segment)
    if text.lower().startswith("0x") or not _KEY_SEGMENT.fullmatch(text):
        return False
    mixed = any(c.isdigit() for c in text) and any(c.isalpha() for c in text)
    return mixed or len(text) >= 32


def _mask_path(path: str) -> str:
    segments = path.split("/")
    masked = [
        MASK
        if _key_like(segment) or (segment and index and _VERSION.fullmatch(segments[index - 1]))
        else segment
        for index, segment in enumerate(segments)
    ]
    return "/".join(masked)


def _mask_pairs(pairs: str) -> str:
    """``a=1&apiKey=x`` with the secret-named values masked; other pairs kept byte for byte."""
    if not pairs:
        return pairs
    kept = []
    for pair in pairs.split("&"):
        name, equals, _ = pair.partition("=")
        secret = equals and is_secret_name(unquote(name.replace("+", " ")))
        kept.append(f"{name}={MASK}" if secret else pair)
    return "&".join(kept)


def redact_url(url: str, *, field: str = "url") -> str:
    """``url`` under the policy (module docstring): no userinfo, credential-named parameters and
    key-like path segments masked.

    ``url`` must be absolute (``scheme://host...``); otherwise :class:`UrlError` naming
    ``field``.

    >>> redact_url("https://user:pass@host:8443/x?apiKey=abc&chain=1")
    'https://host:8443/x?apiKey=***&chain=1'
    >>> redact_url("https://mainnet.example.io/v3/9aa3d95b3bc440fa88ea12eaa4456161")
    'https://mainnet.example.io/v3/***'
    >>> redact_url("host/path", field="base_url")
    Traceback (most recent call last):
    ...
    toolkit.urls.UrlError: base_url: must be an absolute URL such as https://host/path
    """
    if not isinstance(url, str) or not url.strip():
        raise UrlError(field, "must be a non-empty URL string")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        # urllib's message may quote parts of the URL, and the URL may hold a secret.
        raise UrlError(field, "not a valid URL (malformed host or port)") from None
    host = parts.hostname
    if not parts.scheme or not host:
        raise UrlError(field, "must be an absolute URL such as https://host/path")
    if ":" in host:  # IPv6 literal: brackets were stripped by urlsplit
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    # A fragment is usually a plain label, but OAuth-style "#access_token=..." exists too.
    fragment = _mask_pairs(parts.fragment) if "=" in parts.fragment else parts.fragment
    return urlunsplit(
        (parts.scheme, netloc, _mask_path(parts.path), _mask_pairs(parts.query), fragment)
    )


def shown_url(url: str) -> str:
    """:func:`redact_url` for a message or repr: ``<invalid URL>`` instead of an error.

    >>> shown_url("https://user:secretpw@host/swap"), shown_url("http://[::1")
    ('https://host/swap', '<invalid URL>')
    """
    try:
        return redact_url(url)
    except UrlError:
        return "<invalid URL>"


def has_credentials(text: str) -> bool:
    """True when ``text`` is a URL that :func:`redact_url` would change: userinfo, an unmasked
    credential-named parameter or a key-like path segment.

    >>> has_credentials("https://u:p@host/x"), has_credentials("https://host/x?chain=1")
    (True, False)
    >>> has_credentials(redact_url("https://host/v2/Hc2OUlzTGL5V4Ve7vGWEJ8mC2ZU3tc7x?key=k"))
    False
    """
    try:
        parts = urlsplit(text)
        if parts.username is not None or parts.password is not None:
            return True
    except ValueError:
        return "@" in text.partition("://")[2].partition("/")[0]
    if _mask_path(parts.path) != parts.path or _mask_pairs(parts.query) != parts.query:
        return True
    return "=" in parts.fragment and _mask_pairs(parts.fragment) != parts.fragment
