"""The report's inventory section: where the latest backtest's capital was, chain by chain, and
what rebalancing it cost, under the rebalancing policy the backtest ran.

- figure ``inventory.png``: one panel per token, the service's inventory on each chain over
  virtual time (whole tokens, tokens on chain), each transfer marked where it arrived;
- table ``inventory.csv``: per chain and token the net flow of the filled orders (with its
  95 % interval per hour, :func:`toolkit.models.netflow.net_flow`), the rebalanced volume in and
  out, the bridge fees and gas (:func:`toolkit.models.rebalancing.rebalancing_by_chain`).

>>> from pathlib import Path
>>> from toolkit.report.load import ReportData
>>> empty = pl.DataFrame()
>>> page = Page(Path("unused"))
>>> inventory_section(ReportData("demo", empty, empty, empty, empty, None, empty, empty), page)
>>> page.skipped
['inventory: no rows in backtest_inventory']
"""

from __future__ import annotations

import math

import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import StrMethodFormatter

from toolkit.models.netflow import net_flow
from toolkit.models.rebalancing import rebalancing_by_chain
from toolkit.report.load import ReportData
from toolkit.report.page import Page
from toolkit.report.style import chain_color, dress, legend, new_figure
from toolkit.report.summary import summary_rows
from toolkit.report.tables import Estimate
from toolkit.report.units import chain_name, usd, whole_tokens

__all__ = ["inventory_figure", "inventory_section", "inventory_table"]


def inventory_figure(inventory: pl.DataFrame, transfers: pl.DataFrame, policy: str) -> Figure:
    """Inventory per chain over time, one panel per token, transfers marked at arrival.

    Parameters
    ----------
    inventory : polars.DataFrame
        The run's inventory samples (``t`` in virtual seconds, ``chain``, ``token``,
        ``on_chain`` in smallest units).
    transfers : polars.DataFrame
        Its transfers (``token``, ``dst_chain``, ``arrives_at``).
    policy : str
        The rebalancing policy the run assumed (in the title).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not saved).

    Examples
    --------
    >>> inv = pl.DataFrame({"t": [0.0, 3600.0], "chain": [8453] * 2, "token": ["USDC"] * 2,
    ...     "on_chain": [2_000_000, 1_000_000]})
    >>> moved = pl.DataFrame(schema={"token": pl.String, "dst_chain": pl.Int64,
    ...     "arrives_at": pl.Float64})
    >>> inventory_figure(inv, moved, "threshold").axes[0].get_title()
    'USDC inventory per chain (policy threshold; ▲ a transfer arrives)'
    """
    tokens = inventory["token"].unique(maintain_order=True).to_list()
    figure = new_figure(1.4)
    axes = figure.subplots(len(tokens), 1, sharex=True, squeeze=False)[:, 0]
    for ax, token in zip(axes, tokens, strict=True):
        mine = inventory.filter(pl.col("token") == token)
        chains = mine["chain"].unique(maintain_order=True).to_list()
        for chain in chains:
            series = mine.filter(pl.col("chain") == chain).sort("t")
            hours = [t / 3600.0 for t in series["t"].to_list()]
            held = [whole_tokens(v, chain, token) for v in series["on_chain"].to_list()]
            ax.plot(hours, held, lw=1, color=chain_color(chain), label=chain_name(chain))
            landed = transfers.filter((pl.col("token") == token) & (pl.col("dst_chain") == chain))[
                "arrives_at"
            ].to_list()
            if landed:
                times = series["t"].to_list()
                at = [held[max(0, _before(times, t))] for t in landed]
                ax.plot(
                    [t / 3600.0 for t in landed], at, "^", ms=4, color=chain_color(chain),
                    markeredgecolor="black", markeredgewidth=0.4,
                )  # fmt: skip
        dress(
            ax,
            title=f"{token} inventory per chain (policy {policy}; ▲ a transfer arrives)",
            xlabel="virtual time (hours)",
            ylabel=f"on chain ({token})",
        )
        ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        legend(ax, len(chains))
    return figure


def _before(times: list[float], t: float) -> int:
    """Index of the last sample at or before ``t`` (0 before the first)."""
    low, high = 0, len(times)
    while low < high:
        mid = (low + high) // 2
        if times[mid] <= t:
            low = mid + 1
        else:
            high = mid
    return low - 1


def inventory_table(data: ReportData) -> pl.DataFrame:
    """Net flow and rebalancing per chain and token of the latest backtest, for people.

    Parameters
    ----------
    data : ReportData
        Its ``backtest_orders``, ``backtest_transfers`` and ``backtest_inventory`` (whose time
        span is the net flow's denominator).

    Returns
    -------
    polars.DataFrame
        ``chain`` (name), ``token``, ``orders``, ``net_tokens`` and the net per hour with its
        95 % interval (``net_per_h``, ``_low``, ``_high``, whole tokens), ``transfers_in``,
        ``rebalanced_in_tokens``, ``transfers_out``, ``rebalanced_out_tokens``,
        ``rebalanced_usd`` (in and out), ``cost_usd`` (bridge fees and gas of the transfers
        out) and ``cost_bps`` of what the chain delivered.

    Examples
    --------
    >>> orders = pl.DataFrame({"src_chain": [1], "dst_chain": [8453], "token": ["USDC"],
    ...     "input_amount": [2_000_000], "output_amount": [1_999_000]})
    >>> inv = pl.DataFrame({"t": [0.0, 3600.0], "chain": [1, 1], "token": ["USDC"] * 2})
    >>> moved = pl.DataFrame(schema={"token": pl.String, "src_chain": pl.Int64,
    ...     "dst_chain": pl.Int64, "amount": pl.Int128, "fee": pl.Int128,
    ...     "gas_usd": pl.Float64, "cost_usd": pl.Float64})
    >>> empty = pl.DataFrame()
    >>> data = ReportData("demo", empty, empty, empty, empty, "bt", empty, empty,
    ...     backtest_orders=orders, backtest_inventory=inv, backtest_transfers=moved)
    >>> inventory_table(data).select("chain", "net_tokens").rows()
    [('Ethereum', 2.0), ('Base', -1.999)]
    """
    times = data.backtest_inventory["t"].cast(pl.Float64).to_list()
    span = max(times) - min(times) if len(times) > 1 else 0.0
    net = net_flow(data.backtest_orders, span_s=max(span, 1.0))
    table = rebalancing_by_chain(net, data.backtest_transfers)
    rows = []
    for r in table.iter_rows(named=True):
        chain, token = r["chain"], r["token"]

        def tokens(value: object, chain: int = chain, token: str = token) -> float | None:
            return whole_tokens(int(value), chain, token) if value is not None else None  # type: ignore[call-overload]

        moved = [usd(r["rebalanced_in"], chain, token), usd(r["rebalanced_out"], chain, token)]
        delivered = usd(r["delivered"], chain, token)
        rows.append(
            {
                "chain": chain_name(chain),
                "token": token,
                "orders": r["n"],
                "net_tokens": tokens(r["net"]),
                **{
                    k: None if r[k] is None else tokens(round(r[k]))
                    for k in ("net_per_h", "net_per_h_low", "net_per_h_high")
                },
                "transfers_in": r["transfers_in"],
                "rebalanced_in_tokens": tokens(r["rebalanced_in"]),
                "transfers_out": r["transfers_out"],
                "rebalanced_out_tokens": tokens(r["rebalanced_out"]),
                "rebalanced_usd": None if None in moved else math.fsum(moved),  # type: ignore[arg-type]
                "cost_usd": r["cost_usd"],
                "cost_bps": None
                if not delivered or r["cost_usd"] is None
                else 1e4 * r["cost_usd"] / delivered,
            }
        )
    return pl.DataFrame(rows, orient="row", infer_schema_length=None)


def inventory_section(data: ReportData, page: Page) -> None:
    """Where the latest backtest's capital was and what rebalancing cost (module docstring).

    Parameters
    ----------
    data : ReportData
        The frames the report is drawn from (the latest backtest's ``backtest_inventory``,
        ``backtest_transfers``, ``backtest_orders`` and ``backtest_policy``).
    page : Page
        The report being written: the section adds its files, summary rows and Markdown
        section to it, or the reason it is left out to ``page.skipped``.

    Returns
    -------
    None
        The section is added to ``page``.

    Examples
    --------
    >>> from pathlib import Path
    >>> empty = pl.DataFrame()
    >>> page = Page(Path("unused"))
    >>> inventory_section(ReportData("demo", empty, empty, empty, empty, None, empty, empty), page)
    >>> page.skipped
    ['inventory: no rows in backtest_inventory']
    """
    if data.backtest_run is None or data.backtest_inventory.height == 0:
        page.skipped.append("inventory: no rows in backtest_inventory")
        return
    policy = data.backtest_policy or "not recorded"
    table = inventory_table(data)
    page.table("inventory.csv", table)
    page.figure(
        "inventory.png",
        inventory_figure(data.backtest_inventory, data.backtest_transfers, policy),
    )
    items: list[tuple[str, object]] = [("rebalancing policy", policy)]
    items.append(("transfers", data.backtest_transfers.height))
    cost = data.backtest_transfers["cost_usd"].sum() if data.backtest_transfers.height else 0.0
    items.append(("rebalancing cost (USD)", float(cost or 0.0)))
    for r in table.iter_rows(named=True):
        if r["net_per_h"] is not None:
            items.append(
                (
                    f"net flow per hour, {r['chain']} {r['token']} (tokens)",
                    Estimate(r["net_per_h"], r["orders"], r["net_per_h_low"], r["net_per_h_high"]),
                )
            )
    page.summary += summary_rows("inventory", items)
    page.sections.append(
        (
            f"Inventory and rebalancing of the latest backtest (policy {policy})",
            table.select(
                "chain",
                "token",
                "net_tokens",
                "net_per_h",
                "transfers_in",
                "rebalanced_in_tokens",
                "transfers_out",
                "rebalanced_usd",
                "cost_usd",
            ),
            ("inventory.png",),
        )
    )
