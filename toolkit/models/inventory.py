"""The inventory surrogate: what one (chain, token) holding refuses, and what keeping it costs,
under a rebalancing policy, for a capital and a threshold; in closed form, fast enough to search.

A holding's inventory falls by what orders deliver there and rises by what they pay there
(after the settlement delay: until then it is a receivable). Its cumulative drain is modelled
as a Brownian motion with the net flow's drift ``ν`` and variance rate ``s²``
(:mod:`toolkit.models.passage`; the figures come from :func:`toolkit.models.netflow.net_flow`).
Orders larger than the holding are refused and move nothing, so only the variance of orders
that fit its capital ``C`` counts: ``s²(C) = s²·E[S²; S ≤ C]/E[S²]`` (from the sizes it is
asked for; the heavy tail of order sizes makes this matter for small holdings).

An RFQ is refused when the reservations at the holding's inventory level ``X`` leave less than
it asks: Kaufman-Roberts blocking at capacity ``X`` (the holds run from the RFQ to the fill or
the quote's lapse; :func:`toolkit.models.loss.kaufman_roberts_curve`), ``B(0) = 1``. The
refused share is the time average of ``B(X_t)``; where the holding walks freely, ``X`` is the
reflected walk (refusals stop the drain; :func:`~toolkit.models.passage.reflected_cdf`). Under
the ``instant-free`` baseline nothing drains (a settlement repays the pool in place) and a fill
holds its units until it settles: the same blocking at the constant capacity with the
settlement in the hold, the classical Erlang-B / Kaufman-Roberts pool. Per policy (``recv`` the
receivables owed to the chain, ``L`` the bridge's latency):

- ``none``: the reflected walk from ``C − recv`` over the whole horizon ``T``, kept below
  ``n/(n − 1)·C`` as well (``n`` holdings of the token: one cannot gather more than the others
  lose; exact for two holdings of equal capital); no transfer;
- ``periodic`` (period ``P``): every period restarts at ``C − recv``; each sends ``E[(D_P)⁺]``
  when ``D_P`` passes ``min_transfer_usd`` (probability ``Φ((νP − min)/(s√P))``);
- ``threshold`` (``κ`` the threshold as a share of the target): the holding's excess over its
  target, ``e``, is a walk on ``(−b, U)`` with ``b = (1 − κ)·C``: at ``−b`` it is topped up (by
  ``b + overshoot·total``, back to about its target), and it never holds more above target than
  the token's other holdings can lose before they trigger, ``U = Σ_others b``, because their
  top-ups take the excess (in a two-chain book this is exact). The top-ups are the renewals of
  the walk's exit at ``−b`` (the exit problem of a drifting Brownian motion: ``P(−b first)`` over
  the mean exit time); between them the inventory is taken as spread evenly over its band,
  ``κC − recv`` to ``C + overshoot·total − recv`` (the replays show it there, below target more
  often than above: top-ups stop at the sources' targets and the largest excess is taken first),
  and while a top-up travels the reflected walk starts from ``κC − recv`` for the latency. A
  band narrower than ``min_transfer_usd`` is never topped up (the engine skips smaller moves):
  such an option is infeasible.

Costs in USD over ``T``: the capital's opportunity cost ``rate·C·T/year``, and per transfer the
source chain's gas plus the bridge's fee on what it sends. Transfers are booked to the holding
they top up; the latency, fee and gas are the mean over the routes that can feed it
(:class:`Bridging`). The surrogate is checked against seeded replays of the engine
(``tests/backtest/test_placement.py``), which is also how a placement is verified.

>>> import numpy as np
>>> demand = HoldingDemand(8453, "USDC", drain_usd_per_s=0.0, variance_usd2_per_s=1e4,
...     delivered_usd_per_s=10.0, receivable_usd=0.0, rfq_per_s=0.0, hold_s=0.0,
...     sizes_usd=np.array([100.0]))
>>> out = HoldingModel(demand, Bridging((14.0,), 1e-4, 0.05), 1e6).outlook(PolicyShape("none"),
...     np.array([1e3, 1e5]), 0.5, token_total_usd=1e6, others_band_usd=0.0,
...     horizon_s=86_400.0, capital_rate=0.05)
>>> [round(float(x), 4) for x in out.refused_share]  # ±29k USD over a day: 1k runs dry
[0.0127, 0.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from toolkit.models.levels import (
    HoldingDemand,
    LevelCurves,
    blocking_integral,
    level_curves,
    time_nodes,
)
from toolkit.models.passage import normal_sf

__all__ = [
    "NONE",
    "PERIODIC",
    "SEARCHED_POLICIES",
    "THRESHOLD",
    "YEAR_S",
    "Bridging",
    "HoldingDemand",
    "HoldingModel",
    "LevelCurves",
    "Outlook",
    "PolicyShape",
]

Floats = npt.NDArray[np.float64]

NONE = "none"
THRESHOLD = "threshold"
PERIODIC = "periodic"
#: The policies the surrogate models (``instant-free`` is the baseline, not a choice).
SEARCHED_POLICIES = (NONE, THRESHOLD, PERIODIC)
#: Seconds in the 365-day year the opportunity rate is quoted over.
YEAR_S = 365 * 86_400.0
# Gauss-Legendre orders in time: over a horizon or period, and over each latency point.
_ORDER = 12
_LATENCY_ORDER = 3
# Below this |2·drift·level/s²| the exit problem takes its drift-free form.
_FLAT = 1e-6


@dataclass(frozen=True)
class Bridging:
    """How a transfer reaches a holding: equally likely latencies (seconds; quadrature points of
    the routes' latency laws), the bridge fee as a share of the amount, the gas per transfer."""

    latency_s: tuple[float, ...]
    fee_share: float
    gas_usd: float


@dataclass(frozen=True)
class PolicyShape:
    """The scenario-wide part of a policy: its name, ``period_s`` (periodic),
    ``overshoot_share`` (threshold) and ``min_transfer_usd``."""

    policy: str
    period_s: float | None = None
    overshoot_share: float = 0.0
    min_transfer_usd: float = 0.0

    def __post_init__(self) -> None:
        if self.policy not in SEARCHED_POLICIES:
            raise ValueError(f"policy: must be one of {', '.join(SEARCHED_POLICIES)}")
        if self.policy == PERIODIC and not (self.period_s and self.period_s > 0):
            raise ValueError("period_s: must be > 0 for policy periodic")


class Outlook(NamedTuple):
    """The surrogate's figures over the horizon, one entry per option (capital, threshold)."""

    refused_share: Floats
    refused_rfqs: Floats
    transfers: Floats
    rebalanced_usd: Floats
    rebalancing_cost_usd: Floats
    capital_cost_usd: Floats
    cost_usd: Floats


class HoldingModel:
    """The surrogate of one holding: its demand, how transfers reach it, its level curves up to
    ``max_usd``, and the level integrals already computed (a search asks the same options
    again as the other holdings change).

    >>> import numpy as np
    >>> d = HoldingDemand(1, "USDC", 0.0, 1e4, 10.0, 0.0, 0.0, 0.0, np.array([100.0]))
    >>> m = HoldingModel(d, Bridging((14.0,), 1e-4, 0.05), 1e6)
    >>> out = m.outlook(PolicyShape("none"), np.array([1e5]), 0.5, token_total_usd=1e5,
    ...     others_band_usd=0.0, horizon_s=86_400.0, capital_rate=0.05)
    >>> round(float(out.capital_cost_usd[0]), 2)  # 5 % a year on 100k for a day
    13.7
    """

    def __init__(
        self,
        demand: HoldingDemand,
        bridging: Bridging,
        max_usd: float,
        *,
        peers: int = 1,
        resolution_usd: float | None = None,
    ) -> None:
        self.demand = demand
        self.bridging = bridging
        # Levels every max/4096, or finer down to ``resolution_usd`` (the smallest capital a
        # search tries must span many steps), at most 2**20 of them.
        unit = max_usd / 4096 if resolution_usd is None else min(max_usd / 4096, resolution_usd)
        self.levels = level_curves(demand, max_usd, units=min(math.ceil(max_usd / unit), 1 << 20))
        # A walk without rebalancing cannot gather more than the other holdings lose: with
        # capital alike, n/(n − 1) times its own (exact for two holdings of one token).
        self.ceiling_ratio = peers / (peers - 1) if peers > 1 else None
        self._memos: dict[tuple[object, ...], dict[int, float]] = {}

    def _integral(self, key: tuple[object, ...], starts: Floats, caps: Floats,
                  nodes: tuple[Floats, Floats], *, bounded: bool = True) -> Floats:  # fmt: skip
        memo = self._memos.setdefault((*key, bounded), {})
        ratio = self.ceiling_ratio if bounded else None
        return blocking_integral(
            self.levels, starts, caps, self.demand, nodes, memo, ceiling_ratio=ratio
        )

    def outlook(
        self,
        shape: PolicyShape,
        capital_usd: npt.ArrayLike,
        threshold_fraction: npt.ArrayLike,
        *,
        token_total_usd: float,
        others_band_usd: float,
        horizon_s: float,
        capital_rate: float,
    ) -> Outlook:
        """The surrogate's figures under one policy, for arrays of options.

        Parameters
        ----------
        shape : PolicyShape
            The policy.
        capital_usd, threshold_fraction : array_like
            The options: opening capital (USD) and the threshold as a share of the target
            (``κ``, read by the threshold policy only), broadcast together.
        token_total_usd : float
            The token's capital over all its holdings (the overshoot is a share of it).
        others_band_usd : float
            ``U``: what the token's other holdings can lose before they trigger,
            ``Σ (1 − κ)·C`` (threshold only).
        horizon_s : float
            ``T``, seconds.
        capital_rate : float
            The capital's opportunity cost, a share per year.

        Returns
        -------
        Outlook
            The figures, ``cost_usd`` = capital cost + rebalancing cost; ``inf`` for an option
            the policy cannot run (a threshold band below ``min_transfer_usd``, or no other
            holding to take from).
        """
        cap, kappa = np.broadcast_arrays(
            np.asarray(capital_usd, dtype=np.float64), np.asarray(threshold_fraction, np.float64)
        )
        cap, kappa = np.ascontiguousarray(cap), np.ascontiguousarray(kappa)
        t = float(horizon_s)
        usable = cap - self.demand.receivable_usd
        zero = np.zeros_like(cap)
        transfers, moved, feasible = zero, zero, np.ones_like(cap, dtype=bool)
        if shape.policy == NONE:
            share = self._integral((NONE, t), usable, cap, time_nodes((t,), _ORDER)) / t
        elif shape.policy == THRESHOLD:
            share, transfers, moved, feasible = self._threshold(
                shape, cap, kappa, token_total_usd, others_band_usd, t
            )
        else:
            share, transfers, moved = self._periodic(shape, cap, t)
        bridging = self.bridging
        rebalancing = transfers * bridging.gas_usd + moved * bridging.fee_share
        capital_cost = capital_rate * cap * t / YEAR_S
        share = np.clip(share, 0.0, 1.0)
        cost = np.where(feasible > 0, capital_cost + rebalancing, np.inf)
        rfqs = share * self.demand.rfq_per_s * t
        return Outlook(share, rfqs, transfers, moved, rebalancing, capital_cost, cost)

    def _periodic(self, shape: PolicyShape, cap: Floats, t: float) -> tuple[Floats, Floats, Floats]:
        """The periodic policy: every period restarts at the target (module docstring)."""
        demand, levels = self.demand, self.levels
        period = float(shape.period_s or 0.0)
        window = min(period, t)
        share = self._integral(
            (PERIODIC, window), cap - demand.receivable_usd, cap, time_nodes((window,), _ORDER)
        )
        mean = demand.drain_usd_per_s * period
        sd = np.sqrt(demand.variance_usd2_per_s * levels.fits[levels.index(cap)] * period)
        safe = np.where(sd > 0, sd, 1.0)
        z = mean / safe
        sends = np.where(sd > 0, normal_sf((shape.min_transfer_usd - mean) / safe), mean > 0)
        # E[(D_P)⁺] = sd·(z·Φ(z) + φ(z)), the shortfall a period leaves to refill.
        shortfall = sd * (z * normal_sf(-z) + np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi))
        moved_each = np.where(sd > 0, shortfall, max(mean, 0.0))
        periods = t / period
        return share / window, periods * sends, periods * moved_each

    def _threshold(
        self,
        shape: PolicyShape,
        cap: Floats,
        kappa: Floats,
        token_total_usd: float,
        others_band_usd: float,
        t: float,
    ) -> tuple[Floats, Floats, Floats, Floats]:
        """The threshold policy's refused share, transfers, volume and feasibility (module
        docstring)."""
        demand, levels, bridging = self.demand, self.levels, self.bridging
        recv = demand.receivable_usd
        overshoot = shape.overshoot_share * token_total_usd
        b = (1.0 - kappa) * cap
        feasible = (b + overshoot >= max(shape.min_transfer_usd, 1e-9)) & (others_band_usd > 0)
        u = np.full_like(cap, max(others_band_usd, 1e-9))
        variance = demand.variance_usd2_per_s * levels.fits[levels.index(cap)]
        low, mean_exit = _exit(np.maximum(b, 1e-9), u, -demand.drain_usd_per_s, variance)
        transfers = np.where(feasible, t * low / mean_exit, 0.0)
        moved = transfers * (b + overshoot)
        bottom = kappa * cap - recv
        nodes = time_nodes(bridging.latency_s, _LATENCY_ORDER)
        travel = self._integral(
            (THRESHOLD,), np.ascontiguousarray(bottom), cap, nodes, bounded=False
        )
        waiting = np.minimum(transfers * float(np.mean(bridging.latency_s)), t)
        # Between top-ups: spread evenly over the band, read at Simpson's points.
        top = cap + overshoot - recv
        rest = (levels.at(bottom) + 4 * levels.at((bottom + top) / 2) + levels.at(top)) / 6
        share = (transfers * travel + (t - waiting) * rest) / t
        return share, transfers, moved, feasible.astype(np.float64)


def _exit(b: Floats, u: Floats, drift: float, variance: Floats) -> tuple[Floats, Floats]:
    """For a walk from 0 with drift ``drift`` (up) and variance rate ``variance`` on
    ``(−b, u)``: the probability it leaves at ``−b`` and the mean time it takes to leave."""
    positive = np.where(variance > 0, variance, 1.0)
    k = 2.0 * drift / positive
    flat = np.abs(k) * np.maximum(b, u) < _FLAT
    j = np.where(flat, 1.0, np.abs(k))
    # (1 − e^{−ku})/(e^{kb} − e^{−ku}), rearranged by the sign of k so exponents stay <= 0.
    rising = (np.exp(-j * b) - np.exp(-j * (u + b))) / -np.expm1(-j * (u + b))
    falling = -np.expm1(-j * u) / -np.expm1(-j * (u + b))
    low = np.where(flat, u / (u + b), np.where(k > 0, rising, falling))
    safe = drift if drift != 0 else 1.0
    mean = np.where(flat, b * u / positive, ((1 - low) * u - low * b) / safe)
    return low, np.maximum(mean, 1e-9)
