"""The service's liquidity pools as read-only contracts: the engine's figures over ``eth_call``.

A :class:`LiquidityPool` sits at every scenario pool's address on the pool's chain (one contract
per address: pools of several tokens at one address share it) with four views, declared as the
``pool.*`` functions of :data:`toolkit.codecs.function_table.FUNCTIONS`:
``balance(token)``, ``reserved(token)``, ``outstanding(token)`` and ``available(token)``
(``balance - reserved - outstanding``), in the token's smallest unit. Several pools of one token
at one address answer their sum. A token with no pool at the address reverts with
``pool: no pool for token ...``.

The contract holds no figures of its own: the reservation engine is the authority on pools (a
quote's reservation is nowhere on chain), so each view asks the engine, through a
:class:`PoolLink` the embedded service connects
(:meth:`toolkit.world.evm.Chains.connect_pools`), for the pool's figures at the time of the
call (reservations that lapsed by then are released). Snapshots share the link rather than copy
it, so after ``evm_revert`` the views read the restored engine. Chains built without an engine
(no link connected) revert with ``pool: no engine connected``. Addresses the scenario already
uses on that chain for a token, the escrow or the output settler get no pool contract.

>>> from toolkit.scenario import load_scenario
>>> [p.address for p in LiquidityPool.build(load_scenario("single-pool"), 8453)]
['0xb58bb9643884abbbad64fa7ebc874c5481e5c032']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Protocol

from toolkit.scenario import Scenario
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import Contract, Message, Revert, register

__all__ = ["LiquidityPool", "PoolFigures", "PoolLink"]


class PoolFigures(Protocol):
    """What a pool read answers (the engine's ``PoolState`` has these)."""

    @property
    def balance(self) -> int: ...

    @property
    def reserved(self) -> int: ...

    @property
    def outstanding(self) -> int: ...

    @property
    def available(self) -> int: ...


class PoolLink:
    """The read behind the pool contracts: a pool id → its figures now (None: not connected).

    Shared, never copied: a ledger snapshot keeps the same link.
    """

    def __init__(self) -> None:
        self.read: Callable[[str], PoolFigures] | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> PoolLink:
        return self


class LiquidityPool(Contract):
    """The service's pools at one address on one chain (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "pool.balance": "balance",
        "pool.reserved": "reserved",
        "pool.outstanding": "outstanding",
        "pool.available": "available",
    }

    def __init__(self, address: str, pools: Mapping[str, tuple[str, ...]]) -> None:
        super().__init__(address)
        #: Token address (lowercase) → the ids of the pools of that token at this address.
        self.pools = dict(pools)
        self.link = PoolLink()

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        chain = scenario.chain(chain_id)
        taken = {t.address.lower() for t in scenario.tokens if t.chain == chain_id}
        taken |= {chain.escrow.lower(), chain.output_settler.lower()}
        found: dict[str, dict[str, tuple[str, ...]]] = {}
        for pool in scenario.pools:
            address = pool.address.lower()
            if pool.chain != chain_id or address in taken:
                continue
            token = scenario.token(chain_id, pool.token).address.lower()
            held = found.setdefault(address, {})
            held[token] = (*held.get(token, ()), pool.id)
        return [cls(address, pools) for address, pools in found.items()]

    def _figure(self, token: str, name: str) -> tuple[int]:
        ids = self.pools.get(token)
        if ids is None:
            raise Revert.error(f"pool: no pool for token {token}")
        read = self.link.read
        if read is None:
            raise Revert.error("pool: no engine connected")
        return (sum(getattr(read(pool_id), name) for pool_id in ids),)

    def balance(self, msg: Message, token: str) -> tuple[Any, ...]:
        return self._figure(token, "balance")

    def reserved(self, msg: Message, token: str) -> tuple[Any, ...]:
        return self._figure(token, "reserved")

    def outstanding(self, msg: Message, token: str) -> tuple[Any, ...]:
        return self._figure(token, "outstanding")

    def available(self, msg: Message, token: str) -> tuple[Any, ...]:
        return self._figure(token, "available")


register(LiquidityPool)

assert all(key in gas.EXECUTION for key in LiquidityPool.functions)
