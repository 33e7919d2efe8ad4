"""The whole flow in one backtest: card spenders, solvers, cross-chain users and liquidators on
one world and one virtual clock, so the surfaces meet.

Every step (``step_s`` of virtual time) of :func:`whole_flow`:

1. **Prices.** The WETH reference price (:func:`~toolkit.world.evm.flow.reference_path`, times
   a drawdown of ``shock`` spread over ``shock_h`` from ``shock_at_share``: once it is done the
   path is exactly ``1 + shock`` times the same seed's path without it, the ``swaps`` frame's
   ``shock_pct``) is brought to the pools of both chains by arbitrage
   (:class:`~toolkit.world.evm.flow.BackgroundTraders`).
2. **Engine events** due since the last step run at their own instants: intents fills (the
   service's filler, once the quote's ``eta`` has passed), settlements (the fee joins the pool),
   solvers' repayments, and the swap on arrival of users whose intents order just filled.
3. **Credit.** The oracle reads the credit chain's deepest USDC/WETH pool. Accounts holding WETH
   and USDC collateral swipe cards (Poisson, log-normal USD amounts): the draw that delivers the
   swipe after its fee (:func:`~toolkit.models.cards.draw_for`) is approved when the health
   factor after it stays at least ``min_health_factor`` and the LTV capacity covers it; indebted
   accounts repay at rate ``1 / repay_h``. Accounts under a health factor of 1 are
   liquidated by calls sized as Aave v3 sizes them (:func:`toolkit.credit.liquidation_call`);
   a call counts only if it repays debt and seizes collateral. The liquidators sell the seized
   WETH through the chain's routes (:func:`~toolkit.world.swap.find_route`, executed on the
   ledger) at most ``max_sale_impact_bps`` of price impact per step, carrying the rest as
   inventory (:mod:`~toolkit.backtest.wholeflow.liquidators`); the oracle takes the pools' new
   price, as in :func:`~toolkit.models.cascade.liquidation_cascade`. The ``liquidations`` frame
   says per step how many calls and accounts, the debt repaid (USD), the collateral seized and
   sold (whole WETH and USD), the inventory and the price impact of the sales.
4. **Solvers** borrow pool liquidity (:meth:`~toolkit.engine.Engine.borrow_quote`, then
   :meth:`~toolkit.engine.Engine.authorize`) and repay ``borrow_hold_s`` later: the same
   pools the intents orders reserve from.
5. **Users** holding WETH on the source chain and wanting USDC on the destination cost three
   ways out, on the pools as they are now: (a) an intents order of the WETH, then a swap on
   arrival; (b) a swap on the source, then an intents order of the USDC; (c) the same swap, then
   a canonical bridge at ``bridge_bps`` (no intents). The two intents strategies are costed by
   :func:`~toolkit.models.routes.firm_vs_indicative` from firm quotes (each RFQ reserves, as the
   service's do: a refused one is a 404 and drops its strategy) and routes at the pools' state;
   the cheapest way is taken. A swap executes on the pools and moves them.

The liquidators sell where the users swap, so a liquidation wave moves the credit chain's pools
into their thin ranges just as users arrive; :func:`interactions` measures what that does to
depth, slippage and the users' choice, and :func:`whole_flow_seeds` runs a shocked world beside
the same shock with the liquidators off and the no-shock control (same seed: common random
numbers) over several seeds.

>>> result = whole_flow(WholeFlow(span_h=0.5, shock_at_share=0.2, shock_h=0.1), seed=3)
>>> result.credit.height == result.intents.height == 15, result.summary.users > 0
(True, True)
"""

from toolkit.backtest.wholeflow.flow import whole_flow
from toolkit.backtest.wholeflow.result import WholeFlowResult, WholeFlowSummary, interactions
from toolkit.backtest.wholeflow.seeds import whole_flow_seeds
from toolkit.backtest.wholeflow.settings import WHOLE_FLOW_METRICS, WholeFlow

__all__ = [
    "WHOLE_FLOW_METRICS",
    "WholeFlow",
    "WholeFlowResult",
    "WholeFlowSummary",
    "interactions",
    "whole_flow",
    "whole_flow_seeds",
]
