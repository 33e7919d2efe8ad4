"""One day of :func:`toolkit.backtest.credit.replay_credit`: the book's running state
(:class:`BookState`) and its daily steps, spends, repayments and liquidations (the module
docstring of :mod:`toolkit.backtest.credit` says what each does).

Amounts are floats in the credit asset's whole units; each liquidation is the exact
:func:`toolkit.credit.liquidation` of the account, in the asset's smallest units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from toolkit.credit import BPS, DAY, ProductRules, liquidation
from toolkit.models.health import CreditBook, from_bps


class Behaviour(Protocol):
    """What the steps read of :class:`toolkit.backtest.credit.CreditBehaviour` (declared
    here: the credit module imports this one, not the reverse)."""

    @property
    def spends_per_day(self) -> float: ...
    @property
    def spend_median(self) -> float: ...
    @property
    def sigma(self) -> float: ...
    @property
    def late_share(self) -> float: ...
    @property
    def late_d(self) -> int: ...


__all__ = ["BookState"]

_UNIT = 10**6  # the credit asset's smallest units per whole unit, for the exact liquidations


@dataclass
class BookState:
    """The book while it runs: collateral units ``held`` per account and asset, ``principal``
    and overdue ``interest`` per account, the day each account's debt falls ``due`` (-1: no
    debt) and whether it pays ``late`` this cycle; the rules' weights and rates."""

    book: CreditBook
    held: np.ndarray
    principal: np.ndarray
    interest: np.ndarray
    due: np.ndarray
    late: np.ndarray
    ltv: np.ndarray
    maintenance: np.ndarray
    term: int

    @classmethod
    def start(cls, book: CreditBook, behaviour: Behaviour, rng: np.random.Generator) -> BookState:
        """The state on day 0: the book's debt as first drawn today, due a term later."""
        rules = book.rules
        n = book.collateral.shape[0]
        principal: np.ndarray = book.debt.copy()
        return cls(
            book=book,
            held=np.array(book.collateral, dtype=np.float64),
            principal=principal,
            interest=np.zeros(n),
            due=np.where(principal > 0, _term(rules), -1),
            late=np.asarray(rng.random(n) < behaviour.late_share),
            ltv=from_bps([rules.rule(a).ltv_bps for a in book.assets]),
            maintenance=from_bps([rules.rule(a).maintenance_ltv_bps for a in book.assets]),
            term=_term(rules),
        )

    def spend(
        self, day: int, values: np.ndarray, behaviour: Behaviour, rng: np.random.Generator
    ) -> dict[str, Any]:
        """Step 2: each account's spends of the day, drawn while capacity remains."""
        n = self.held.shape[0]
        count = rng.poisson(behaviour.spends_per_day, n)
        amount = np.asarray(behaviour.spend_median * rng.lognormal(0.0, behaviour.sigma, n) * count)
        debt = self.principal + self.interest
        allowed = (amount > 0) & (debt + amount <= values @ self.ltv)
        fresh = allowed & (debt == 0)
        self.due[fresh] = day + self.term
        self.principal[allowed] += amount[allowed]
        return {
            "draws": int(allowed.sum()),
            "drawn": float(amount[allowed].sum()),
            "declined": int(((amount > 0) & ~allowed).sum()),
            "fees": float((amount[allowed] * (self.book.rules.origination_fee_bps / BPS)).sum()),
        }

    def repay(self, day: int, behaviour: Behaviour, rng: np.random.Generator) -> dict[str, Any]:
        """Step 3: overdue interest accrues; accounts due today (or ``late_d`` after, if
        late) repay in full and draw whether they pay late next cycle."""
        due, late = self.due, self.late
        overdue = (due >= 0) & (day > due)
        accrued = self.principal * (self.book.rules.overdue_apr_bps / BPS / 365) * overdue
        self.interest += accrued
        repay_day = np.where(late, due + behaviour.late_d, due)
        repaying = (due >= 0) & (day == repay_day)
        repaid = float((self.principal[repaying] + self.interest[repaying]).sum())
        self.principal[repaying] = self.interest[repaying] = 0.0
        due[repaying] = -1
        late[repaying] = rng.random(int(repaying.sum())) < behaviour.late_share
        return {"interest": float(accrued.sum()), "repaid": repaid}

    def liquidate(self, values: np.ndarray, prices: np.ndarray) -> dict[str, Any]:
        """Step 4: accounts under water liquidated, exactly, account by account."""
        debt = self.principal + self.interest
        weak = np.flatnonzero((debt > 0) & (values @ self.maintenance < debt))
        bonus = bad = 0.0
        moved = 0  # a liquidation repays debt and seizes collateral; a call moving nothing is none
        for i in weak:
            gained, lost = self._liquidate_one(int(i), values[i], float(debt[i]), prices)
            if gained is None:
                continue
            moved += 1
            bonus += gained
            bad += lost
        return {"liquidations": moved, "liquidation_bonus": bonus, "bad_debt": bad}

    def _liquidate_one(
        self, i: int, values: np.ndarray, debt: float, prices: np.ndarray
    ) -> tuple[float | None, float]:
        """Liquidate account ``i``: the liquidator's bonus (None: the call moved nothing) and
        the bad debt left."""
        assets = self.book.assets
        exact = {a: int(values[j] * _UNIT) for j, a in enumerate(assets) if self.held[i, j] > 0}
        liq = liquidation(exact, int(debt * _UNIT), rules=self.book.rules)
        if liq.repaid == 0 or not any(liq.seized.values()):
            return None, 0.0
        for j, asset in enumerate(assets):
            taken = liq.seized.get(asset, 0) / _UNIT
            self.held[i, j] = (
                max(0.0, self.held[i, j] - taken / prices[j]) if taken else self.held[i, j]
            )
        cover = liq.repaid / _UNIT
        paid_interest = min(self.interest[i], cover)
        self.interest[i] -= paid_interest
        self.principal[i] = max(0.0, self.principal[i] - (cover - paid_interest))
        bad = 0.0
        if liq.bad_debt:
            bad = liq.bad_debt / _UNIT
            self.principal[i] = self.interest[i] = 0.0
            self.due[i] = -1
        return sum(liq.seized.values()) / _UNIT - cover, bad

    def close_day(self, day: int, row: dict[str, Any], prices: np.ndarray) -> dict[str, Any]:
        """The day's row of ``daily``: the steps' figures and the book as the day ends."""
        owed = self.principal + self.interest
        hf = np.where(
            owed > 0,
            (self.held * prices) @ self.maintenance / np.where(owed > 0, owed, 1.0),
            np.inf,
        )
        return {
            "day": day,
            "debt": float(owed.sum()),
            **{k: row[k] for k in ("draws", "drawn", "declined", "fees", "interest", "repaid")},
            "overdue_accounts": int(((self.due >= 0) & (day > self.due)).sum()),
            **{k: row[k] for k in ("liquidations", "liquidation_bonus", "bad_debt")},
            "collateral_value": float((self.held * prices).sum()),
            "min_health_factor": float(hf.min()),
            "accounts_below_1_3": int((hf < 1.3).sum()),
        }


def _term(rules: ProductRules) -> int:
    """Days from a first draw to its due date: the billing cycle and the grace period."""
    return (rules.billing_cycle_s + rules.grace_s) // DAY
