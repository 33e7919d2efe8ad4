"""Every chain of a scenario as a :class:`Ledger`, with funded development accounts.

:class:`Chains` builds one ledger per scenario chain (block time and base fee from the
scenario), deploys every registered contract class's instances
(:data:`~toolkit.world.evm.contracts.CONTRACT_CLASSES`: an ERC-20 for every scenario token,
WETH9 for ``WETH``, the settlers, the service's pools), funds the development accounts with the
native coin and every token, and keeps the development namespace's state: impersonated accounts
per chain and snapshots of all ledgers together (with whatever the caller adds, e.g. the clock
offset). :meth:`Chains.connect_pools` lets the pool contracts read an engine.

>>> from toolkit.scenario import load_scenario
>>> chains = Chains(load_scenario("single-pool"), genesis=1_760_000_000.0)
>>> sorted(chains.ledgers)
[1, 8453]
>>> dev = chains.accounts[0].address.lower()
>>> chains.ledger(8453).balance(dev, 1_760_000_000.0) == NATIVE_FUNDING
True
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from toolkit.arguments import number
from toolkit.scenario import Scenario
from toolkit.world.evm.accounts import (
    DEV_ACCOUNTS,
    NATIVE_FUNDING,
    TOKEN_FUNDING,
    DevAccount,
    dev_accounts,
)
from toolkit.world.evm.contracts import CONTRACT_CLASSES
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.pools import LiquidityPool, PoolFigures
from toolkit.world.evm.tokens import ERC20

__all__ = ["Chains"]


class Chains:
    """The ledgers of a scenario's chains, from ``genesis`` (Unix seconds) on."""

    def __init__(self, scenario: Scenario, *, genesis: float, accounts: int = DEV_ACCOUNTS) -> None:
        number(genesis, "genesis", minimum=0)
        self.scenario = scenario
        self.accounts: tuple[DevAccount, ...] = dev_accounts(scenario, accounts)
        self.ledgers: dict[int, Ledger] = {}
        self.impersonated: dict[int, set[str]] = {}
        self._snapshots: dict[int, tuple[dict[int, dict[str, Any]], Any, Any]] = {}
        self._next_snapshot = 1
        for chain in scenario.chains:
            ledger = Ledger(
                chain.id, block_time_s=chain.block_time_s, base_fee=chain.base_fee, genesis=genesis
            )
            for cls in CONTRACT_CLASSES:
                for contract in cls.build(scenario, chain.id):
                    ledger.deploy(contract)
            run = ledger.direct(genesis)
            for contract in list(ledger.state.contracts.values()):
                contract.genesis(run)
            ledger.seal_genesis(run)
            for account in self.accounts:
                address = account.address.lower()
                ledger.state.balances[address] = NATIVE_FUNDING
                for contract in ledger.state.contracts.values():
                    if isinstance(contract, ERC20):
                        contract.mint(run, address, TOKEN_FUNDING * 10**contract.decimals)
            self.ledgers[chain.id] = ledger
            self.impersonated[chain.id] = set()

    @classmethod
    def at_genesis(
        cls, scenario: Scenario, *, genesis: float, accounts: int = DEV_ACCOUNTS
    ) -> Chains:
        """``Chains(scenario, genesis=genesis, accounts=accounts)``: the same state, copied from
        the chains built last for those arguments (:func:`genesis_copy`).

        >>> from toolkit.scenario import load_scenario
        >>> one = Chains.at_genesis(load_scenario("single-pool"), genesis=1_760_000_000.0)
        >>> two = Chains.at_genesis(load_scenario("single-pool"), genesis=1_760_000_000.0)
        >>> dev = one.accounts[0].address.lower()
        >>> one.ledger(8453) is two.ledger(8453)
        False
        >>> one.ledger(8453).balance(dev, 1_760_000_000.0) == two.ledger(8453).balance(
        ...     dev, 1_760_000_000.0) == NATIVE_FUNDING
        True
        """
        return genesis_copy(scenario, genesis, accounts, lambda chains: chains)

    def ledger(self, chain_id: int) -> Ledger:
        """The ledger of ``chain_id``; KeyError when the scenario has no such chain."""
        return self.ledgers[chain_id]

    def connect_pools(self, read: Callable[[str], PoolFigures]) -> None:
        """Let every chain's pool contracts (:mod:`.pools`) answer with ``read(pool_id)``: the
        engine's figures of that pool now (the embedded service connects its engine)."""
        for ledger in self.ledgers.values():
            for contract in ledger.state.contracts.values():
                if isinstance(contract, LiquidityPool):
                    contract.link.read = read

    def can_send(self, chain_id: int, address: str) -> bool:
        """True when ``address`` (lowercase) may send unsigned transactions on the chain."""
        if address in self.impersonated[chain_id]:
            return True
        return any(a.address.lower() == address for a in self.accounts)

    def snapshot(self, extra: Any = None) -> int:
        """Save every ledger (and ``extra``); the snapshot's id."""
        state = {cid: ledger.snapshot() for cid, ledger in self.ledgers.items()}
        key = self._next_snapshot
        self._next_snapshot += 1
        self._snapshots[key] = (state, copy.deepcopy(self.impersonated), extra)
        return key

    def revert(self, key: int) -> tuple[bool, Any]:
        """Go back to snapshot ``key``: (True, its extra); it and every later one are dropped
        (as anvil does). (False, None) for an unknown id."""
        saved = self._snapshots.get(key)
        if saved is None:
            return False, None
        state, impersonated, extra = saved
        for cid, ledger in self.ledgers.items():
            ledger.restore(state[cid])
        self.impersonated = copy.deepcopy(impersonated)
        for later in [k for k in self._snapshots if k >= key]:
            del self._snapshots[later]
        return True, extra


#: The last few chains built at genesis, by (scenario, genesis, accounts): never handed out,
#: only copied (:func:`genesis_copy`).
_BUILT: list[tuple[tuple[Scenario, float, int], Chains]] = []
_BUILT_KEPT = 4
_BUILT_LOCK = threading.Lock()
_Part = TypeVar("_Part")


def genesis_copy(
    scenario: Scenario, genesis: float, accounts: int, part: Callable[[Chains], _Part]
) -> _Part:
    """A copy of ``part`` of ``Chains(scenario, genesis=genesis, accounts=accounts)`` (the
    chains themselves, or one ledger).

    The state at genesis depends only on those arguments, and building it costs 0.2 to 0.4 s
    for the default scenario (every contract, the pools' liquidity, the seeded credit book's
    1,200 accounts opened by their own transactions) where a copy costs about 15 ms; tests,
    notebooks, the backtests and a served instance's restarts build the same chains again and
    again. So the last four are kept (scenarios compared by value) and copied, never stepped.
    """
    key = (scenario, float(genesis), accounts)
    with _BUILT_LOCK:
        built = next((chains for known, chains in _BUILT if known == key), None)
    if built is None:
        built = Chains(scenario, genesis=genesis, accounts=accounts)
        with _BUILT_LOCK:
            _BUILT.append((key, built))
            del _BUILT[:-_BUILT_KEPT]
    # the scenario is frozen and shared: only the state is copied
    return copy.deepcopy(part(built), {id(scenario): scenario})
