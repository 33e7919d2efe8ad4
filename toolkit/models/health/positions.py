"""An account as a health watch holds it between reads, valued at oracle prices, exactly.

A :class:`Position` is what was read of an account: the collateral booked per token (smallest
units) and its debt's principal and interest at the time of the read, with its due date. At a
later time its interest is the read's plus what the product's rule accrues since
(:meth:`toolkit.credit.ProductRules.interest`, from the due date or the read, whichever is
later: the hub's own checkpointing), and its collateral is valued at USD feed prices with
:func:`toolkit.credit.collateral_value`; the health factor is then :func:`toolkit.credit.figures`'
(the one definition) via :func:`toolkit.models.health.breaches`.

Feed prices (Chainlink's ``latestRoundData`` answers with their ``decimals``) become a unit
price, credit-asset smallest units per collateral smallest unit, by :func:`unit_price`.

>>> usdc = unit_price(100_000_000, 8, 6, 100_000_000, 8, 6)   # 1 USD a token, 1 USD a USDC
>>> btc = unit_price(6_000_000_000_000, 8, 8, 100_000_000, 8, 6)
>>> p = Position({"0xusdc": 500 * 10**6, "0xbtc": 10**6}, principal=400 * 10**6, interest=0,
...              due=None, read_at=0)
>>> p.values({"0xusdc": usdc, "0xbtc": btc}, {"0xusdc": "usdc", "0xbtc": "yobtc"})
{'usdc': 500000000, 'yobtc': 600000000}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from toolkit.arguments import whole
from toolkit.credit import DEFAULT_RULES, ProductRules, collateral_value

__all__ = ["Position", "unit_price"]


def unit_price(
    answer: int,
    feed_decimals: int,
    decimals: int,
    asset_answer: int,
    asset_feed_decimals: int,
    asset_decimals: int,
) -> Fraction:
    """Credit-asset smallest units per smallest unit of a collateral whose USD feed answers
    ``answer`` (``feed_decimals``) for a token of ``decimals``, the credit asset's feed
    ``asset_answer`` for a token of ``asset_decimals``.

    >>> unit_price(108_000_000, 8, 6, 108_000_000, 8, 18)  # USDC valued in EURe (1.08 USD)
    Fraction(1000000000000, 1)
    """
    whole(answer, "answer", minimum=1)
    whole(asset_answer, "asset_answer", minimum=1)
    usd = Fraction(answer, 10**feed_decimals) / 10**decimals
    asset_usd = Fraction(asset_answer, 10**asset_feed_decimals) / 10**asset_decimals
    return usd / asset_usd


@dataclass(frozen=True)
class Position:
    """An account's collateral ``holdings`` (token address → smallest units) and debt
    (``principal``, ``interest`` in credit-asset smallest units) as read at ``read_at`` (Unix
    seconds), with its ``due`` date (None: no debt)."""

    holdings: Mapping[str, int]
    principal: int
    interest: int
    due: int | None
    read_at: int

    def debt(self, now: int, rules: ProductRules = DEFAULT_RULES) -> int:
        """Principal and interest at ``now``: the read's interest plus what accrued since.

        >>> from toolkit.credit import DAY, YEAR
        >>> Position({}, principal=10**9, interest=5, due=0, read_at=DAY).debt(YEAR + DAY)
        1150000005
        """
        return self.principal + self.accrued(now, rules)

    def accrued(self, now: int, rules: ProductRules = DEFAULT_RULES) -> int:
        """The interest at ``now``."""
        since = None if self.due is None else max(self.due, self.read_at)
        return self.interest + rules.interest(self.principal, due_date=since, now=now)

    def values(self, prices: Mapping[str, Fraction], keys: Mapping[str, str]) -> dict[str, int]:
        """Collateral value per rule key at unit ``prices`` (token → price), tokens mapped to
        rule keys by ``keys``; a token with no price or key counts for nothing."""
        values: dict[str, int] = {}
        for token, amount in self.holdings.items():
            if amount and token in prices and token in keys:
                key = keys[token]
                values[key] = values.get(key, 0) + collateral_value(amount, prices[token])
        return values
