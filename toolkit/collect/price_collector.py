"""USD prices read on chain through web3.py into the store's ``prices`` (``toolkit collect
prices``).

On each chain, at its latest block:

- every USD price feed the chain registry lists there (``[[price_feeds]]``: Chainlink's
  ``AggregatorV3Interface``, the feeds the credit hubs value collateral with):
  ``latestRoundData()`` over ``decimals()``, stored with source ``oracle`` at the round's
  ``updatedAt``. A feed that reverts, or answers a price of 0 or below or a round never
  updated, is a failed read (Chainlink's own "no valid answer");
- the mid price of each pool against a USD stablecoin (:func:`~toolkit.collect.prices.
  pool_price_rows`: a V3 pool's ``slot0``, a V2 pair's reserves, the median over a token's
  pools), stored with source ``pool`` at the block's time. The pools are the ones given, else
  those the store knows on the chain (found by ``toolkit collect pools``, or read by a swap
  sweep); each is read on chain for its tokens (``token0``, ``token1``) and kind (``slot0``
  answers: V3, else ``getReserves``: V2), so a bare address is enough. A pool that answers
  neither is a failed read.

Reads go out as JSON-RPC batches of ``eth_call``s at one block, a call that reverts answering
nothing (a V2 pair has no ``slot0``) without failing the rest of its batch. A run in which
every read failed ends ``failed`` naming the first (:class:`~toolkit.collect.run.CollectionFailed`).

>>> PriceCollector.kind, PriceCollector.unit
('prices', 'chain')
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from eth_abi import decode
from web3 import Web3

from toolkit.chain import default_registry
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import PriceFeedEntry
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.function_table import FUNCTIONS
from toolkit.codecs.functions import decode_result
from toolkit.collect.pool_state import StateReader
from toolkit.collect.prices import pool_price_rows
from toolkit.collect.rows import utc
from toolkit.collect.rpc import RpcFailure, provider_url
from toolkit.collect.run import BaseCollector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.scenario import Scenario
from toolkit.store import Store

__all__ = ["PriceCollector", "pool_addresses"]


def _selector(key: str) -> bytes:
    return bytes.fromhex(FUNCTIONS[key].selector[2:])


_ROUND: Final = _selector("priceFeed.latestRoundData")
_DECIMALS: Final = _selector("erc20.decimals")
#: Reads of one chain before giving up on a head that keeps moving.
_ATTEMPTS: Final = 3
_POOL_READS: Final = tuple(
    _selector(k) for k in ("amm.token0", "amm.token1", "v3pool.slot0", "v2pair.getReserves")
)


def pool_addresses(values: Sequence[Any]) -> list[str]:
    """Pool addresses, lowercase; ValueError naming ``pools`` for one that is not an address.

    >>> pool_addresses(["0x" + "AB" * 20])[0][:6]
    '0xabab'
    """
    for value in values:
        if not isinstance(value, str) or not Web3.is_address(value):
            raise InputError(
                f"pools: must be 0x-prefixed 20-byte addresses, got {value!r}", field="pools"
            )
    return [str(value).lower() for value in values]


class PriceCollector(BaseCollector):
    """Read the registry's price feeds and the pools' mid prices of each chain of ``web3s``
    (chain id → ``Web3``) into ``prices`` (module docstring). ``pools`` (chain id → pool
    addresses) replaces the store's known pools on those chains; ``scenario`` is a simulated
    target's (its prices are stored with source ``scenario``, as every simulated run's).
    After a run, :attr:`reads` counts the ``eth_call``s and :attr:`seconds` the time per chain.
    """

    kind = "prices"
    unit = "chain"
    request_errors = (*BaseCollector.request_errors, RpcFailure)

    def __init__(
        self,
        web3s: Mapping[int, Web3],
        store: Store,
        *,
        pools: Mapping[int, Sequence[str]] | None = None,
        scenario: Scenario | None = None,
        progress: bool = True,
    ) -> None:
        super().__init__(store, progress=progress)
        if not web3s:
            raise ValueError("web3s: give at least one chain's Web3")
        self.web3s = dict(sorted(web3s.items()))
        self.pools = {
            int(chain): pool_addresses(addresses) for chain, addresses in (pools or {}).items()
        }
        self._scenario = scenario
        self.reads = 0
        self.seconds: dict[int, float] = {}

    def __repr__(self) -> str:
        return f"PriceCollector(chains={list(self.web3s)}, target={self.target_url()!r})"

    def target_url(self) -> str:
        return provider_url(next(iter(self.web3s.values())))

    def parameters(self) -> dict[str, Any]:
        return {
            "chains": list(self.web3s),
            "pools": {str(chain): list(p) for chain, p in self.pools.items()},
        }

    def scenario(self) -> Scenario | None:
        return self._scenario

    def rows_in(self, run_id: str, writer: BatchWriter) -> int:
        # prices carry no run id (a price is a fact of its time, whichever run read it)
        return writer.written

    def total(self) -> int:
        return len(self.web3s)

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        for chain, w3 in self.web3s.items():
            started = time.perf_counter()
            writer.add("prices", self._read_chain(chain, w3))
            self.seconds[chain] = time.perf_counter() - started
            bar.update(1)

    def _read_chain(self, chain: int, w3: Web3) -> list[dict[str, Any]]:
        """The feeds' and pools' prices of one chain, every call at one block. A node that
        keeps only recent state (the simulated chains keep the latest alone) refuses a block
        the head has moved past while we read: then read again at the new head."""
        attempts = 0
        while True:
            attempts += 1
            block = w3.eth.get_block("latest")
            number = int(block["number"])
            reader = StateReader(w3, number)
            try:
                rows = self._feeds(chain, reader)
                rows += self._pool_mids(chain, w3, reader, utc(int(block["timestamp"])))
                return rows
            except RpcFailure:
                if attempts == _ATTEMPTS or w3.eth.block_number == number:
                    raise
            finally:
                self.reads += reader.calls

    def _feeds(self, chain: int, reader: StateReader) -> list[dict[str, Any]]:
        try:
            feeds = default_registry().price_feeds(chain)
        except NotInRegistry:
            return []
        answers = reader.call_many([(f.address, s) for f in feeds for s in (_ROUND, _DECIMALS)])
        rows = []
        for i, feed in enumerate(feeds):
            row = self._feed_row(chain, feed, answers[2 * i], answers[2 * i + 1])
            if row is not None:
                rows.append(row)
        return rows

    def _feed_row(
        self, chain: int, feed: PriceFeedEntry, data: bytes | None, places: bytes | None
    ) -> dict[str, Any] | None:
        where = f"the {feed.symbol} / USD feed {feed.address} on chain {chain}"
        try:
            _, answer, _, updated, _ = decode_result("priceFeed.latestRoundData", data or b"")
            (decimals,) = decode_result("erc20.decimals", places or b"")
        except InvalidValue:
            self.note(False, f"{where}: latestRoundData or decimals reverted or returned nothing")
            return None
        if answer <= 0 or updated == 0:
            self.note(False, f"{where}: no valid round (answer {answer}, updatedAt {updated})")
            return None
        self.note(True)
        usd = Decimal(answer).scaleb(-int(decimals))
        return _row("oracle", chain, feed.token, feed.symbol, utc(int(updated)), usd)

    def _known_pools(self, chain: int) -> list[str]:
        frame = self.store.query(
            "SELECT DISTINCT lower(pool) AS pool FROM ("
            "SELECT pool FROM amm_pools WHERE chain = $chain "
            "UNION ALL SELECT pool FROM amm_pool_snapshots WHERE chain = $chain) ORDER BY 1",
            {"chain": chain},
        )
        return [str(p) for p in frame["pool"]]

    def _pool_mids(
        self, chain: int, w3: Web3, reader: StateReader, at: Any
    ) -> list[dict[str, Any]]:
        pools = self.pools.get(chain) or self._known_pools(chain)
        answers = reader.call_many([(p, s) for p in pools for s in _POOL_READS])
        states = []
        for i, pool in enumerate(pools):
            token0, token1, slot0, reserves = answers[4 * i : 4 * i + 4]
            if not token0 or not token1 or not (slot0 or reserves):
                self.note(
                    False,
                    f"pool {pool} on chain {chain}: answers neither slot0 (Uniswap "
                    "V3) nor getReserves (V2) with its token0 and token1",
                )
                continue
            self.note(True)
            state: dict[str, Any] = {
                "chain": chain,
                "observed_at": at,
                "token0": "0x" + token0[12:32].hex(),
                "token1": "0x" + token1[12:32].hex(),
            }
            if slot0:
                state["sqrt_price_x96"] = str(decode(["uint160"], slot0[:32])[0])
            else:
                r0, r1 = decode(["uint112", "uint112"], reserves[:64])  # type: ignore[index]
                state |= {"reserve0": r0, "reserve1": r1}
            states.append(state)
        return [
            _row("pool", r["chain"], r["token"], r["symbol"], r["observed_at"], r["usd"])
            for r in pool_price_rows(self.store, states, w3)
        ]


def _row(source: str, chain: int, token: str, symbol: str, at: Any, usd: Decimal) -> dict[str, Any]:
    return {
        "source": source,
        "chain": int(chain),
        "token": token.lower(),
        "symbol": symbol,
        "observed_at": at,
        "usd": usd,
    }
