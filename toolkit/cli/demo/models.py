"""The demo's models on what it collected, printed for people: fee curves with their
slopes' intervals, 404 shares by route, and the collector's own hold on the pools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import polars as pl

    from toolkit.store import Store

__all__ = ["print_models"]


def print_models(store: Store, stream: TextIO, step: Any) -> None:
    """Print what the models make of the collection: fee curves, 404 shares, observer effect."""
    import polars as pl

    from toolkit.models import capacity, pricing
    from toolkit.report.units import chain_name

    step("models: fee curves and 404 rates of what was collected")
    observations = store.query("select * from rfq_observations")
    curve = pricing.fee_curve(observations)
    keys = ["src_chain", "dst_chain", "token"]
    _print_frame(
        _named(
            curve.sort(*keys, "quote_type")
            .head(6)
            .select(*keys, "quote_type", "n", "r2", _fee_finding().alias("fee by size"))
        ),
        "fee curves, fee_bps = a + b * log10(amount), with the slope's 95 % interval "
        "(first 6 routes; a slope whose interval holds 0 is no finding)",
        stream,
    )
    _print_frame(_refusals(store), _REFUSALS_TITLE, stream)
    # The observer effect: how much of each destination pool the sweep's own quotes (and the
    # orders it converted them to) held while it measured, against the pools' balances.
    rfq_runs = store.query("select run_id from collection_runs where kind = 'rfq'")["run_id"]
    swept = observations.filter(pl.col("run_id").is_in(rfq_runs.to_list()))
    transactions = store.query("select quote_id, observed_at from transactions")
    pools = store.query(
        "select chain, token, balance from pool_snapshots where snapshot_id = "
        "(select snapshot_id from pool_snapshots order by observed_at limit 1)"
    )
    held = capacity.observer_share(swept, pools, transactions=transactions).sort(
        "held_peak_share", descending=True
    )
    names = [chain_name(c) for c in held["dst_chain"]]
    _print_frame(
        held.head(6)
        .with_columns(pl.Series("chain", names[:6]))
        .select(
            "chain",
            "token",
            "quotes",
            (100 * pl.col("held_mean_share")).alias("held_mean_pct"),
            (100 * pl.col("held_peak_share")).alias("held_peak_pct"),
        ),
        "observer effect: share of each pool the RFQ sweep's own quotes held while it measured "
        "(highest 6)",
        stream,
    )


_REFUSALS_TITLE = (
    "404 share by route, the market's (other users' requests; Wilson 95 %) against the "
    "collector's own sweep (95 % clustered by round: its consecutive RFQs are not independent), "
    "highest 6 by the sweep's share"
)


def _refusals(store: Store) -> pl.DataFrame:
    """The report's 404 table (:func:`toolkit.report.refusals.refusal_table`), one row per
    route with the market's and the sweep's share side by side, in %."""
    import polars as pl

    from toolkit.report.load import load_data
    from toolkit.report.refusals import refusal_table

    table = refusal_table(load_data(store))
    pct = [
        pl.col("answered").alias("n"),
        (100 * pl.col("share_404")).round(1).alias("pct"),
        pl.format(
            "{}–{}", (100 * pl.col("ci95_low")).round(1), (100 * pl.col("ci95_high")).round(1)
        ).alias("ci95"),
    ]
    market = table.filter(pl.col("source") == "market").select("route", *pct)
    sweep = table.filter(pl.col("source") == "collector sweep").select(
        "route", *pct, pl.col("own_hold_peak_pct").round(0).alias("own_hold_peak_pct")
    )
    return (
        sweep.join(market, on="route", how="full", suffix="_market", coalesce=True)
        .rename({"n": "n_sweep", "pct": "pct_sweep", "ci95": "ci95_sweep"})
        .sort("pct_sweep", "route", descending=[True, False], nulls_last=True)
        .head(6)
    )


def _named(frame: pl.DataFrame) -> pl.DataFrame:
    """``src_chain``/``dst_chain`` ids as one ``route`` column of chain names, for people."""
    import polars as pl

    from toolkit.report.units import chain_name

    routes = [
        f"{chain_name(s)}→{chain_name(d)}" for s, d in frame.select("src_chain", "dst_chain").rows()
    ]
    return frame.drop("src_chain", "dst_chain").insert_column(0, pl.Series("route", routes))


def _fee_finding() -> Any:
    """What a fitted fee curve says, in words: the slope with its 95 % interval where the
    interval excludes 0, else that no size dependence was detected (with r² and n)."""
    import polars as pl

    slope = pl.col("log10_amount_coef")
    lo, hi = pl.col("log10_amount_coef_lo"), pl.col("log10_amount_coef_hi")
    r2 = pl.col("r2").fill_null(0.0).round(4).cast(pl.String)
    found = pl.format(
        "{} bps per tenfold size (95 % CI {} to {})", slope.round(3), lo.round(3), hi.round(3)
    )
    none = pl.format("no size dependence detected (r² = {}, n = {})", r2, pl.col("n"))
    return (
        pl.when(pl.col("size_dependence"))
        .then(found)
        .when(pl.col("size_dependence").is_null())
        .then(pl.format("too few quotes to fit (n = {})", pl.col("n")))
        .otherwise(none)
    )


def _print_frame(frame: pl.DataFrame, title: str, stream: TextIO) -> None:
    import polars as pl

    print(f"\n{title}", file=stream)
    with pl.Config(
        tbl_rows=20,
        tbl_cols=12,
        tbl_hide_dataframe_shape=True,
        float_precision=4,
        fmt_str_lengths=80,
        tbl_width_chars=160,
    ):
        print(frame, file=stream)
    print("", file=stream)
