"""What public JSON-RPC providers answer when they refuse: the table, and how to read an answer.

Nodes behind commercial and public endpoints bound ``eth_getLogs`` by block range (``range``)
or by the size of the answer (``size``: result count, bytes, query time), and throttle clients
(``rate``), each in words and codes of its own. :data:`PROVIDER_MESSAGES` lists the ones found
with a source (an indexer's tests or source that received them, or the provider's own
documentation); a message is quoted as the source gives it, with ``{first}``/``{last}`` where
the provider names a block range to retry with and ``{allowed}`` where it names a number.
``code`` is None where the source does not give the JSON-RPC code (the fault proxy of
:mod:`toolkit.testing.proxy` then answers -32000, geth's generic server error).

:func:`refusal_kind` reads a JSON-RPC error (code, message, data) as one of the three kinds, or
None: the chain collector halves a range on ``range`` and ``size``, and the chain client
(:class:`toolkit.client.ChainProvider`) retries ``rate`` under the one retry policy, as it does
an HTTP 429. The fault proxy serves these same messages, so the suite checks that every one is
recognised.

>>> refusal_kind(-32005, "query returned more than 10000 results")
'size'
>>> refusal_kind(-32005, "project ID request rate exceeded")
'rate'
>>> refusal_kind(-32602, "invalid params", "range 20000 is bigger than range limit 2000")
'range'
>>> refusal_kind(-32602, "invalid argument 0: hex string without 0x prefix") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["PROVIDER_MESSAGES", "ProviderMessage", "RefusalKind", "refusal_kind"]

RefusalKind = Literal["range", "size", "rate"]
"""``range``: the block range is too wide; ``size``: the answer would be too large (results,
bytes or query time); ``rate``: too many requests, retry later."""

_PONDER_PARSE = (
    "github.com/ponder-sh/ponder packages/utils/src/parseGetLogsError/parseGetLogsError.ts "
    "@962d8aff"
)
_PONDER_HELPER = "github.com/ponder-sh/ponder packages/utils/src/getLogsRetryHelper.ts @e0f8de15"
_GEARBOX = "github.com/Gearbox-protocol/sdk-go core/constant.go @009fee02"
#: Infura's eth_getLogs constraints, in the MetaMask services documentation (a preview build).
_INFURA_LOGS = (
    "https://metamask-docs-5t2vwfskw-consensys-ddffed67.vercel.app/services/reference/linea/"
    "json-rpc-methods/eth_getlogs"
)


@dataclass(frozen=True)
class ProviderMessage:
    """One refusal as a provider answers it, and where it was found.

    ``message`` is the JSON-RPC ``error.message`` (``data`` its ``error.data``, where the
    provider puts the explanation there); ``http_status`` the HTTP status it comes with (200
    unless the source says otherwise); ``pattern`` recognises it whatever numbers it carries.
    """

    provider: str
    kind: RefusalKind
    code: int | None
    message: str
    pattern: str
    sources: tuple[str, ...]
    http_status: int = 200
    data: Mapping[str, Any] | str | None = field(default=None)

    def text(self, *, first: int = 0, last: int = 0, allowed: int = 0) -> tuple[str, Any]:
        """``(message, data)`` with the range and number filled in, as the provider sends them.

        >>> PROVIDER_MESSAGES[0].text(first=16, last=31)[0][-38:]
        'Try with this block range [0x10, 0x1f]'
        """
        values = {"first": f"0x{first:x}", "last": f"0x{last:x}", "allowed": allowed}
        data = self.data.format(**values) if isinstance(self.data, str) else self.data
        return self.message.format(**values), data


PROVIDER_MESSAGES: Final[tuple[ProviderMessage, ...]] = (
    ProviderMessage(
        "Infura",
        "size",
        -32005,
        "query returned more than 10000 results. Try with this block range [{first}, {last}]",
        r"query returned more than \d+ results",
        (
            _PONDER_PARSE,
            _INFURA_LOGS + " (code -32005, 'query returned more than 10000 results')",
        ),
    ),
    ProviderMessage(
        "Infura",
        "size",
        -32005,
        "query timeout exceeded",
        r"query timeout exceeded",
        (_INFURA_LOGS + " (code -32005, 'query timeout exceeded')",),
    ),
    ProviderMessage(
        "Infura",
        "rate",
        -32005,
        "project ID request rate exceeded",
        r"request rate exceeded",
        ("https://docs.infura.io/api/networks/ethereum/how-to/avoid-rate-limiting",),
        http_status=429,
        data={
            "see": "https://infura.io/docs/ethereum/jsonrpc/ratelimits",
            "current_rps": 13.333,
            "allowed_rps": 10.0,
            "backoff_seconds": 30.0,
        },
    ),
    ProviderMessage(
        "Infura",
        "rate",
        -32005,
        "daily request count exceeded, request rate limited",
        r"request rate limited",
        ("https://docs.infura.io/api/networks/ethereum/how-to/avoid-rate-limiting",),
        http_status=429,
    ),
    ProviderMessage(
        "Alchemy",
        "size",
        -32602,
        "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block "
        "range and no limit on the response size, or you can request any block range with a "
        "cap of 10K logs in the response. Based on your parameters and the response size "
        "limit, this block range should work: [{first}, {last}]",
        r"Log response size exceeded",
        (_GEARBOX, _PONDER_PARSE),
    ),
    ProviderMessage(
        "Alchemy",
        "rate",
        429,
        "Your app has exceeded its compute units per second capacity. If you have retries "
        "enabled, you can safely ignore this message. If not, check out "
        "https://docs.alchemy.com/reference/throughput",
        r"exceeded its compute units per second capacity",
        ("https://alchemy.com/docs/reference/throughput", _GEARBOX),
        http_status=429,
    ),
    ProviderMessage(
        "QuickNode",
        "range",
        -32614,
        "eth_getLogs is limited to a 10,000 range",
        r"eth_getLogs (and eth_newFilter )?(is|are) limited to a [\d,.]+",
        (
            _PONDER_PARSE,
            "https://www.quicknode.com/docs/optimism/error-references (HTTP 413 'eth_getLogs "
            "and eth_newFilter are limited to a 10,000 blocks range')",
        ),
        http_status=413,
    ),
    ProviderMessage(
        "QuickNode",
        "rate",
        429,
        "The requests per second (RPS) of your requests are higher than your plan allows.",
        r"requests per second \(RPS\) of your requests are higher",
        ("https://www.quicknode.com/docs/optimism/error-references",),
        http_status=429,
    ),
    ProviderMessage(
        "Ankr",
        "range",
        -32600,
        "block range is too wide",
        r"block range is too wide",
        (_PONDER_PARSE, _GEARBOX),
    ),
    ProviderMessage(
        "Ankr",
        "size",
        None,
        "query exceeds max results {allowed}",
        r"query exceeds max results",
        (
            "github.com/ponder-sh/ponder packages/utils/src/_test/ankr.test.ts @1171c75f",
            _PONDER_HELPER,
        ),
    ),
    ProviderMessage(
        "Cloudflare",
        "range",
        -32047,
        "Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: 800",
        r"range too large\. Max range: \d+",
        (_PONDER_PARSE, _PONDER_HELPER),
    ),
    ProviderMessage(
        "PublicNode",
        "range",
        None,
        "exceed maximum block range: {allowed}",
        r"exceed maximum block range",
        (
            "github.com/ponder-sh/ponder packages/utils/src/_test/publicnode.test.ts @6a5c8a54",
            _GEARBOX,
        ),
    ),
    ProviderMessage(
        "LlamaRPC",
        "size",
        -32602,
        "query exceeds max results {allowed}",
        r"query exceeds max results",
        ("github.com/ponder-sh/ponder packages/utils/src/_test/llamarpc.test.ts @1f4bd97a",),
    ),
    ProviderMessage(
        "Thirdweb",
        "range",
        -32602,
        "invalid params",
        r"is bigger than range limit \d+",
        (_PONDER_PARSE,),
        data="range 20000 is bigger than range limit {allowed}",
    ),
    ProviderMessage(
        "Chainstack",
        "range",
        None,
        "Block range limit exceeded.",
        r"Block range limit exceeded",
        (_PONDER_HELPER,),
    ),
    ProviderMessage(
        "1RPC",
        "size",
        -32000,
        "response size should not greater than 2097152 bytes",
        r"response size should not greater than \d+ bytes",
        ("https://docs.1rpc.io/using-the-web3-api/errors", _PONDER_HELPER),
    ),
)
"""Every provider message found with a source (module docstring)."""

_KNOWN: Final = tuple((re.compile(m.pattern, re.IGNORECASE), m.kind) for m in PROVIDER_MESSAGES)
# Phrasings of other nodes (geth's --rpc.rangelimit, Erigon, reth, smaller providers): a
# refused range or answer size, and a throttled client. Rate words are read first, so that
# "request rate exceeded" is never taken for a range to halve.
_RATE: Final = re.compile(
    r"rate limit|too many requests|request limit|throughput|capacity exceeded", re.IGNORECASE
)
_TOO_LARGE: Final = re.compile(
    r"more than \d+ results|range (is )?too (large|big|wide)|block range|range limit|"
    r"limited to|response size|too many (results|logs|blocks)|max results|exceeds? (the )?limit",
    re.IGNORECASE,
)


def refusal_kind(code: int | None, message: str, data: Any = None) -> RefusalKind | None:
    """The kind of refusal a JSON-RPC error is (``range``, ``size`` or ``rate``), or None.

    The table's messages first, then other nodes' phrasings; a bare ``429`` code is a rate
    limit and a bare ``-32005`` (Infura's "limit exceeded") an answer too large.

    >>> refusal_kind(429, "slow down")
    'rate'
    """
    text = f"{message} {'' if data is None else data}"
    for pattern, kind in _KNOWN:
        if pattern.search(text):
            return kind
    if code == 429 or _RATE.search(text):
        return "rate"
    if _TOO_LARGE.search(text):
        return "range"
    if code == -32005:
        return "size"
    return None
