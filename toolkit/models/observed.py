"""Capacity seen in collected data: pool state over time and the observed 404 share."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from toolkit.arguments import number
from toolkit.models.bps import answer_counts, share_404
from toolkit.models.frames import Kind, check_keys, duration_seconds, epoch_seconds, prepare
from toolkit.models.intervals import clustered_share

_EVENT_SPEC: dict[str, Kind] = {
    "source": "str",
    "event_id": "int",
    "event": "str",
    "received_at": "datetime",
    "chain": "int",
    "token": "str",
    "pool_type": "str",
    "balance": "amount",
    "reserved": "amount",
    "outstanding": "amount",
}
_POOL = ["source", "chain", "token", "pool_type"]
_STATE = ["balance", "reserved", "outstanding"]

_OBS_SPEC: dict[str, Kind] = {"observed_at": "datetime", "status": "int"}
_HOLD_SPEC: dict[str, Kind] = {
    "observed_at": "datetime",
    "status": "int",
    "quote_id": "str",
    "dst_chain": "int",
    "token": "str",
    "output_amount": "amount",
    "valid_until": "int",
}
_TX_SPEC: dict[str, Kind] = {"quote_id": "str", "observed_at": "datetime"}
_BALANCE_SPEC: dict[str, Kind] = {"chain": "int", "token": "str", "balance": "amount"}
_BLOCKING_BY = ("src_chain", "dst_chain", "token")


def capacity_timeline(events: pl.DataFrame) -> pl.DataFrame:
    """Step function of each pool's liquidity from a ``liquidity_events`` frame.

    One row per state a pool was in: ``valid_from`` is when the state was received,
    ``valid_to`` when the next one was (null for the current state) and ``duration_s`` the
    time between. Pools are keyed by ``(source, chain, token, pool_type)``: ``source`` stays
    in the key because two services' pools are different pools even with the same name.
    ``fee`` events are ignored, and a state equal to the one before it (the stream pushes the
    current state again on every reconnect) does not start a new step.

    Amounts stay exact (Int128): ``available`` (the event's ``balance``), ``reserved``,
    ``outstanding`` and ``total`` (their sum). ``utilization`` is ``(reserved + outstanding) /
    total``, null when the total is zero or a part is unknown. An empty input gives an empty
    frame with these columns.

    Parameters
    ----------
    events : polars.DataFrame
        Liquidity events: the store's liquidity_events as stored.

    Returns
    -------
    polars.DataFrame
        One row per pool state with the columns above, sorted by pool and valid_from.

    Examples
    --------
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> events = pl.DataFrame({
    ...     "source": ["svc", "svc"], "event_id": [1, 2], "event": ["liquidity"] * 2,
    ...     "received_at": [at, at + dt.timedelta(seconds=15)], "chain": [1, 1],
    ...     "token": ["USDC"] * 2, "pool_type": ["main"] * 2, "balance": [100, 60],
    ...     "reserved": [0, 40], "outstanding": [0, 0],
    ... })
    >>> capacity_timeline(events)["utilization"].to_list()
    [0.0, 0.4]
    """
    frame = prepare(events, "capacity_timeline", _EVENT_SPEC)
    steps = (
        frame.filter(pl.col("event") == "liquidity")
        .sort([*_POOL, "received_at", "event_id"], nulls_last=True)
        .filter(_state_changed())
        .with_columns(
            pl.col("received_at").shift(-1).over(_POOL).alias("valid_to"),
            (pl.col("balance") + pl.col("reserved") + pl.col("outstanding")).alias("total"),
        )
    )
    total = pl.col("total")
    used = (pl.col("reserved") + pl.col("outstanding")).cast(pl.Float64)
    return steps.select(
        *_POOL,
        pl.col("received_at").alias("valid_from"),
        "valid_to",
        (epoch_seconds("valid_to") - epoch_seconds("received_at")).alias("duration_s"),
        "event_id",
        pl.col("balance").alias("available"),
        "reserved",
        "outstanding",
        "total",
        pl.when(total > 0).then(used / total.cast(pl.Float64)).alias("utilization"),
    )


def empirical_blocking(
    observations: pl.DataFrame,
    *,
    by: str | Sequence[str] = _BLOCKING_BY,
    window: str | None = "1m",
    hold_s: float = 15.0,
) -> pl.DataFrame:
    """Observed 404 share of RFQ attempts per route and time window, with its offered load.

    Only 200 and 404 answers are the loss system's arrivals (``answered``): a 404 is the
    capacity refusal, a 200 a reservation. Other statuses (400, 401, 5xx, 0 for a transport
    failure) are counted in ``other`` and left out of the share. Per group:

    - ``blocking = blocked / answered`` and its binomial standard error
      ``sqrt(b·(1 − b) / answered)`` (null without answers);
    - ``rate_per_s = answered / window length`` and ``offered_load = rate_per_s · hold_s``
      erlangs, to set against :func:`erlang_b` or :func:`kaufman_roberts`. ``hold_s`` is the
      mean hold (15 s for a sweep that never converts; see :func:`mean_hold`).

    ``window`` is a fixed-length polars duration (``"30s"``, ``"1m"``); windows are aligned
    to the epoch, so the first and last are often partial and their rate reads low.
    ``window=None`` takes each group whole, over the span from its first to its last attempt.
    Retries after a 404 are new arrivals here; they break the Poisson assumption of the
    formulas, which is one reason observed and theoretical blocking differ.

    Parameters
    ----------
    observations : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    by : str or sequence of str
        The grouping keys (default: source chain, destination chain, token).
    window : str or None
        The window length, a fixed-length polars duration; None for each group whole.
    hold_s : float
        Mean hold in seconds for the offered load (mean_hold).

    Returns
    -------
    polars.DataFrame
        One row per group and window: the keys, window_start, window_end, attempts, answered,
        ok, blocked, other, blocking, std_error, rate_per_s, offered_load.

    Examples
    --------
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> obs = pl.DataFrame({
    ...     "observed_at": [at + dt.timedelta(seconds=s) for s in (0, 10, 20, 30)],
    ...     "status": [200, 404, 200, 500], "src_chain": [1] * 4, "dst_chain": [10] * 4,
    ...     "token": ["USDC"] * 4,
    ... })
    >>> empirical_blocking(obs).select("answered", "blocked", "offered_load").row(0)
    (3, 1, 0.75)
    """
    func = "empirical_blocking"
    frame = prepare(observations, func, _OBS_SPEC)
    keys = check_keys(frame, func, by)
    hold = number(hold_s, "hold_s", minimum=0.0)
    if window is None:
        first, last = pl.col("observed_at").min(), pl.col("observed_at").max()
        if keys:
            first, last = first.over(keys), last.over(keys)
        windowed = frame.with_columns(first.alias("window_start"), last.alias("window_end"))
    else:
        seconds = duration_seconds(window, "window", func)
        windowed = frame.with_columns(
            pl.col("observed_at").dt.truncate(window).alias("window_start")
        ).with_columns(pl.col("window_start").dt.offset_by(window).alias("window_end"))
    counts = (
        windowed.group_by([*keys, "window_start", "window_end"])
        .agg(answer_counts())
        .with_columns(
            (pl.col("ok") + pl.col("blocked")).alias("answered"),
            share_404(name="blocking"),
        )
        .with_columns((pl.col("attempts") - pl.col("answered")).alias("other"))
    )
    span = epoch_seconds("window_end") - epoch_seconds("window_start")
    length = span if window is None else pl.lit(seconds)
    blocking = pl.col("blocking")
    return (
        counts.with_columns(
            (blocking * (1.0 - blocking) / pl.col("answered")).sqrt().alias("std_error"),
            pl.when(length > 0).then(pl.col("answered") / length).alias("rate_per_s"),
        )
        .with_columns((pl.col("rate_per_s") * hold).alias("offered_load"))
        .select(
            *keys,
            "window_start",
            "window_end",
            "attempts",
            "answered",
            "ok",
            "blocked",
            "other",
            "blocking",
            "std_error",
            pl.col("rate_per_s").cast(pl.Float64),
            pl.col("offered_load").cast(pl.Float64),
        )
        .sort([*keys, "window_start"], nulls_last=True)
    )


def observer_share(
    observations: pl.DataFrame,
    pools: pl.DataFrame,
    *,
    transactions: pl.DataFrame | None = None,
    order_window_s: float = 60.0,
) -> pl.DataFrame:
    """How much of each destination pool a collector's own quotes held while it measured.

    Every 200 answer reserves its ``output_amount`` on the destination pool until its
    ``valid_until``; a quote the collector converted (its ``quote_id`` in ``transactions``)
    holds it ``order_window_s`` seconds from the conversion instead. Against the pools' total
    balance per ``(chain, token)`` (``pools``: one snapshot, ``chain``, ``token``, ``balance``),
    per destination ``(dst_chain, token)``:

    - ``quotes``: the collector's reservations; ``held_mean_share``: the time-average share of
      the pool they held over the collector's span (its first quote to its last hold's end);
    - ``held_peak_share``: the largest share held at one instant.

    A sweep whose own holds reach a large share is measuring itself: the 404s it then sees are
    partly its own. An empty frame (same columns) when nothing was reserved.

    Parameters
    ----------
    observations : polars.DataFrame
        RFQ observations: the store's rfq_observations as stored (extra columns are kept); the
        columns named above are required.
    pools : polars.DataFrame
        One pool snapshot: chain, token, balance (the store's pool_snapshots).
    transactions : polars.DataFrame, optional
        The collector's converted quotes (quote_id, observed_at: the store's transactions).
    order_window_s : float
        How long an order holds its amount after the conversion (60 s).

    Returns
    -------
    polars.DataFrame
        One row per destination (dst_chain, token): quotes, held_mean_share, held_peak_share.

    Examples
    --------
    >>> import datetime as dt
    >>> at = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    >>> t0 = int(at.timestamp())
    >>> obs = pl.DataFrame({
    ...     "observed_at": [at, at + dt.timedelta(seconds=5), at],
    ...     "status": [200, 200, 404], "quote_id": ["a", "b", None], "dst_chain": [10] * 3,
    ...     "token": ["USDC"] * 3, "output_amount": [100, 300, None],
    ...     "valid_until": [t0 + 15, t0 + 20, None]})
    >>> pools = pl.DataFrame({"chain": [10], "token": ["USDC"], "balance": [1_000]})
    >>> observer_share(obs, pools).select("quotes", "held_mean_share", "held_peak_share").row(0)
    (2, 0.3, 0.4)
    """
    func = "observer_share"
    frame = prepare(observations, func, _HOLD_SPEC)
    balances = prepare(pools, func, _BALANCE_SPEC)
    window = number(order_window_s, "order_window_s", minimum=0.0)
    converted = None
    if transactions is not None:
        converted = prepare(transactions, func, _TX_SPEC).select(
            "quote_id", (epoch_seconds("observed_at") + window).alias("order_end")
        )
    holds = _holds(frame, converted)
    span = holds.select((pl.col("end").max() - pl.col("start").min()).alias("span"))
    seconds = float(span["span"][0] or 0.0) if holds.height else 0.0
    totals = balances.group_by(pl.col("chain").alias("dst_chain"), "token").agg(
        pl.col("balance").sum().cast(pl.Float64).alias("total")
    )
    held = holds.group_by(_DESTINATION).agg(
        pl.len().cast(pl.Int64).alias("quotes"),
        ((pl.col("end") - pl.col("start")) * pl.col("amount")).sum().alias("amount_seconds"),
    )
    share = pl.when(pl.col("total") > 0)
    return (
        held.join(_held_peaks(holds), on=_DESTINATION)
        .join(totals, on=_DESTINATION, how="left")
        .select(
            *_DESTINATION,
            "quotes",
            share.then(pl.col("amount_seconds") / (pl.col("total") * seconds))
            .otherwise(None)
            .alias("held_mean_share")
            if seconds > 0
            else pl.lit(None, pl.Float64).alias("held_mean_share"),
            share.then(pl.col("peak") / pl.col("total")).otherwise(None).alias("held_peak_share"),
        )
        .sort(_DESTINATION)
    )


#: :func:`observer_share`'s key: the destination pool.
_DESTINATION = ["dst_chain", "token"]


def _holds(frame: pl.DataFrame, converted: pl.DataFrame | None) -> pl.DataFrame:
    """The reservations of the 200 answers: destination, ``start`` and ``end`` (epoch
    seconds) and ``amount``. A converted quote (``converted``: quote_id, order_end) holds to
    its order's end instead of its ``valid_until``; a hold never ends before it starts."""
    holds = frame.filter(
        (pl.col("status") == 200)
        & pl.col("output_amount").is_not_null()
        & pl.col("valid_until").is_not_null()
    ).with_columns(
        epoch_seconds("observed_at").alias("start"),
        pl.col("valid_until").cast(pl.Float64).alias("end"),
    )
    if converted is not None:
        holds = (
            holds.join(converted.unique("quote_id"), on="quote_id", how="left")
            .with_columns(pl.coalesce("order_end", "end").alias("end"))
            .drop("order_end")
        )
    return holds.with_columns(pl.max_horizontal("start", "end").alias("end")).select(
        *_DESTINATION, "start", "end", pl.col("output_amount").cast(pl.Float64).alias("amount")
    )


def _held_peaks(holds: pl.DataFrame) -> pl.DataFrame:
    """The largest amount held at one instant per destination (``peak``): a running sum over
    the holds' starts (+amount) and ends (-amount)."""
    keys = _DESTINATION
    steps = pl.concat(
        [
            holds.select(*keys, pl.col("start").alias("t"), pl.col("amount").alias("change")),
            holds.select(*keys, pl.col("end").alias("t"), (-pl.col("amount")).alias("change")),
        ]
    ).sort([*keys, "t", "change"])  # at one instant, releases before new holds
    return (
        steps.with_columns(pl.col("change").cum_sum().over(keys).alias("held"))
        .group_by(keys)
        .agg(pl.col("held").max().alias("peak"))
    )


def _state_changed() -> pl.Expr:
    """True on a pool's first event and wherever its state differs from the previous one."""
    changed = pl.lit(False)
    for column in _STATE:
        changed = changed | pl.col(column).ne_missing(pl.col(column).shift(1).over(_POOL))
    first = pl.int_range(pl.len()).over(_POOL) == 0
    return first | changed


def sweep_refusal_share(
    observations: pl.DataFrame,
) -> tuple[float | None, int, float | None, float | None]:
    """The 404 share of a sweep's 200/404 answers, with its 95 % interval clustered by round.

    A sweep asks each route several amounts in a row within one ``round``; those RFQs meet the
    same pool state, so they are not independent trials: the interval is
    :func:`toolkit.models.intervals.clustered_share` over ``(run_id, round)`` clusters.

    Parameters
    ----------
    observations : polars.DataFrame
        RFQ observations (the store's ``rfq_observations``): ``run_id``, ``round``,
        ``status``; statuses other than 200 and 404 are left out.

    Returns
    -------
    tuple
        ``(share, n, low, high)``: the share, the 200/404 answers it rests on and the
        interval; ``(None, 0, None, None)`` without answers.

    Examples
    --------
    >>> obs = pl.DataFrame({"run_id": ["r"] * 6, "round": [0, 0, 0, 1, 1, 1],
    ...     "status": [200, 404, 500, 200, 200, 404]})
    >>> share, n, low, high = sweep_refusal_share(obs)
    >>> share, n, low, high
    (0.4, 5, 0.0, 1.0)
    """
    answered = observations.filter(pl.col("status").is_in([200, 404]))
    rounds = answered.group_by("run_id", "round").agg(
        pl.len().alias("n"), (pl.col("status") == 404).sum().alias("k")
    )
    share, low, high = clustered_share(rounds["k"].to_list(), rounds["n"].to_list())
    return share, answered.height, low, high
