"""On-chain collection: blocks and logs read through web3.py into DuckDB, by block ranges.

:class:`ChainCollector` reads ``eth_getLogs`` over ``[from_block, to_block]`` in chunks of
blocks, for the topics of the chosen ``events`` (:data:`CHAIN_EVENTS`: ``transfers``,
``approvals``, ``deposits``, ``withdrawals``, ``swaps``, ``liquidity``, ``syncs``,
``flashes``), and stores:

- ``chain_logs``: every log read, raw (address, topics, data);
- ``token_transfers`` / ``token_approvals`` / ``weth_flows``: the logs decoded with
  :mod:`toolkit.codecs.events` (addresses lowercase, amounts exact: ``amount_text`` always,
  ``amount`` HUGEINT unless it exceeds it);
- ``pool_swaps`` / ``pool_liquidity`` / ``pool_syncs`` / ``pool_flashes``: Uniswap V2 and V3
  pool events, and ``nft_transfers``: ERC-721 transfers (position NFTs), apart from the
  ERC-20 ones (:mod:`toolkit.collect.pool_events`);
- ``chain_blocks``: the header of every block that holds a log read (number, hash, timestamp,
  base fee, gas).

A node that refuses a range as too large (``-32005``, "query returned more than 10000
results", "block range too large", as public providers answer) gets the range halved until it
answers; after a few successes the chunk doubles back towards ``chunk``. Each range stored
whole is recorded in ``chain_ranges``: a resumed run continues after the last one. Rows are
keyed by their place on the chain (``chain, block_number, log_index``), so a second run over
the same blocks writes nothing.

The collector sends JSON-RPC through ``w3.provider`` directly, not through web3's result
formatters: it needs the wire's hex strings, and turning a million logs into ``AttributeDict``
and ``HexBytes`` first costs more than decoding and storing them.

>>> from toolkit.client import EmbeddedService, chain_web3
>>> from toolkit.store import Store
>>> service = EmbeddedService("single-pool", env={})
>>> w3 = chain_web3(8453, embedded=service)
>>> result = ChainCollector(w3, Store(":memory:"), from_block=0, progress=False).run()
>>> result.kind, result.status
('chain', 'completed')
>>> service.close()
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import polars as pl
from web3 import Web3
from web3.types import RPCEndpoint

from toolkit.arguments import whole
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.events import EVENTS, decode_log
from toolkit.collect.pool_events import POOL_TABLES, nft_transfer_row, pool_event_row
from toolkit.collect.run import BaseCollector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import ChainError, InputError
from toolkit.store import Store, polars_schema
from toolkit.urls import shown_url

__all__ = ["CHAIN_EVENTS", "ChainCollector", "RpcFailure", "log_rows", "range_too_large"]

CHAIN_EVENTS: Mapping[str, tuple[str, ...]] = {
    "transfers": ("erc20.Transfer",),
    "approvals": ("erc20.Approval",),
    "deposits": ("weth.Deposit",),
    "withdrawals": ("weth.Withdrawal",),
    "swaps": ("v2pair.Swap", "v3pool.Swap"),
    "liquidity": ("v2pair.Mint", "v2pair.Burn", "v3pool.Mint", "v3pool.Burn", "v3pool.Collect"),
    "syncs": ("v2pair.Sync",),
    "flashes": ("v3pool.Flash",),
}
"""The ``events`` a chain run can collect, and the events of :data:`toolkit.codecs.events.EVENTS`
each one reads (``transfers`` includes ERC-721 transfers: the same topic, four topics)."""

_TOO_LARGE = re.compile(
    r"more than \d+ results|range (is )?too (large|big|wide)|block range|range limit|"
    r"limited to|response size|too many (results|logs|blocks)|exceed",
    re.IGNORECASE,
)
_HUGEINT_MAX = 2**127 - 1
_GROW_AFTER = 3  # successes in a row before the chunk doubles back
_BLOCK_BATCH = 100
_TRANSFER = EVENTS["erc20.Transfer"].topic0
_GET_BLOCK = RPCEndpoint("eth_getBlockByNumber")


class RpcFailure(ChainError):
    """A JSON-RPC error answer: its ``code`` and ``message``."""

    def __init__(self, method: str, code: int | None, message: str) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message


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
    """
    if not isinstance(exc, RpcFailure):
        return False
    return exc.code == -32005 or bool(_TOO_LARGE.search(exc.message))


def _result(method: str, answer: Any) -> Any:
    if not isinstance(answer, Mapping):
        raise RpcFailure(method, None, f"not a JSON-RPC answer: {type(answer).__name__}")
    error = answer.get("error")
    if error is not None:
        if isinstance(error, Mapping):
            code = error.get("code")
            raise RpcFailure(
                method, code if isinstance(code, int) else None, str(error.get("message"))
            )
        raise RpcFailure(method, None, str(error))
    return answer.get("result")


def _int(value: Any) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)


def _hex(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    return str(value).lower()


def _amount(value: int) -> int | None:
    return value if value <= _HUGEINT_MAX else None


# Every event of the table has static parameters (address, uint256): they are read straight
# from the words of topics and data. Anything else goes through ``decode_log``.
_STATIC = {"address", "uint256"}
_FAST = {
    event.topic0: (
        event.key,
        event.params,
        sum(1 for p in event.params if p[2]),  # indexed: read from the topics
        sum(1 for p in event.params if not p[2]),  # the rest: one data word each
    )
    for event in EVENTS.values()
    if all(t in _STATIC for t, _, _ in event.params)
}


def _decode(topics: Sequence[str], data: str) -> tuple[str, dict[str, Any]] | None:
    fast = _FAST.get(topics[0]) if topics else None
    if fast is None:
        try:
            decoded = decode_log(topics, data)
        except InvalidValue:
            return None
        args = {k: v.lower() if isinstance(v, str) else v for k, v in decoded.args.items()}
        return decoded.event, args
    key, params, indexed, plain = fast
    if len(topics) != 1 + indexed or len(data) != 2 + 64 * plain:
        return None
    values: dict[str, Any] = {}
    t, d = 1, 2
    for type_, name, is_indexed in params:
        if is_indexed:
            word = topics[t]
            t += 1
        else:
            word = data[d : d + 64]
            d += 64
        if type_ == "address":
            if int(word[-64:-40] or "0", 16):
                return None
            values[name] = "0x" + word[-40:].lower()
        else:
            values[name] = int(word[-64:], 16)
    return key, values


def log_rows(
    chain: int, logs: Iterable[Mapping[str, Any]], run_id: str
) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``logs`` (``eth_getLogs`` answers) for every chain table, by table.

    >>> from toolkit.codecs.events import encode_log
    >>> topics, data = encode_log("erc20.Transfer", "0x" + "11" * 20, "0x" + "22" * 20, 5)
    >>> log = {"address": "0x" + "aa" * 20, "topics": list(topics), "data": data,
    ...        "blockNumber": "0x7", "logIndex": "0x0", "transactionHash": "0x" + "ee" * 32}
    >>> rows = log_rows(8453, [log], "r1")
    >>> rows["token_transfers"][0]["amount"], rows["chain_logs"][0]["block_number"]
    (5, 7)
    """
    tables: dict[str, list[dict[str, Any]]] = {
        table: [] for table in ("chain_logs", *_TOKEN_TABLES, *POOL_TABLES)
    }
    for log in logs:
        topics = [_hex(t) for t in log["topics"]]
        data = _hex(log["data"])
        address = _hex(log["address"])
        raw = _raw_row(chain, log, topics, data, address, run_id)
        tables["chain_logs"].append(raw)
        where = {key: raw[key] for key in ("chain", "block_number", "log_index", "tx_hash")}
        where["run_id"] = run_id
        if len(topics) == 4 and topics[0] == _TRANSFER:  # ERC-721: the tokenId indexed too
            tables["nft_transfers"].append(nft_transfer_row(topics, where, address))
            continue
        decoded = _decode(topics, data)
        if decoded is None:
            continue
        key, args = decoded
        row = pool_event_row(key, args, address, where) or _token_row(key, args, where, address)
        if row is not None:
            tables[row[0]].append(row[1])
    return tables


#: The token tables :func:`log_rows` fills besides the pool tables.
_TOKEN_TABLES: Final = ("token_transfers", "token_approvals", "weth_flows")


def _raw_row(
    chain: int, log: Mapping[str, Any], topics: list[str], data: str, address: str, run_id: str
) -> dict[str, Any]:
    tx_index = log.get("transactionIndex")
    block_hash = log.get("blockHash")
    padded = topics + [None] * (4 - len(topics))
    return {
        "chain": chain,
        "block_number": _int(log["blockNumber"]),
        "log_index": _int(log["logIndex"]),
        "tx_hash": _hex(log["transactionHash"]),
        "tx_index": None if tx_index is None else _int(tx_index),
        "block_hash": None if block_hash is None else _hex(block_hash),
        "address": address,
        "topic0": padded[0],
        "topic1": padded[1],
        "topic2": padded[2],
        "topic3": padded[3],
        "data": data,
        "run_id": run_id,
    }


def _token_row(
    key: str, args: Mapping[str, Any], where: dict[str, Any], address: str
) -> tuple[str, dict[str, Any]] | None:
    """The (table, row) of an ERC-20 transfer or approval or a WETH deposit or withdrawal."""
    place = where | {"token": address}
    if key == "erc20.Transfer":
        value = args["value"]
        parties = {"from_address": args["from"], "to_address": args["to"]}
        table = "token_transfers"
    elif key == "erc20.Approval":
        value = args["value"]
        parties = {"owner": args["owner"], "spender": args["spender"]}
        table = "token_approvals"
    elif key in ("weth.Deposit", "weth.Withdrawal"):
        value = args["wad"]
        deposit = key == "weth.Deposit"
        parties = {
            "kind": "deposit" if deposit else "withdrawal",
            "account": args["dst" if deposit else "src"],
        }
        table = "weth_flows"
    else:
        return None
    return table, place | parties | {"amount": _amount(value), "amount_text": str(value)}


def _block_row(chain: int, block: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    base_fee = block.get("baseFeePerGas")
    return {
        "chain": chain,
        "number": _int(block["number"]),
        "hash": _hex(block["hash"]),
        "parent_hash": _hex(block["parentHash"]) if block.get("parentHash") else None,
        "timestamp": _int(block["timestamp"]),
        "base_fee": None if base_fee is None else _int(base_fee),
        "gas_used": _int(block["gasUsed"]) if block.get("gasUsed") is not None else None,
        "gas_limit": _int(block["gasLimit"]) if block.get("gasLimit") is not None else None,
        "tx_count": len(block.get("transactions") or ()),
        "run_id": run_id,
    }


class ChainCollector(BaseCollector):
    """Blocks and logs of one chain over ``[from_block, to_block]`` (``to_block`` None: the
    latest block when the run starts), read through ``w3`` in chunks of up to ``chunk``
    blocks (halved on a "range too large" answer, never below one block).

    ``chain`` is checked against the node's ``eth_chainId`` (None: take the node's).
    """

    kind = "chain"
    request_errors = (*BaseCollector.request_errors, RpcFailure)
    unit = "block"
    #: Whether the headers of the blocks that hold a log read go to ``chain_blocks``.
    with_blocks: bool = True

    def __init__(
        self,
        w3: Web3,
        store: Store,
        *,
        from_block: int = 0,
        to_block: int | None = None,
        chain: int | None = None,
        events: Sequence[str] = tuple(CHAIN_EVENTS),
        chunk: int = 2000,
        progress: bool = True,
        batch_size: int = 5000,
    ) -> None:
        super().__init__(store, progress=progress, batch_size=batch_size)
        if not isinstance(w3, Web3):
            raise ValueError("w3: must be a web3.Web3")
        self.w3 = w3
        self.from_block = whole(from_block, "from_block", minimum=0)
        self.to_block = (
            None if to_block is None else whole(to_block, "to_block", minimum=self.from_block)
        )
        self.chain = None if chain is None else whole(chain, "chain", minimum=1)
        self.events = self._events(events)
        self.chunk = whole(chunk, "chunk", minimum=1)
        self.size = self.chunk

    @staticmethod
    def _events(events: Sequence[str]) -> tuple[str, ...]:
        chosen = tuple(dict.fromkeys(events)) if not isinstance(events, str) else (events,)
        unknown = [e for e in chosen if e not in CHAIN_EVENTS]
        if not chosen or unknown:
            raise InputError(
                f"events: must be a non-empty list of {', '.join(CHAIN_EVENTS)}", field="events"
            )
        return chosen

    def __repr__(self) -> str:
        return f"ChainCollector(chain={self.chain}, target={self.target_url()!r})"

    def target_url(self) -> str:
        return provider_url(self.w3)

    def _call(self, method: str, params: list[Any]) -> Any:
        return _result(method, self.w3.provider.make_request(RPCEndpoint(method), params))

    # -- the plan ------------------------------------------------------------------------

    def parameters(self) -> dict[str, Any]:
        return {
            "chain": self.chain,
            "from_block": self.from_block,
            "to_block": self.to_block,
            "events": list(self.events),
            "chunk": self.chunk,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        self.chain = int(parameters["chain"])
        self.from_block = int(parameters["from_block"])
        self.to_block = int(parameters["to_block"])
        self.events = self._events(parameters["events"])
        self.chunk = int(parameters.get("chunk") or self.chunk)
        self.size = self.chunk
        self._check_chain()

    def _check_chain(self) -> None:
        node = _int(self._call("eth_chainId", []))
        if self.chain is not None and node != self.chain:
            raise InputError(
                f"chain: the node serves chain {node}, not {self.chain}", field="chain"
            )
        self.chain = node

    def prepare(self) -> None:
        self._check_chain()
        head = _int(self._call("eth_blockNumber", []))
        # A range past the head would store empty chunks as if read: refuse it with the head.
        for name, block in (("from_block", self.from_block), ("to_block", self.to_block)):
            if block is not None and block > head:
                raise InputError(
                    f"{name}: block {block} is beyond the chain head ({head})", field=name
                )
        if self.to_block is None:
            self.to_block = head

    def total(self) -> int | None:
        return None if self.to_block is None else self.to_block - self.from_block + 1

    # -- the loop ------------------------------------------------------------------------

    def _resume_from(self, run_id: str) -> int:
        frame = self.store.query(
            "SELECT max(to_block) AS b FROM chain_ranges WHERE run_id = $run", {"run": run_id}
        )
        last = frame["b"][0]
        return self.from_block if last is None else int(last) + 1

    def _logs(self, first: int, last: int) -> list[Mapping[str, Any]]:
        topics = [[EVENTS[key].topic0 for e in self.events for key in CHAIN_EVENTS[e]]]
        query = {"fromBlock": hex(first), "toBlock": hex(last), "topics": topics}
        answer = self._call("eth_getLogs", [query])
        return list(answer or [])

    def _tables(
        self, chain: int, logs: Sequence[Mapping[str, Any]], run_id: str
    ) -> dict[str, list[dict[str, Any]]]:
        """The rows of one range's logs, by table (a subclass reading other logs decodes them
        its own way; the ranges, chunking and resume stay the same)."""
        return log_rows(chain, logs, run_id)

    def _blocks(self, numbers: Sequence[int]) -> list[Mapping[str, Any]]:
        blocks: list[Mapping[str, Any]] = []
        provider = self.w3.provider
        for i in range(0, len(numbers), _BLOCK_BATCH):
            part = numbers[i : i + _BLOCK_BATCH]
            batch = getattr(provider, "make_batch_request", None)
            if len(part) == 1 or batch is None:
                answers: Any = [provider.make_request(_GET_BLOCK, [hex(n), False]) for n in part]
            else:
                answers = batch([(_GET_BLOCK, [hex(n), False]) for n in part])
            if not isinstance(answers, list):
                _result("eth_getBlockByNumber", answers)  # raises the batch's error
                raise RpcFailure("eth_getBlockByNumber", None, "batch answered by one object")
            for number, answer in zip(part, answers, strict=True):
                block = _result("eth_getBlockByNumber", answer)
                if block is None:
                    raise RpcFailure("eth_getBlockByNumber", None, f"block {number} not found")
                blocks.append(block)
        return blocks

    def _checkpoint(self, writer: BatchWriter, ranges: list[dict[str, Any]]) -> None:
        if not ranges:
            return
        writer.flush()  # every row of the ranges first, then the record that they are stored
        self.store.append(
            "chain_ranges", pl.DataFrame(ranges, schema=polars_schema("chain_ranges"))
        )
        ranges.clear()

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        assert self.chain is not None and self.to_block is not None  # set by prepare/restore
        chain, last_block = self.chain, self.to_block
        start = self._resume_from(run_id) if resumed else self.from_block
        bar.update(start - self.from_block)
        ranges: list[dict[str, Any]] = []
        streak = 0
        while start <= last_block:
            end = min(last_block, start + self.size - 1)
            try:
                logs = self._logs(start, end)
            except RpcFailure as exc:
                if not range_too_large(exc) or self.size == 1:
                    raise
                self.size = max(1, (end - start + 1) // 2)
                streak = 0
                continue
            self.note(True)
            streak += 1
            if streak >= _GROW_AFTER and self.size < self.chunk:
                self.size = min(self.chunk, self.size * 2)
                streak = 0
            for table, rows in self._tables(chain, logs, run_id).items():
                if rows:
                    writer.add(table, rows)
            numbers = sorted({_int(log["blockNumber"]) for log in logs})
            if numbers and self.with_blocks:
                writer.add(
                    "chain_blocks", [_block_row(chain, b, run_id) for b in self._blocks(numbers)]
                )
            ranges.append(
                {
                    "run_id": run_id,
                    "chain": chain,
                    "from_block": start,
                    "to_block": end,
                    "logs": len(logs),
                }
            )
            if writer.pending() >= self.batch_size or len(ranges) >= 100:
                self._checkpoint(writer, ranges)
            bar.update(end - start + 1)
            start = end + 1
        self._checkpoint(writer, ranges)
