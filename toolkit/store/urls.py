"""The store's side of the one URL policy (:mod:`toolkit.urls`): the form a URL is stored in,
and what a run's target URL says it observed.

Secrets are never written to DuckDB: run targets, event sources and URL-valued parameters are
stored as :func:`toolkit.urls.redact_url` shows them (userinfo removed, credential-named
parameters and key-like path segments masked), so what the store holds is what a repr, a log
line or a message would show.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from toolkit.store.errors import StoreError
from toolkit.urls import UrlError, redact_url

__all__ = ["stored_url", "target_kind_of"]


def stored_url(url: str, *, field: str = "target_url") -> str:
    """``url`` as the store keeps it: :func:`toolkit.urls.redact_url`, a bad URL being a
    :class:`StoreError` naming ``field`` (the store's error family).

    Example:
        >>> stored_url("https://user:pass@host:8443/x?apiKey=abc&chain=1")
        'https://host:8443/x?apiKey=***&chain=1'
        >>> stored_url("host/x", field="source")
        Traceback (most recent call last):
        ...
        toolkit.store.errors.StoreError: source: must be an absolute URL such as https://host/path
    """
    try:
        return redact_url(url, field=field)
    except UrlError as exc:
        raise StoreError(str(exc)) from None


def target_kind_of(url: str) -> str:
    """What a run's target URL says it observed: ``embedded`` (the in-process simulated
    service, ``http://embedded-<id>.invalid``), ``simulated`` (a backtest, ``backtest://``),
    ``served`` (a loopback host, such as ``toolkit serve``) or ``real``.

    >>> [target_kind_of(u) for u in ("http://embedded-ab12.invalid/swap", "backtest://default",
    ...  "http://127.0.0.1:8700", "https://svc.example")]
    ['embedded', 'simulated', 'served', 'real']
    """
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
