"""A collateral's price path replaced: the drawdowns a health watch, its tests, its benchmark
and the credit notebook simulate on the embedded service.

:func:`with_collateral_prices` gives a scenario whose collateral ``symbol`` follows another USD
price path on every hub (and remote escrow) that accepts it; :func:`drawdown` is such a path:
the price holds, falls by ``share`` linearly over ``over_s`` seconds from ``at_s``, and holds
again. The embedded service's price feeds answer along the path at each block's time, so the
drop reaches every reader through the chain, as a real oracle's would.

>>> from toolkit.scenario import load_scenario
>>> path = drawdown(60_000, at_s=1_760_000_600, share=0.35, over_s=600)
>>> path
((1760000600, Decimal('60000')), (1760001200, Decimal('39000.00')))
>>> s = with_collateral_prices(load_scenario("default"), "yoBTC", path)
>>> s.credit.collateral_by_symbol("yobtc").price_usd(1_760_000_900)
Decimal('49500.00')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

from toolkit.arguments import ArgumentError, number, whole
from toolkit.scenario.credit_settings import CreditCollateral, CreditSettings
from toolkit.scenario.scenario import Scenario

__all__ = ["drawdown", "with_collateral_prices"]

Path = tuple[tuple[int, Decimal], ...]


def drawdown(price: float | str | Decimal, *, at_s: int, share: float, over_s: int) -> Path:
    """A path holding ``price`` until ``at_s`` (Unix seconds), then falling by ``share`` of it
    linearly until ``at_s + over_s``, then holding."""
    start = Decimal(str(price))
    if not start > 0:
        raise ArgumentError("price", "a USD price above 0", price)
    fall = Decimal(str(number(share, "share", above=0, below=1)))
    at = whole(at_s, "at_s", minimum=0)
    return ((at, start), (at + whole(over_s, "over_s", minimum=1), start * (1 - fall)))


def _swap(items: Sequence[CreditCollateral], key: str, path: Path) -> tuple[CreditCollateral, ...]:
    return tuple(replace(c, prices=path) if c.key == key else c for c in items)


def with_collateral_prices(scenario: Scenario, symbol: str, path: Path) -> Scenario:
    """``scenario`` with collateral ``symbol``'s USD price along ``path`` on every hub."""
    credit = scenario.credit
    if credit is None:
        raise ArgumentError("scenario", "a scenario with a [credit] section", scenario.name)
    key = symbol.lower()
    if all(c.key != key for c in credit.collateral):
        known = ", ".join(c.symbol for c in credit.collateral)
        raise ArgumentError("symbol", f"a collateral of the scenario ({known})", symbol)

    def moved(settings: CreditSettings) -> CreditSettings:
        return replace(
            settings,
            collateral=_swap(settings.collateral, key, path),
            remote=_swap(settings.remote, key, path),
            others=tuple(moved(other) for other in settings.others),
        )

    return replace(scenario, credit=moved(credit))
