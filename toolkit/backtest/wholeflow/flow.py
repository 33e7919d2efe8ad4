"""The whole flow's loop: :func:`whole_flow` steps a :class:`~.run.Run` and gathers its rows
into a :class:`~.result.WholeFlowResult`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, whole
from toolkit.backtest.inventory import rebalancing_figures, transfers_frame
from toolkit.backtest.sampler import INVENTORY_FIELDS
from toolkit.backtest.wholeflow.result import WholeFlowResult, WholeFlowSummary
from toolkit.backtest.wholeflow.run import Run
from toolkit.backtest.wholeflow.settings import GENESIS, WholeFlow
from toolkit.progress import progress_bar
from toolkit.scenario import Scenario, load_scenario


def _step(run: Run, i: int, now: float) -> None:
    """One step of the world: the markets move, the card credit and the liquidators act, the
    pools lend, users arrive; then one row per surface."""
    s = run.settings
    hours = s.step_s / 3600
    hour = now / 3600
    run.path_price = run.path[i]
    for market in (run.src, run.dst):
        market.traders.step(GENESIS + now, run.path_price)
    run.price = run.src.weth_usd()
    counts: dict[str, Any] = {
        "rfqs": 0, "quotes": 0, "no_capacity": 0, "fills": 0, "missed": 0, "fees_usd": 0.0,
        "repaid_usd": 0.0, "swaps": [], "choices": {"a": 0, "b": 0, "c": 0, None: 0},
    }  # fmt: skip
    run.events_until(now, counts)
    credit: dict[str, Any] = {"step": i, "hour": hour}
    liq: dict[str, Any] = {"step": i, "hour": hour}
    run.cards(hours, credit)
    run.liquidate(now, credit, liq)
    borrow: dict[str, Any] = {"step": i, "hour": hour}
    run.borrow(now, hours, borrow)
    depth = run.src.depth_usd()
    for _ in range(run.rng.poisson(s.users_per_h * hours)):
        run.arrive(len(run.users), now, counts)
    borrow["repaid_usd"] = counts.pop("repaid_usd")
    run.rows["intents"].append(_intents_row(run, i, now, counts))
    run.rows["swaps"].append(_swaps_row(run, i, now, depth, counts["swaps"]))
    run.rows["credit"].append(credit)
    run.rows["borrow"].append(borrow)
    run.rows["liquidations"].append(liq)
    _inventory_rows(run, i, now)


def _inventory_rows(run: Run, i: int, now: float) -> None:
    """The step's inventory rows: the service's holding of each token on each chain."""
    for h in run.engine.inventory(now):
        row: dict[str, Any] = {"step": i, "hour": now / 3600, "chain": h.chain, "token": h.symbol}
        row.update((name, getattr(h, name)) for name in INVENTORY_FIELDS)
        run.rows["inventory"].append(row)


def _intents_row(run: Run, i: int, now: float, counts: dict[str, Any]) -> dict[str, Any]:
    """The step's intents row: RFQ counts, fees, the destination pools' utilisation and the
    users' route choices."""
    pools = [p for p in run.engine.pools(now) if p.chain == run.settings.destination]
    held = sum(p.reserved + p.outstanding for p in pools)
    choices = counts.pop("choices")
    return {
        "step": i,
        "hour": now / 3600,
        **{k: counts[k] for k in ("rfqs", "quotes", "no_capacity", "fills", "missed")},
        "fees_usd": counts["fees_usd"],
        "utilisation": held / max(1, sum(p.balance for p in pools)),
        "users": sum(choices.values()),
        "intents_users": choices["a"] + choices["b"],
        "route_a": choices["a"],
        "route_b": choices["b"],
        "bridge": choices["c"],
    }


def _swaps_row(
    run: Run, i: int, now: float, depth: float, swaps: list[tuple[float, float]]
) -> dict[str, Any]:
    """The step's swaps row: the price paths, the source's depth and the swaps' slippage."""
    slips = np.array([x[1] for x in swaps if not math.isnan(x[1])])
    return {
        "step": i,
        "hour": now / 3600,
        "reference_usd": run.path_price,
        "control_usd": run.control_path[i],
        "shock_pct": (run.path_price / run.control_path[i] - 1) * 100,
        "source_mid_usd": run.src.weth_usd(),
        "depth_2pct_usd": depth,
        "swaps": len(swaps),
        "volume_usd": float(sum(x[0] for x in swaps)),
        "slippage_bps_mean": float(slips.mean()) if slips.size else math.nan,
        "slippage_bps_p95": float(np.percentile(slips, 95)) if slips.size else math.nan,
    }


def whole_flow(
    settings: WholeFlow | None = None,
    scenario: Scenario | str = "default",
    *,
    seed: int = 0,
    progress: bool = True,
) -> WholeFlowResult:
    """Run the whole flow (package docstring) for ``settings`` (default :class:`WholeFlow`) on
    ``scenario`` (which needs AMM pools with WETH and USDC on both chains). The same seed gives
    the same frames; a progress bar counts the steps (``progress=False`` or ``TQDM_DISABLE=1``
    hides it). Orders and loans still open at the horizon are filled, settled and repaid
    after it, so the summary's pool balances are final."""
    settings = WholeFlow() if settings is None else settings
    if not isinstance(settings, WholeFlow):
        raise ArgumentError("settings", "a WholeFlow", type(settings).__name__)
    seed = whole(seed, "seed", minimum=0)
    run = Run(settings, load_scenario(scenario), seed)
    now = 0.0
    steps = range(settings.steps)
    for i in progress_bar(steps, desc="whole flow", unit="step", enabled=progress):
        now = (i + 1) * settings.step_s
        _step(run, i, now)
    tail: dict[str, Any] = {
        "fills": 0,
        "missed": 0,
        "fees_usd": 0.0,
        "repaid_usd": 0.0,
        "swaps": [],
    }
    run.events_until(math.inf, tail)
    return _result(run, seed, tail)


def _result(run: Run, seed: int, tail: dict[str, Any]) -> WholeFlowResult:
    amounts = {name: pl.Int128 for name in INVENTORY_FIELDS}
    frames = {
        k: pl.DataFrame(v, schema_overrides=amounts if k == "inventory" else None)
        for k, v in run.rows.items()
    }
    users = pl.DataFrame(
        run.users,
        schema={
            "user": pl.Int64, "hour": pl.Float64, "size_usd": pl.Float64,
            "cost_a_bps": pl.Float64, "cost_b_bps": pl.Float64, "cost_c_bps": pl.Float64,
            "source_slippage_bps": pl.Float64, "choice": pl.String, "intents": pl.Boolean,
        },
    )  # fmt: skip
    return WholeFlowResult(
        run.settings,
        seed,
        frames["intents"],
        frames["swaps"],
        frames["credit"],
        frames["borrow"],
        frames["liquidations"],
        users,
        _summary(run, seed, frames, users, tail),
        frames["inventory"],
        transfers_frame(run.engine.transfers(run.engine.clock), run.scenario),
    )


def _swap_figures(run: Run, swaps: pl.DataFrame) -> tuple[float, float]:
    """The mean slippage per swap over the run and the mean 2 % depth during the shock."""
    weighted = swaps.filter(pl.col("swaps") > 0)
    counts = weighted["swaps"].to_numpy()
    means = weighted["slippage_bps_mean"].to_numpy()
    slippage = float((means * counts).sum() / counts.sum()) if weighted.height else math.nan
    during = [run.settings.phase(h) == "during" for h in swaps["hour"]]
    depths = swaps.filter(pl.Series(during))["depth_2pct_usd"].to_numpy()
    return slippage, float(depths.mean()) if depths.size else math.nan


def _summary(
    run: Run, seed: int, frames: dict[str, pl.DataFrame], users: pl.DataFrame, tail: dict[str, Any]
) -> WholeFlowSummary:
    intents, swaps, credit = frames["intents"], frames["swaps"], frames["credit"]
    liq = frames["liquidations"]
    pools = run.engine.pools(run.engine.clock)
    closing = {p.id: p.balance for p in pools}
    moved = rebalancing_figures(run.engine.transfers(run.engine.clock), run.scenario)
    held = {token: 0 for token in run.gained}
    for h in run.engine.inventory(run.engine.clock):
        if h.symbol in held:
            held[h.symbol] += h.on_chain
    opening = {token: 0 for token in run.gained}
    for p in run.scenario.pools:
        opening[p.token] += p.balance
    rfqs = int(intents["rfqs"].sum())
    slippage, depth = _swap_figures(run, swaps)
    return WholeFlowSummary(
        seed=seed,
        shock=run.settings.shock,
        steps=run.settings.steps,
        users=users.height,
        intents_share=float(users["intents"].cast(pl.Float64).to_numpy().mean())
        if users.height
        else math.nan,
        rfqs=rfqs,
        rfq_404_share=int(intents["no_capacity"].sum()) / rfqs if rfqs else 0.0,
        fills=int(intents["fills"].sum()) + tail["fills"],
        fees_usd=float(intents["fees_usd"].sum()) + tail["fees_usd"],
        swaps=int(swaps["swaps"].sum()),
        swap_volume_usd=float(swaps["volume_usd"].sum()),
        swap_slippage_bps=slippage,
        depth_during_usd=depth,
        draws=int(credit["draws"].sum()),
        declines=int(credit["declines"].sum()),
        opening_debt_usd=run.opening_debt,
        drawn_usd=run.totals["drawn"],
        repaid_usd=run.totals["repaid"],
        liquidated_usd=run.totals["liquidated"],
        bad_debt_usd=run.totals["bad_debt"],
        end_debt_usd=float(run.debt.sum()),
        liquidations=int(credit["liquidations"].sum()),
        accounts_liquidated=len(run.liquidated),
        debt_repaid_usd=run.totals["liquidated"],
        collateral_seized_usd=float(liq["collateral_seized_usd"].sum()),
        collateral_sold_usd=float(liq["collateral_sold_usd"].sum()),
        collateral_sold_weth=float(liq["collateral_sold_weth"].sum()),
        inventory_end_weth=run.inventory,
        shock_pct_end=float(swaps["shock_pct"][-1]),
        sales_impact_bps_max=float(liq["sales_impact_bps"].max()),  # type: ignore[arg-type]
        min_health_factor=float(credit["min_health_factor"].min()),  # type: ignore[arg-type]
        borrowed_usd=float(frames["borrow"]["borrowed_usd"].sum()),
        pool_earned=dict(run.earned),
        pool_balance_change={k: closing[k] - run.opening[k] for k in closing},
        outstanding_end=sum(p.outstanding for p in pools),
        policy=run.engine.policy,
        transfers=moved.transfers,
        rebalanced_volume_usd=moved.volume_usd,
        rebalancing_cost_usd=moved.cost_usd,
        inventory_change={t: held[t] - opening[t] for t in held},
        books_gain=dict(run.gained),
        bridge_fees={t: moved.fees_by_token.get(t, 0) for t in held},
    )
