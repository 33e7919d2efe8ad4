"""A node's JSON-RPC answers as the chain collectors read them: results, errors, wire values.

The collectors send JSON-RPC through ``w3.provider`` directly (not web3's result formatters), so
they read the wire's hex strings here: :func:`rpc_result` raises an error answer as
:class:`RpcFailure`, :func:`range_too_large` tells a refused ``eth_getLogs`` range apart, by
the providers' own words (:data:`toolkit.chain.providers.PROVIDER_MESSAGES`: Infura's
``-32005 query returned more than 10000 results``, Alchemy's "Log response size exceeded",
QuickNode's ``-32614``, Ankr's "block range is too wide", Cloudflare's ``-32047``, ...). A
rate limit is not a range to halve: the chain client has retried it already
(:mod:`toolkit.client.jsonrpc`), and one that outlasts the retries fails the read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.chain.providers import refusal_kind
from toolkit.errors import ChainError
from toolkit.urls import shown_url

__all__ = ["RpcFailure", "hex_int", "hex_text", "provider_url", "range_too_large", "rpc_result"]


class RpcFailure(ChainError):
    """A JSON-RPC error answer: its ``code``, ``message`` and ``data``."""

    def __init__(self, method: str, code: int | None, message: str, data: Any = None) -> None:
        detail = "" if data is None else f": {data}"
        super().__init__(f"{method}: {message}{detail} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


def provider_url(w3: Any) -> str:
    """The URL a web3 instance reads, as runs record it: the toolkit provider's own shown URL,
    an HTTP provider's endpoint under the redaction policy, or ``web3://provider``."""
    provider = w3.provider
    url = getattr(provider, "public_url", None)
    if isinstance(url, str):
        return url
    endpoint = getattr(provider, "endpoint_uri", None)
    return shown_url(str(endpoint)) if endpoint else "web3://provider"


def range_too_large(exc: BaseException) -> bool:
    """True when ``exc`` is a node refusing an ``eth_getLogs`` range as too large.

    >>> range_too_large(RpcFailure("eth_getLogs", -32005, "query returned more than 10000 results"))
    True
    >>> range_too_large(RpcFailure("eth_getLogs", -32602, "invalid argument 0"))
    False
    >>> range_too_large(RpcFailure("eth_getLogs", -32005, "project ID request rate exceeded"))
    False
    """
    if not isinstance(exc, RpcFailure):
        return False
    return refusal_kind(exc.code, exc.message, exc.data) in ("range", "size")


def rpc_result(method: str, answer: Any) -> Any:
    """The ``result`` of a JSON-RPC ``answer``; its error raised as :class:`RpcFailure`."""
    if not isinstance(answer, Mapping):
        raise RpcFailure(method, None, f"not a JSON-RPC answer: {type(answer).__name__}")
    error = answer.get("error")
    if error is not None:
        if isinstance(error, Mapping):
            code = error.get("code")
            raise RpcFailure(
                method,
                code if isinstance(code, int) else None,
                str(error.get("message")),
                error.get("data"),
            )
        raise RpcFailure(method, None, str(error))
    return answer.get("result")


def hex_int(value: Any) -> int:
    """A quantity as the wire gives it (hex text) or already decoded, as an int."""
    return int(value, 16) if isinstance(value, str) else int(value)


def hex_text(value: Any) -> str:
    """Bytes or hex text as lowercase ``0x`` text (addresses, hashes, data)."""
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    return str(value).lower()
