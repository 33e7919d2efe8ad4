"""The capital-placement problem (:class:`PlacementProblem`: holdings, grids, bound, rate) and
its answer for one policy (:class:`Placement`).

>>> import numpy as np
>>> from toolkit.models.inventory import HoldingDemand
>>> d = HoldingDemand(1, "USDC", 0.0, 1e6, 1.0, 0.0, 0.0, 0.0, np.array([1e3, 5e3]))
>>> len(capital_grid(d, 86_400.0)) > 10
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from toolkit.arguments import number
from toolkit.models.inventory import PERIODIC, Bridging, HoldingDemand, HoldingModel

__all__ = ["Placement", "PlacementProblem", "capital_grid"]

Floats = npt.NDArray[np.float64]

_KAPPAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
_PERIODS_S = (3600.0, 4 * 3600.0, 86_400.0)


def capital_grid(demand: HoldingDemand, horizon_s: float, *, ratio: float = 1.2,
                 start_usd: float = 0.0) -> Floats:  # fmt: skip
    """Capital levels (USD) to try for one holding: geometric by ``ratio``, from its median RFQ
    (at least 100 USD) to what a walk over ``horizon_s`` without rebalancing needs, ``|ν|T + 5·
    s√T`` plus its largest RFQ, and at least four times ``start_usd``.

    Parameters
    ----------
    demand : HoldingDemand
        The holding's flow.
    horizon_s : float
        ``T``, seconds.
    ratio : float
        Between neighbouring levels (``> 1``).
    start_usd : float
        The holding's capital today.

    Returns
    -------
    numpy.ndarray
        The levels, increasing.

    Examples
    --------
    >>> d = HoldingDemand(1, "USDC", 0.0, 1e6, 1.0, 0.0, 0.0, 0.0, np.array([1e3, 5e3]))
    >>> g = capital_grid(d, 86_400.0)
    >>> float(g[0]), bool(g[-1] > 5 * (1e6 * 86_400) ** 0.5), bool(np.allclose(g[1:] / g[:-1], 1.2))
    (3000.0, True, True)
    """
    r = number(ratio, "ratio", above=1.0)
    t = number(horizon_s, "horizon_s", above=0)
    sizes = np.asarray(demand.sizes_usd, dtype=np.float64)
    low = max(float(np.median(sizes)) if sizes.size else 0.0, 100.0)
    walk = abs(demand.drain_usd_per_s) * t + 5.0 * math.sqrt(demand.variance_usd2_per_s * t)
    high = max(walk + (float(sizes.max()) if sizes.size else 0.0), 4.0 * start_usd, 10.0 * low)
    steps = math.ceil(math.log(high / low) / math.log(r))
    return np.asarray(low * r ** np.arange(steps + 1), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class PlacementProblem:
    """What :func:`search_placement` solves: the holdings' surrogates and capital grids, the
    horizon, the largest 404 share, the opportunity rate (a share a year), and the policy's
    scenario-wide settings and the values searched (``kappas``, ``periods_s``). Build it with
    :meth:`build`."""

    models: tuple[HoldingModel, ...]
    grids: tuple[Floats, ...]
    horizon_s: float
    max_share_404: float
    capital_rate: float
    start_usd: tuple[float, ...]
    overshoot_share: float = 0.0
    min_transfer_usd: float = 0.0
    kappas: tuple[float, ...] = _KAPPAS
    periods_s: tuple[float, ...] = _PERIODS_S

    @classmethod
    def build(
        cls,
        demands: Sequence[HoldingDemand],
        bridgings: Sequence[Bridging],
        *,
        horizon_s: float,
        max_share_404: float,
        capital_rate: float,
        start_usd: Sequence[float] | None = None,
        overshoot_share: float = 0.0,
        min_transfer_usd: float = 0.0,
        kappas: Sequence[float] = _KAPPAS,
        periods_s: Sequence[float] = _PERIODS_S,
        ratio: float = 1.2,
    ) -> PlacementProblem:
        """The problem for ``demands`` (one per holding) and how transfers reach each
        (``bridgings``, same order); ``start_usd`` is each holding's capital today (it widens
        the grid and starts the threshold fixed point; default the grid's middle)."""
        if len(demands) != len(bridgings) or not demands:
            raise ValueError("bridgings: must give one Bridging per demand (at least one)")
        number(max_share_404, "max_share_404", above=0, below=1)
        number(capital_rate, "capital_rate", minimum=0)
        starts = [0.0] * len(demands) if start_usd is None else [float(x) for x in start_usd]
        grids = tuple(
            capital_grid(d, horizon_s, ratio=ratio, start_usd=s)
            for d, s in zip(demands, starts, strict=True)
        )
        peers = {d.token: sum(1 for e in demands if e.token == d.token) for d in demands}
        models = tuple(
            HoldingModel(
                d, b, float(g[-1]) * 1.5, peers=peers[d.token], resolution_usd=float(g[0]) / 16
            )
            for d, b, g in zip(demands, bridgings, grids, strict=True)
        )
        if start_usd is None:
            starts = [float(g[len(g) // 2]) for g in grids]
        if any(not 0 <= k < 1 for k in kappas) or any(p <= 0 for p in periods_s):
            raise ValueError("kappas: must lie in [0, 1); periods_s: must be > 0")
        return cls(
            models, grids, float(horizon_s), float(max_share_404), float(capital_rate),
            tuple(starts), float(overshoot_share), float(min_transfer_usd), tuple(kappas),
            tuple(float(p) for p in periods_s),
        )  # fmt: skip


@dataclass(frozen=True)
class Placement:
    """The best choice the search found for one policy: per holding its ``capital_usd`` and
    ``threshold_fraction`` (κ; threshold only), and the surrogate's figures over the horizon;
    the book's predicted ``share_404``, ``cost_usd`` (capital + rebalancing) and the Lagrangian
    ``lower_bound_usd`` on any feasible choice for this policy on the grid."""

    policy: str
    period_s: float | None
    holdings: pl.DataFrame
    share_404: float
    cost_usd: float
    capital_usd: float
    capital_cost_usd: float
    rebalancing_cost_usd: float
    lower_bound_usd: float
    converged: bool
    #: The 404 share the surrogate was held to (``max_share_404`` unless refined).
    target_share_404: float = math.nan
    #: Searched again with the bound corrected by the replays' bias (``toolkit.backtest``).
    refined: bool = False

    @property
    def label(self) -> str:
        """``none``, ``threshold``, ``periodic 4h``; ``, refined`` when it was."""
        name = self.policy
        if self.policy == PERIODIC and self.period_s is not None:
            name = f"periodic {self.period_s / 3600:g}h"
        return f"{name}, refined" if self.refined else name
