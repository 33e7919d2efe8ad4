"""On-chain collection: blocks and logs read through web3.py into DuckDB, by block ranges.

:class:`ChainCollector` reads ``eth_getLogs`` over ``[from_block, to_block]`` in chunks of
blocks, for the topics of the chosen ``events`` (:data:`CHAIN_EVENTS`: ``transfers``,
``approvals``, ``deposits``, ``withdrawals``, ``swaps``, ``liquidity``, ``syncs``,
``flashes``, ``orders``), and stores:

- ``chain_logs``: every log read, raw (address, topics, data);
- ``token_transfers`` / ``token_approvals`` / ``weth_flows``: the logs decoded with
  :mod:`toolkit.codecs.events` (addresses lowercase, amounts exact: ``amount_text`` always,
  ``amount`` HUGEINT unless it exceeds it);
- ``pool_swaps`` / ``pool_liquidity`` / ``pool_syncs`` / ``pool_flashes``: Uniswap V2 and V3
  pool events, and ``nft_transfers``: ERC-721 transfers (position NFTs), apart from the
  ERC-20 ones (:mod:`toolkit.collect.pool_events`);
- ``escrow_events`` / ``escrow_order_legs`` / ``output_fills``: the partner-escrow settlers'
  ``Open``, ``Finalised``, ``Refunded`` and ``OutputFilled``: the orders opened, finalised,
  refunded and filled on this chain, with their exact amounts
  (:mod:`toolkit.collect.order_events`; :func:`toolkit.store.orders.chain_orders` joins them
  into one row per order);
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

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl
from web3 import Web3
from web3.types import RPCEndpoint

from toolkit.arguments import whole
from toolkit.codecs.events import EVENTS
from toolkit.collect.logs import block_row, log_rows
from toolkit.collect.prices import record_token_names
from toolkit.collect.rpc import RpcFailure, hex_int, provider_url, range_too_large, rpc_result
from toolkit.collect.run import BaseCollector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.store import Store, polars_schema

__all__ = ["CHAIN_EVENTS", "ChainCollector"]

CHAIN_EVENTS: Mapping[str, tuple[str, ...]] = {
    "transfers": ("erc20.Transfer",),
    "approvals": ("erc20.Approval",),
    "deposits": ("weth.Deposit",),
    "withdrawals": ("weth.Withdrawal",),
    "swaps": ("v2pair.Swap", "v3pool.Swap"),
    "liquidity": ("v2pair.Mint", "v2pair.Burn", "v3pool.Mint", "v3pool.Burn", "v3pool.Collect"),
    "syncs": ("v2pair.Sync",),
    "flashes": ("v3pool.Flash",),
    "orders": (
        "escrow.Open",
        "escrow.Finalised",
        "escrow.Refunded",
        "outputSettler.OutputFilled",
    ),
}
"""The ``events`` a chain run can collect, and the events of :data:`toolkit.codecs.events.EVENTS`
each one reads (``transfers`` includes ERC-721 transfers: the same topic, four topics)."""

_GROW_AFTER = 3  # successes in a row before the chunk doubles back
_BLOCK_BATCH = 100
_GET_BLOCK = RPCEndpoint("eth_getBlockByNumber")


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
        events: Sequence[str] | None = None,
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
    def _events(events: Sequence[str] | None) -> tuple[str, ...]:
        if events is None:  # every event the table knows
            return tuple(CHAIN_EVENTS)
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
        return rpc_result(method, self.w3.provider.make_request(RPCEndpoint(method), params))

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
        node = hex_int(self._call("eth_chainId", []))
        if self.chain is not None and node != self.chain:
            raise InputError(
                f"chain: the node serves chain {node}, not {self.chain}", field="chain"
            )
        self.chain = node

    def prepare(self) -> None:
        self._check_chain()
        head = hex_int(self._call("eth_blockNumber", []))
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
        tables = log_rows(chain, logs, run_id)
        self._name_tokens(chain, tables["escrow_order_legs"], tables["output_fills"])
        return tables

    def _name_tokens(self, chain: int, *rows: Sequence[Mapping[str, Any]]) -> None:
        """Cache in ``tokens`` the names of the orders' tokens, so that the store can add up
        an order's input and output by symbol (the same token has another address on each
        chain): this chain's through ``w3`` when the registry does not list them, another
        chain's from the registry only (this node cannot read them)."""
        by_chain: dict[int, set[str]] = {}
        for row in (r for part in rows for r in part):
            on = row.get("leg_chain", chain)
            if on is not None and len(row["token"]) == 42:  # an address, not a wider word
                by_chain.setdefault(int(on), set()).add(row["token"])
        for on, addresses in sorted(by_chain.items()):
            w3 = self.w3 if on == chain else None
            record_token_names(self.store, w3, on, sorted(addresses))

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
                rpc_result("eth_getBlockByNumber", answers)  # raises the batch's error
                raise RpcFailure("eth_getBlockByNumber", None, "batch answered by one object")
            for number, answer in zip(part, answers, strict=True):
                block = rpc_result("eth_getBlockByNumber", answer)
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
        start = self._resume_from(run_id) if resumed else self.from_block
        bar.update(start - self.from_block)
        self.collect_ranges(run_id, writer, bar, start)

    def collect_ranges(
        self, run_id: str, writer: BatchWriter, bar: Progress, start: int | None = None
    ) -> None:
        """Read ``[start, to_block]`` (``start`` None: ``from_block``) range by range, each
        range's rows flushed before its ``chain_ranges`` record."""
        assert self.chain is not None and self.to_block is not None  # set by prepare/restore
        chain, last_block = self.chain, self.to_block
        start = self.from_block if start is None else start
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
            numbers = sorted({hex_int(log["blockNumber"]) for log in logs})
            if numbers and self.with_blocks:
                writer.add(
                    "chain_blocks", [block_row(chain, b, run_id) for b in self._blocks(numbers)]
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
