"""Snapshots of the discovery endpoints: tokens, pools and fee tiers, under one snapshot id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from toolkit.client import BadRequest, NotFound, ServiceClient
from toolkit.collect.grid import DEFAULT_CHAINS, DEFAULT_SYMBOLS
from toolkit.collect.rows import fee_tier_rows, utc
from toolkit.collect.run import Collector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.resources.types import PoolType
from toolkit.store import Store

__all__ = ["POOL_TYPES", "Snapshot"]

POOL_TYPES: tuple[str, ...] = get_args(PoolType)


class Snapshot(Collector):
    """One snapshot of the target's tokens (every chain in ``chains``), pools (every pool type
    of every token in ``symbols``) and fee tiers (every onboarded route), ``snapshot_id`` = the
    run id. Pool types and routes the target does not serve (400/404) are skipped; a resumed
    snapshot is taken again under the same id (the writes are idempotent).

    >>> Snapshot(client, Store(":memory:"), progress=False).run().status
    'completed'
    """

    kind = "snapshot"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        chains: Sequence[int] = DEFAULT_CHAINS,
        symbols: Sequence[str] = DEFAULT_SYMBOLS,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        super().__init__(client, store, progress=progress, batch_size=batch_size)
        if not chains or not all(isinstance(c, int) and c > 0 for c in chains):
            raise ValueError("chains: must be a non-empty list of chain ids")
        if not symbols or not all(isinstance(s, str) and s for s in symbols):
            raise ValueError("symbols: must be a non-empty list of token symbols")
        self.chains = tuple(chains)
        self.symbols = tuple(symbols)

    def parameters(self) -> dict[str, Any]:
        return {"chains": list(self.chains), "symbols": list(self.symbols)}

    def restore(self, parameters: Mapping[str, Any]) -> None:
        self.chains = tuple(int(c) for c in parameters.get("chains") or self.chains)
        self.symbols = tuple(str(s) for s in parameters.get("symbols") or self.symbols)

    def total(self) -> int | None:
        chains, symbols = len(self.chains), len(self.symbols)
        return chains + chains * symbols * len(POOL_TYPES) + chains * chains * symbols

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        present = {chain: self._tokens(chain, run_id, writer, bar) for chain in self.chains}
        self._pools(present, run_id, writer, bar)
        self._fee_tiers(present, run_id, writer, bar)

    def _tokens(
        self, chain: int, run_id: str, writer: BatchWriter, bar: Progress
    ) -> dict[str, str]:
        """Snapshot ``chain``'s tokens; symbol -> address of those it lists."""
        try:
            tokens = self.client.tokens(chain)
            self.note(True)
        except (NotFound, BadRequest) as exc:
            self.note(False, str(exc))
            tokens = {}
        observed = utc(self.clock())
        writer.add(
            "token_snapshots",
            [
                {
                    "snapshot_id": run_id,
                    "observed_at": observed,
                    "chain": chain,
                    "symbol": symbol,
                    "address": token.address,
                    "decimals": token.decimals,
                }
                for symbol, token in tokens.items()
            ],
        )
        bar.update(1)
        return {s: t.address for s, t in tokens.items()}

    def _pools(
        self, present: dict[int, dict[str, str]], run_id: str, writer: BatchWriter, bar: Progress
    ) -> None:
        """Snapshot each pool of each listed token (a pool the service does not have is
        skipped)."""
        for chain in self.chains:
            for symbol in self.symbols:
                for pool_type in POOL_TYPES:
                    bar.update(1)
                    if symbol not in present[chain]:
                        continue
                    try:
                        pool = self.client.pool(pool_type, chain, symbol)  # type: ignore[arg-type]
                    except (NotFound, BadRequest):
                        continue
                    writer.add(
                        "pool_snapshots",
                        [
                            {
                                "snapshot_id": run_id,
                                "observed_at": utc(self.clock()),
                                "chain": chain,
                                "token": symbol,
                                "pool_type": pool_type,
                                "address": pool.address,
                                "balance": pool.balance_int,
                            }
                        ],
                    )

    def _fee_tiers(
        self, present: dict[int, dict[str, str]], run_id: str, writer: BatchWriter, bar: Progress
    ) -> None:
        """Snapshot the fee tiers of each route between chains that both list the token."""
        for symbol in self.symbols:
            for src in self.chains:
                for dst in self.chains:
                    bar.update(1)
                    if symbol not in present[src] or symbol not in present[dst]:
                        continue
                    try:
                        tiers = self.client.fees(src, dst, symbol, symbol)
                    except (NotFound, BadRequest):
                        continue
                    writer.add(
                        "fee_tiers",
                        fee_tier_rows(run_id, self.clock(), src, dst, symbol, tiers),
                    )
