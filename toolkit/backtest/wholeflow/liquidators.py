"""The whole flow's liquidators: Aave v3 calls on the book, and sales under a stated policy.

**Calls.** Every step, each account under a health factor of 1 at the oracle (the credit chain's
deepest USDC/WETH pool) is liquidated by :func:`toolkit.credit.liquidation_call`: the most the
close factor allows (50 % of the debt, 100 % at or below 0.95) against the collateral with the
higher bonus (WETH's 8 % before USDC's 1 %), as Aave v3 sizes a call; another call follows, up
to ``_MAX_CALLS`` per account and step, while the account stays under 1. A call counts as a
liquidation only if it repays debt > 0 and seizes collateral > 0; an account no call can move
is left alone (and counted nowhere). Debt left with no collateral is bad debt.

**Sales.** Seized WETH joins the liquidators' inventory. Each step they sell at most what the
deepest source pool takes before its price falls ``max_sale_impact_bps`` (the policy a desk
states as a price-impact cap), through the chain's routes (:meth:`Market.swap`, a real route
executed on the ledger); the rest waits for the next step, when arbitrage has brought the pools
back to the reference price. Seized USDC needs no sale.
"""

from __future__ import annotations

import math
from typing import Any, Final, Protocol

import numpy as np

from toolkit.backtest.wholeflow.market import Market
from toolkit.backtest.wholeflow.settings import LIQUIDATOR, USDC_UNIT, WholeFlow
from toolkit.credit import ProductRules, liquidation_call

_MAX_CALLS: Final = 5


class Run(Protocol):
    """What the liquidators see of a whole-flow run (:class:`~.run.Run` has it)."""

    settings: WholeFlow
    rules: ProductRules
    src: Market
    weth: np.ndarray
    usdc: np.ndarray
    debt: np.ndarray
    inventory: float
    liquidated: set[int]
    totals: dict[str, float]
    price: float

    def health(self, price: float) -> np.ndarray: ...


def _call_account(run: Run, i: int, price: float) -> dict[str, float]:
    """Calls on account ``i`` at ``price`` until it is healthy or nothing moves: what moved."""
    moved = {"calls": 0, "repaid": 0.0, "weth": 0.0, "usdc": 0.0, "bad": 0.0}
    for _ in range(_MAX_CALLS):
        values = {
            "weth": int(run.weth[i] * price * USDC_UNIT),
            "usdc": int(run.usdc[i] * USDC_UNIT),
        }
        call = liquidation_call(values, int(run.debt[i] * USDC_UNIT), rules=run.rules)
        if call.repaid == 0 or not call.seized:
            break
        weth = min(run.weth[i], call.seized.get("weth", 0) / USDC_UNIT / price)
        usdc = min(run.usdc[i], call.seized.get("usdc", 0) / USDC_UNIT)
        run.weth[i] -= weth
        run.usdc[i] -= usdc
        repaid = call.repaid / USDC_UNIT
        run.debt[i] = max(0.0, run.debt[i] - repaid)
        moved["calls"] += 1
        moved["repaid"] += repaid
        moved["weth"] += weth
        moved["usdc"] += usdc
        if call.bad_debt:
            moved["bad"] += run.debt[i]
            run.debt[i] = 0.0
            break
        if call.health_factor is None or call.health_factor >= 1:
            break
    return moved


def liquidate(run: Run, now: float, row: dict[str, Any], sold_row: dict[str, Any]) -> None:
    """One step of the liquidators (module docstring): calls at the oracle, then the sale."""
    s = run.settings
    before = run.src.weth_usd()
    totals = {"calls": 0, "repaid": 0.0, "weth": 0.0, "usdc": 0.0, "bad": 0.0}
    accounts = 0
    if s.liquidations:
        for i in np.flatnonzero((run.debt > 0) & (run.health(before) < 1.0)):
            moved = _call_account(run, int(i), before)
            if moved["calls"]:
                accounts += 1
                run.liquidated.add(int(i))
                for key, value in moved.items():
                    totals[key] += value
    run.inventory += totals["weth"]
    cap = run.src.depth_usd(s.max_sale_impact_bps / 10_000) / before if run.inventory else 0.0
    sell = min(run.inventory, cap)
    sold = proceeds = 0.0
    if sell * 1e18 >= 1:
        weth, usdc = run.src.weth.address.lower(), run.src.usdc.address.lower()
        out, _ = run.src.swap(weth, usdc, int(sell * 1e18), now, LIQUIDATOR)
        if out:
            sold, proceeds = sell, out / USDC_UNIT
            run.inventory -= sold
    price = run.src.weth_usd()
    run.price = price
    run.totals["liquidated"] += totals["repaid"]
    run.totals["bad_debt"] += totals["bad"]
    hf = run.health(price)
    owed = run.debt > 0
    row.update(
        debt_usd=float(run.debt.sum()),
        min_health_factor=float(hf[owed].min()) if owed.any() else math.nan,
        mean_health_factor=float(np.mean(np.minimum(hf[owed], 10.0))) if owed.any() else math.nan,
        accounts_below_1=int((hf[owed] < 1.0).sum()),
        accounts_below_1_1=int((hf[owed] < 1.1).sum()),
        liquidations=int(totals["calls"]),
        accounts_liquidated=accounts,
        debt_repaid_usd=totals["repaid"],
        bad_debt_usd=totals["bad"],
        oracle_usd=price,
    )
    sold_row.update(
        liquidations=int(totals["calls"]),
        accounts_liquidated=accounts,
        debt_repaid_usd=totals["repaid"],
        collateral_seized_weth=totals["weth"],
        collateral_seized_usdc=totals["usdc"],
        collateral_seized_usd=totals["weth"] * before + totals["usdc"],
        collateral_sold_weth=sold,
        collateral_sold_usd=proceeds,
        max_sale_weth=cap,
        inventory_weth=run.inventory,
        price_before=before,
        price_after=price,
        sales_impact_bps=(1 - price / before) * 10_000,
    )
