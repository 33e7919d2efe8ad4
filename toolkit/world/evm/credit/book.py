"""The seeded book's accounts: their addresses and their cards' auto top-up (pure functions of
a hub's settings; :func:`toolkit.world.evm.credit.hub.seed_book` places them at
genesis, by transactions mined before the chain's start)."""

from __future__ import annotations

from eth_utils import keccak

from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings

__all__ = ["book_account", "book_accounts", "book_topup"]


def book_account(settings: CreditSettings, index: int) -> str:
    """The address of seeded account ``index`` (lowercase; stable per hub).

    >>> from toolkit.scenario import load_scenario
    >>> book_account(load_scenario("default").credit, 0)[:2]
    '0x'
    """
    return "0x" + keccak(text=f"toolkit credit book:{settings.hub.lower()}:{index}")[-20:].hex()


def book_accounts(scenario: Scenario) -> list[str]:
    """Every seeded account of ``scenario``'s credit book, sorted (the simulation's own list:
    collectors find accounts from the chain's events instead).

    >>> from toolkit.scenario import load_scenario
    >>> len(book_accounts(load_scenario("default")))
    1200
    """
    settings = scenario.credit
    if settings is None:
        return []
    return sorted(book_account(settings, i) for i in range(settings.book_accounts))


def book_topup(settings: CreditSettings, account: str) -> tuple[int, int]:
    """The auto top-up (threshold, target balance) of seeded account ``account``'s card:
    a threshold of 50 to 500 credit-asset units, a target twice that.

    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default").credit
    >>> threshold, target = book_topup(s, book_account(s, 0))
    >>> 50 * 10**6 <= threshold <= 500 * 10**6 and target == 2 * threshold
    True
    """
    threshold = (50 + int(account[-4:], 16) % 451) * 10**settings.asset_decimals
    return threshold, 2 * threshold
