"""The bounds on one JSON-RPC request's work, as production nodes bound theirs, and the JSON
reader that enforces the first of them (nesting depth) before the C decoder runs.

Each limit is answered by a JSON-RPC error that names it (the request is refused, nothing
changes):

- ``MAX_JSON_DEPTH`` (64) nesting levels of a body (-32600). The deepest legitimate request
  (a batch, a request, its params, a filter object, its topics, an OR-list) nests 6 levels;
  64 leaves room for any client while a decoder never meets a stack-deep document.
- ``MAX_BATCH`` (1,000) requests per batch (-32600), geth's ``--rpc.batch-request-limit``.
- ``MAX_RESPONSE_BYTES`` (25 MB) per answer (-32003 ``response too large``), geth's
  ``--rpc.batch-response-max-size``: a batch's answers past it are that error each, a single
  answer past it is replaced by it.
- ``MAX_FEE_HISTORY_BLOCKS`` (1,024) blocks per ``eth_feeHistory`` (-32602), geth's cap.
- ``MAX_LOG_RANGE`` (100,000) blocks per ``eth_getLogs`` / ``eth_getFilterLogs`` range and
  ``MAX_LOG_RESULTS`` (10,000) logs per answer (-32005, the code and wording of the hosted
  nodes whose 10,000-result cap clients already split ranges on).
- ``MAX_FILTER_CHANGES`` (1,000) items per ``eth_getFilterChanges`` poll: a poll answers the
  oldest 1,000 blocks' changes it has not reported and leaves the rest for the next poll (a
  block filter after ``evm_increaseTime`` of a month on a 0.25 s chain would otherwise answer
  ten million hashes; a thousand take about 60 ms, the cost of a block hash).
- ``MAX_MINE_BLOCKS`` (1,000,000) blocks per ``anvil_mine``/``hardhat_mine``/``evm_mine``
  (-32602): empty blocks cost nothing to mine here (they are slots of the chain's grid), but
  the clock moves with them, and a million of Ethereum's is over four months.
- Quantities to their types' ranges (-32602 naming the parameter): values and balances to
  2**256 - 1; nonces, gas, block numbers, timestamps and seconds to 2**64 - 1, and no method
  moves the clock past timestamp 2**64 - 1.

>>> loads(b'{"a": [1, 2, {"b": "[[[["}]}')
{'a': [1, 2, {'b': '[[[['}]}
>>> try:
...     loads(b"[" * 100 + b"]" * 100)
... except TooDeep as exc:
...     print(exc)
body: JSON nesting deeper than 64 levels (the limit)
"""

from __future__ import annotations

import json
from typing import Any, Final

import numpy as np

from toolkit.errors import InputError

MAX_JSON_DEPTH: Final = 64
MAX_BATCH: Final = 1000
MAX_RESPONSE_BYTES: Final = 25 * 1024 * 1024
MAX_FEE_HISTORY_BLOCKS: Final = 1024
MAX_LOG_RANGE: Final = 100_000
MAX_LOG_RESULTS: Final = 10_000
MAX_FILTER_CHANGES: Final = 1_000
MAX_MINE_BLOCKS: Final = 1_000_000

#: geth's code for an answer past ``--rpc.batch-response-max-size``.
RESPONSE_TOO_LARGE: Final = -32003
#: The code hosted nodes answer a too wide ``eth_getLogs`` with (``limit exceeded``).
LIMIT_EXCEEDED: Final = -32005

UINT64_MAX: Final = 2**64 - 1
UINT256_MAX: Final = 2**256 - 1

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPENERS, _CLOSERS = (ord("["), ord("{")), (ord("]"), ord("}"))


class TooDeep(InputError):
    """A JSON document nested deeper than the limit."""


def depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the JSON text ``raw`` nests arrays/objects deeper than ``limit``.

    Brackets inside strings do not count. Linear in the size (numpy, no Python loop per byte);
    a body with at most ``limit`` opening brackets is answered from two counts alone.

    >>> depth_exceeds(b"[[1]]", 2), depth_exceeds(b"[[[1]]]", 2), depth_exceeds(b'["[[[["]', 2)
    (False, True, False)
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # A prefix nests no deeper than the whole: a nesting bomb is found in its first kilobytes.
    if len(raw) > _PREFIX and _depth(raw[:_PREFIX]) > limit:
        return True
    return _depth(raw) > limit


_PREFIX: Final = 64 * 1024


def _depth(raw: bytes) -> int:
    data = np.frombuffer(raw, dtype=np.uint8)
    index = np.arange(data.size, dtype=np.int64)
    # A quote is escaped when an odd run of backslashes precedes it.
    not_backslash = np.where(data != _BACKSLASH, index, -1)
    last_other = np.maximum.accumulate(not_backslash)
    run_before = np.empty(data.size, dtype=np.int64)
    run_before[0] = 0
    run_before[1:] = index[:-1] - last_other[:-1]
    quotes = (data == _QUOTE) & (run_before % 2 == 0)
    outside = (np.cumsum(quotes, dtype=np.int64) % 2) == 0  # a closing quote is outside again
    opens = ((data == _OPENERS[0]) | (data == _OPENERS[1])) & outside
    closes = ((data == _CLOSERS[0]) | (data == _CLOSERS[1])) & outside
    steps = opens.astype(np.int32) - closes.astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def loads(raw: bytes, *, limit: int = MAX_JSON_DEPTH, name: str = "body") -> Any:
    """``json.loads`` of ``raw`` after checking its depth: :class:`TooDeep` past ``limit``,
    ``ValueError`` for text that is not JSON."""
    if depth_exceeds(raw, limit):
        raise TooDeep(f"{name}: JSON nesting deeper than {limit} levels (the limit)")
    return json.loads(raw)
