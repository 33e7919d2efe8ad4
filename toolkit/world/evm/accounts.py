"""Development accounts: keys derived from the scenario's name, funded on every chain.

Key ``i`` is ``keccak("toolkit dev account:<scenario name>:<i>")``, so the same scenario gives
the same accounts on every run and machine (they are public test keys: never fund them on a
real chain). Keys are held as :class:`~toolkit.scenario.Secret` (their repr is ``***``).

>>> from toolkit.scenario import load_scenario
>>> accounts = dev_accounts(load_scenario("single-pool"))
>>> len(accounts), accounts[0].address[:2], accounts[0].key
(10, '0x', Secret('***'))
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from eth_account import Account
from eth_utils import keccak

from toolkit.arguments import whole
from toolkit.scenario import Scenario, Secret

__all__ = ["DEV_ACCOUNTS", "NATIVE_FUNDING", "TOKEN_FUNDING", "DevAccount", "dev_accounts"]

#: How many development accounts a scenario has.
DEV_ACCOUNTS: Final = 10
#: Native coin each development account starts with on every chain (10,000 coins).
NATIVE_FUNDING: Final = 10_000 * 10**18
#: Whole tokens of every scenario token each development account starts with.
TOKEN_FUNDING: Final = 1_000_000


@dataclass(frozen=True)
class DevAccount:
    """A development account: checksummed address and its private key (a Secret)."""

    address: str
    key: Secret


@lru_cache(maxsize=64)
def _derive(name: str, count: int) -> tuple[DevAccount, ...]:
    accounts = []
    for i in range(count):
        key = "0x" + keccak(text=f"toolkit dev account:{name}:{i}").hex()
        accounts.append(DevAccount(Account.from_key(key).address, Secret(key)))
    return tuple(accounts)


def dev_accounts(scenario: Scenario, count: int = DEV_ACCOUNTS) -> tuple[DevAccount, ...]:
    """The scenario's first ``count`` development accounts."""
    return _derive(scenario.name, whole(count, "count", minimum=1, maximum=1000))
