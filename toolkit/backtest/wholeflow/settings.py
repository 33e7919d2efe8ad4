"""The whole flow's settings (:class:`WholeFlow`), the constants every part of the world
shares, and the metrics :func:`~toolkit.backtest.wholeflow.whole_flow_seeds` reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.credit import CollateralRule

#: Where the ledgers' clocks start (engine time is seconds from 0, ledger time this plus that).
GENESIS: Final = 1_760_000_000.0
#: The simulated user, liquidator and solver (one address each: balances are not modelled).
USER: Final = "0x" + "a2" * 20
LIQUIDATOR: Final = "0x" + "a3" * 20
#: ETH collateral under the volatile-vault parameters (LTV 55 %, maintenance 70 %, bonus 8 %).
WETH_RULE: Final = CollateralRule("weth", "volatile", 5500, 7000, 800)
USDC_UNIT: Final = 10**6

#: The summary metrics :func:`whole_flow_seeds` reports with confidence bands.
WHOLE_FLOW_METRICS: tuple[str, ...] = (
    "users",
    "intents_share",
    "rfq_404_share",
    "fees_usd",
    "swap_slippage_bps",
    "liquidations",
    "accounts_liquidated",
    "debt_repaid_usd",
    "collateral_seized_usd",
    "collateral_sold_usd",
    "inventory_end_weth",
    "bad_debt_usd",
    "min_health_factor",
    "borrowed_usd",
    "transfers",
    "rebalancing_cost_usd",
)


@dataclass(frozen=True)
class WholeFlow:
    """The world's settings (package docstring); every field is checked when built.

    ``shock`` is the drawdown of the exogenous reference path against the same seed's path
    without it (``-0.3``: 30 % lower once the drawdown is done, exactly; 0: the control),
    ``shock_at_share`` where it starts as a share of the horizon. ``depth_scale`` scales every AMM
    pool of the scenario (a market about the size one credit book's liquidations matter to).
    ``liquidations=False`` turns the liquidators off (the control for what their sales add).
    ``max_sale_impact_bps`` is the liquidators' sale policy: each step they sell at most the
    WETH that moves the deepest source pool's price down by that much, and carry the rest."""

    span_h: float = 3.0
    step_s: float = 120.0
    shock: float = -0.3
    shock_at_share: float = 0.4
    shock_h: float = 0.25
    volatility: float = 0.6
    depth_scale: float = 0.1
    source: int = 8453
    destination: int = 1
    users_per_h: float = 16.0
    user_median_usd: float = 30_000.0
    bridge_bps: float = 3.0
    accounts: int = 300
    collateral_median_usd: float = 60_000.0
    swipes_per_h: float = 0.3
    swipe_median_usd: float = 80.0
    min_health_factor: float = 1.3
    repay_h: float = 48.0
    borrows_per_h: float = 20.0
    borrow_median_usd: float = 50_000.0
    borrow_hold_s: float = 300.0
    sigma: float = 0.9
    liquidations: bool = True
    max_sale_impact_bps: float = 100.0

    def __post_init__(self) -> None:
        number(self.span_h, "span_h", above=0, maximum=24 * 7)
        number(self.step_s, "step_s", minimum=12)
        number(self.shock, "shock", above=-1, below=1)
        fraction(self.shock_at_share, "shock_at_share")
        number(self.shock_h, "shock_h", above=0)
        number(self.volatility, "volatility", minimum=0)
        number(self.depth_scale, "depth_scale", above=0)
        whole(self.source, "source", minimum=1)
        whole(self.destination, "destination", minimum=1)
        if self.source == self.destination:
            raise ArgumentError("destination", "a chain other than the source", self.destination)
        for name in ("users_per_h", "swipes_per_h", "borrows_per_h", "bridge_bps"):
            number(getattr(self, name), name, minimum=0)
        for name in (
            "user_median_usd",
            "collateral_median_usd",
            "swipe_median_usd",
            "repay_h",
            "borrow_median_usd",
            "borrow_hold_s",
        ):
            number(getattr(self, name), name, above=0)
        whole(self.accounts, "accounts", minimum=1)
        number(self.min_health_factor, "min_health_factor", minimum=1)
        number(self.sigma, "sigma", minimum=0)
        number(self.max_sale_impact_bps, "max_sale_impact_bps", above=0, below=10_000)
        if not isinstance(self.liquidations, bool):
            raise ArgumentError("liquidations", "True or False", self.liquidations)

    @property
    def steps(self) -> int:
        """Steps in the horizon."""
        return max(1, round(self.span_h * 3600 / self.step_s))

    def phase(self, hour: float) -> str:
        """``before``, ``during`` (the drawdown and one more ``shock_h``) or ``after``."""
        start = self.shock_at_share * self.span_h
        if hour < start:
            return "before"
        return "during" if hour < start + 2 * self.shock_h else "after"
