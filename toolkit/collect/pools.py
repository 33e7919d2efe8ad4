"""Uniswap pools on a real chain: found from their factories' creation logs, then read at one
block.

:class:`PoolCollector` is the chain collector (:class:`~toolkit.collect.chain.ChainCollector`:
the same block ranges, chunking, halving on "range too large" and resume from
``chain_ranges``) reading other logs: the V3 factory's ``PoolCreated`` and the V2 factory's
``PairCreated`` between the given tokens (both tokens in the set, filtered by the node through
the indexed topics), stored in ``amm_pools``. The factories default to the registry's for the
chain (``[[factories]]`` in ``toolkit/chain/registry.toml``) and the scan to the block the
oldest was deployed at; the tokens to the registry's tokens on the chain.

Then every pool found (in this run or an earlier one, among the same tokens and factories) is
read at the run's last block (:mod:`toolkit.collect.pool_state`) into ``amm_pool_snapshots``
(``snapshot_id`` = the run id) and its initialised ticks within ``depth_ticks`` of the price
into ``amm_pool_ticks``. The chain id is the node's (``eth_chainId``).

>>> PoolCollector.kind, PoolCollector.with_blocks
('pools', False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from eth_utils import keccak, to_checksum_address
from web3 import Web3

from toolkit.arguments import whole
from toolkit.chain import default_registry
from toolkit.chain.errors import NotInRegistry
from toolkit.collect.chain import ChainCollector
from toolkit.collect.pool_state import (
    DEFAULT_DEPTH_TICKS,
    PoolRef,
    StateReader,
    read_pool_states,
    tick_rows,
)
from toolkit.collect.prices import record_pool_prices
from toolkit.collect.rpc import hex_int, hex_text
from toolkit.collect.run import Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.store import Store

__all__ = ["PAIR_CREATED", "POOL_CREATED", "PoolCollector", "pool_rows"]

POOL_CREATED: Final = "0x" + keccak(text="PoolCreated(address,address,uint24,int24,address)").hex()
PAIR_CREATED: Final = "0x" + keccak(text="PairCreated(address,address,address,uint256)").hex()
_V2_FEE_PIPS: Final = 3000  # UniswapV2Pair's 0.3 %, in the pips V3 counts fees in


def _address(word: str) -> str:
    return to_checksum_address("0x" + word[-40:])


def _signed24(word: str) -> int:
    value = int(word, 16) & 0xFFFFFF
    return value - (1 << 24) if value >> 23 else value


def pool_rows(
    chain: int, logs: Sequence[Mapping[str, Any]], factories: Mapping[str, str], run_id: str
) -> list[dict[str, Any]]:
    """``amm_pools`` rows of the creation logs among ``logs`` emitted by ``factories``
    (lower-case address → ``v2``/``v3``); other logs are skipped."""
    rows = []
    for log in logs:
        topics = [hex_text(t) for t in log["topics"]]
        data = hex_text(log["data"])[2:]
        kind = factories.get(hex_text(log["address"]))
        if not topics or kind is None or len(topics) < 3:
            continue
        row = {
            "chain": chain,
            "token0": _address(topics[1]),
            "token1": _address(topics[2]),
            "factory": to_checksum_address(hex_text(log["address"])),
            "created_block": hex_int(log["blockNumber"]),
            "log_index": hex_int(log["logIndex"]),
            "tx_hash": hex_text(log["transactionHash"]),
            "run_id": run_id,
        }
        if kind == "v3" and topics[0] == POOL_CREATED and len(topics) == 4 and len(data) >= 128:
            row |= {
                "pool": _address(data[64:128]),
                "kind": "v3",
                "fee": int(topics[3], 16),
                "tick_spacing": _signed24(data[:64]),
            }
        elif kind == "v2" and topics[0] == PAIR_CREATED and len(data) >= 64:
            row |= {"pool": _address(data[:64]), "kind": "v2", "fee": _V2_FEE_PIPS}
        else:
            continue
        rows.append(row)
    return rows


def _checked(address: str, name: str) -> str:
    if not isinstance(address, str) or not Web3.is_address(address):
        raise InputError(
            f"{name}: must be a 0x-prefixed 20-byte address, got {address!r}", field=name
        )
    return to_checksum_address(address)


class PoolCollector(ChainCollector):
    """Discover the Uniswap pools among ``tokens`` over ``[from_block, to_block]`` and snapshot
    them at ``to_block`` (module docstring). ``v3_factory``/``v2_factory`` replace the
    registry's factories (give either or both); ``from_block`` None starts at the oldest
    factory's deployment block; ``snapshot=False`` only discovers."""

    kind = "pools"
    with_blocks = False

    def __init__(
        self,
        w3: Web3,
        store: Store,
        *,
        tokens: Sequence[str] | None = None,
        v3_factory: str | None = None,
        v2_factory: str | None = None,
        from_block: int | None = None,
        to_block: int | None = None,
        chain: int | None = None,
        chunk: int = 2000,
        depth_ticks: int = DEFAULT_DEPTH_TICKS,
        snapshot: bool = True,
        progress: bool = True,
        batch_size: int = 5000,
    ) -> None:
        super().__init__(
            w3,
            store,
            from_block=0 if from_block is None else from_block,
            to_block=to_block,
            chain=chain,
            chunk=chunk,
            progress=progress,
            batch_size=batch_size,
        )
        self.start_given = from_block is not None
        self.tokens = None if tokens is None else [_checked(t, "tokens") for t in tokens]
        if self.tokens is not None and len(set(self.tokens)) < 2:
            raise InputError("tokens: must name at least two distinct tokens", field="tokens")
        self.factories: dict[str, str] = {}  # lower-case address -> kind
        for kind, factory in (("v3", v3_factory), ("v2", v2_factory)):
            if factory is not None:
                self.factories[_checked(factory, f"{kind}_factory").lower()] = kind
        self.depth_ticks = whole(depth_ticks, "depth_ticks", minimum=1)
        self.snapshot = bool(snapshot)
        self.reader: StateReader | None = None  # the last snapshot's reader (its counts)

    def __repr__(self) -> str:
        return f"PoolCollector(chain={self.chain}, target={self.target_url()!r})"

    def _defaults(self) -> None:
        assert self.chain is not None
        registry = default_registry()
        try:
            listed = registry.factories(self.chain)
            known = [t.address for t in registry.tokens(self.chain)]
        except NotInRegistry:
            listed, known = (), []
        if not self.factories:
            if not listed:
                raise InputError(
                    f"v3_factory/v2_factory: chain {self.chain} has no Uniswap factories in the "
                    "registry; give the factory addresses",
                    field="v3_factory/v2_factory",
                )
            self.factories = {f.address.lower(): f.kind for f in listed}
            if not self.start_given:
                self.from_block = min(f.block for f in listed)
        if self.tokens is None:
            if len(known) < 2:
                raise InputError(
                    f"tokens: chain {self.chain} has fewer than two tokens in the registry; "
                    "give the token addresses",
                    field="tokens",
                )
            self.tokens = [to_checksum_address(t) for t in known]

    def prepare(self) -> None:
        self._check_chain()
        self._defaults()
        super().prepare()

    def parameters(self) -> dict[str, Any]:
        return super().parameters() | {
            "tokens": self.tokens,
            "factories": self.factories,
            "depth_ticks": self.depth_ticks,
            "snapshot": self.snapshot,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        self.tokens = [str(t) for t in parameters["tokens"]]
        self.factories = {str(k): str(v) for k, v in dict(parameters["factories"]).items()}
        self.depth_ticks = int(parameters["depth_ticks"])
        self.snapshot = bool(parameters["snapshot"])
        super().restore(parameters)

    def _logs(self, first: int, last: int) -> list[Mapping[str, Any]]:
        assert self.tokens is not None
        words = ["0x" + "00" * 12 + t[2:].lower() for t in self.tokens]
        query = {
            "fromBlock": hex(first),
            "toBlock": hex(last),
            "address": [to_checksum_address(a) for a in self.factories],
            "topics": [[POOL_CREATED, PAIR_CREATED], words, words],
        }
        return list(self._call("eth_getLogs", [query]) or [])

    def _tables(
        self, chain: int, logs: Sequence[Mapping[str, Any]], run_id: str
    ) -> dict[str, list[dict[str, Any]]]:
        return {"amm_pools": pool_rows(chain, logs, self.factories, run_id)}

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        super().collect(run_id, writer, bar, resumed)
        if self.snapshot:
            self._snapshot(run_id, writer)

    def known_pools(self, last: int | None = None) -> list[PoolRef]:
        """The stored pools of this chain among the run's tokens, from its factories, created
        by block ``last`` (default: the run's last block)."""
        assert self.tokens is not None and self.to_block is not None
        frame = self.store.query(
            "SELECT pool, kind, token0, token1, fee, tick_spacing, factory FROM amm_pools "
            "WHERE chain = $chain AND created_block <= $last ORDER BY created_block, log_index",
            {"chain": self.chain, "last": self.to_block if last is None else last},
        )
        tokens = {t.lower() for t in self.tokens}
        return [
            PoolRef(r["pool"], r["kind"], r["token0"], r["token1"], r["fee"], r["tick_spacing"])
            for r in frame.iter_rows(named=True)
            if r["factory"].lower() in self.factories
            and r["token0"].lower() in tokens
            and r["token1"].lower() in tokens
        ]

    def _snapshot(self, run_id: str, writer: BatchWriter) -> None:
        assert self.to_block is not None
        stored = self.store.query(
            "SELECT count(*) AS n FROM amm_pool_snapshots WHERE snapshot_id = $id", {"id": run_id}
        )["n"][0]
        if not stored:
            self.snapshot_at(run_id, self.to_block, writer)

    def snapshot_at(self, snapshot_id: str, number: int, writer: BatchWriter) -> int:
        """Read every known pool at block ``number`` into ``amm_pool_snapshots`` and
        ``amm_pool_ticks`` under ``snapshot_id`` (flushed, with the pools' USD prices); the
        pools read. Each row names the block's hash, so a read at an orphaned block is found."""
        assert self.chain is not None
        pools = self.known_pools(number)
        if not pools:
            return 0
        block = self._call("eth_getBlockByNumber", [hex(number), False])
        observed = datetime.fromtimestamp(hex_int(block["timestamp"]), UTC)
        self.reader = StateReader.detect(self.w3, number)
        rows, ticks = read_pool_states(self.reader, pools, depth_ticks=self.depth_ticks)
        place = {"snapshot_id": snapshot_id, "chain": self.chain, "observed_at": observed,
                 "block_hash": hex_text(block["hash"])}  # fmt: skip
        writer.add("amm_pool_snapshots", [place | row for row in rows])
        writer.add("amm_pool_ticks", tick_rows(snapshot_id, self.chain, ticks))
        writer.flush()
        record_pool_prices(self.store, snapshot_id, self.w3)
        return len(pools)
