"""The seeded book's accounts: their addresses and their cards' auto top-up (pure functions of
a hub's settings), and the calldata of their set-up transactions
(:func:`toolkit.world.evm.credit.hub.seed_book` places them at genesis, by transactions mined
before the chain's start)."""

from __future__ import annotations

from functools import cache

from eth_utils import keccak

from toolkit.codecs.function_table import FUNCTIONS
from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings

__all__ = ["book_account", "book_accounts", "book_topup", "seed_calldata"]


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


def seed_calldata(function: str, *args: str | int) -> bytes:
    """The calldata of a function of static arguments (addresses, uints): ``encode_call``'s
    bytes without its checks, for the seeded book's thousands of transactions.

    >>> from toolkit.codecs.functions import encode_call
    >>> seed_calldata("creditHub.setOperator", "0x" + "ab" * 20).hex() == encode_call(
    ...     "creditHub.setOperator", "0x" + "ab" * 20)[2:]
    True
    """
    words = (
        bytes(12) + bytes.fromhex(a[2:]) if isinstance(a, str) else a.to_bytes(32, "big")
        for a in args
    )
    return _selector(function) + b"".join(words)


@cache
def _selector(function: str) -> bytes:
    # A selector is a keccak of the signature: computed once, not for each of ~3,000 calls.
    return bytes.fromhex(FUNCTIONS[function].selector[2:])
