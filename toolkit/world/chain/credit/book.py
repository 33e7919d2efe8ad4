"""The seeded book's accounts: their addresses and their cards' auto top-up (pure functions of
a hub's settings; :func:`toolkit.world.chain.credit.hub.seed_book` places them at genesis)."""

from __future__ import annotations

from eth_utils import keccak

from toolkit.scenario.credit import CreditSettings

__all__ = ["book_account", "book_topup"]


def book_account(settings: CreditSettings, index: int) -> str:
    """The address of seeded account ``index`` (lowercase; stable per hub).

    >>> from toolkit.scenario import load_scenario
    >>> book_account(load_scenario("default", env={}).credit, 0)[:2]
    '0x'
    """
    return "0x" + keccak(text=f"toolkit credit book:{settings.hub.lower()}:{index}")[-20:].hex()


def book_topup(settings: CreditSettings, account: str) -> tuple[int, int]:
    """The auto top-up (threshold, target balance) of seeded account ``account``'s card:
    a threshold of 50 to 500 credit-asset units, a target twice that.

    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default", env={}).credit
    >>> threshold, target = book_topup(s, book_account(s, 0))
    >>> 50 * 10**6 <= threshold <= 500 * 10**6 and target == 2 * threshold
    True
    """
    threshold = (50 + int(account[-4:], 16) % 451) * 10**settings.asset_decimals
    return threshold, 2 * threshold
