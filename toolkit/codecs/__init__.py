"""Pure codecs of the chain-level encodings; a leaf that imports no other toolkit package.

- :mod:`~toolkit.codecs.erc7930` and :mod:`~toolkit.codecs.caip2`: interoperable addresses and
  chain ids.
- :mod:`~toolkit.codecs.escrow`: the input settler escrow's ``StandardOrder``,
  ``encode_open``/``decode_open`` and ``order_id``; :mod:`~toolkit.codecs.context` the
  exclusivity context of its outputs.
- :mod:`~toolkit.codecs.function_table`: the one table of contract functions (selectors,
  signatures), and :mod:`~toolkit.codecs.functions` a generic ABI codec for them;
  :mod:`~toolkit.codecs.events` the table of events (topic0 of the real signatures) and their
  log codec.
- :mod:`~toolkit.codecs.proofs`: OIF's fill description, its payload hash and the proof series
  an input oracle checks before the escrow pays.
- :mod:`~toolkit.codecs.universal_router`: the Uniswap Universal Router's ``execute`` calldata
  (its V2/V3 exact-input swap, wrap, unwrap and sweep commands).

Malformed values raise :class:`InvalidValue` naming the field and the rule.

>>> from toolkit.codecs import caip2, erc7930
>>> erc7930.decode(erc7930.encode(8453, "0x" + "11" * 20)).chain_id, caip2.format(8453)
(8453, 'eip155:8453')
"""

from toolkit.codecs import (
    caip2,
    context,
    erc7930,
    escrow,
    events,
    function_table,
    functions,
    proofs,
    universal_router,
)
from toolkit.codecs.errors import InvalidValue

__all__ = [
    "InvalidValue",
    "caip2",
    "context",
    "erc7930",
    "escrow",
    "events",
    "function_table",
    "functions",
    "proofs",
    "universal_router",
]
