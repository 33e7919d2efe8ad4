"""Open the DuckDB file read-only and read the tables the report draws from."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from toolkit.models.health import CreditBook, collected_book
from toolkit.report.result import ReportError
from toolkit.store import Store, StoreError, price_table
from toolkit.store.queries import (
    backtest_inventory,
    backtest_orders,
    backtest_pool_totals,
    backtest_rebalancing,
    backtest_runs,
    backtest_transfers,
    swap_routes,
)

__all__ = ["ReportData", "credit_book", "display_path", "load_data", "stored_credit_book"]

_HINT = "run toolkit collect or toolkit demo first"


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it is an absolute path below it.

    Messages and the Markdown page then read ``data/toolkit.duckdb`` rather than a
    machine-specific absolute path.

    Parameters
    ----------
    path : str or os.PathLike
        A file or folder path.

    Returns
    -------
    str
        The path relative to the working directory when below it; a relative path as given;
        otherwise the absolute path.

    Examples
    --------
    >>> display_path("data/toolkit.duckdb")
    'data/toolkit.duckdb'
    >>> display_path(Path.cwd() / "data" / "toolkit.duckdb")
    'data/toolkit.duckdb'
    """
    given = Path(os.fspath(path))
    if not given.is_absolute():
        return os.fspath(path)
    try:
        return given.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return given.as_posix()


@dataclass(frozen=True)
class ReportData:
    """The frames a report is drawn from; empty frames mean "no data for that section"."""

    where: str
    runs: pl.DataFrame
    observations: pl.DataFrame
    events: pl.DataFrame
    tiers: pl.DataFrame
    backtest_run: str | None
    backtest_requests: pl.DataFrame
    backtest_pools: pl.DataFrame
    borrow: pl.DataFrame = field(default_factory=pl.DataFrame)
    transactions: pl.DataFrame = field(default_factory=pl.DataFrame)
    swaps: pl.DataFrame = field(default_factory=pl.DataFrame)
    credit_accounts: pl.DataFrame = field(default_factory=pl.DataFrame)
    credit_protocol: pl.DataFrame = field(default_factory=pl.DataFrame)
    backtest_runs: pl.DataFrame = field(default_factory=pl.DataFrame)
    backtest_pool_totals: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: Other users' RFQs and the service's answers (runs of kind ``traffic``): the market.
    market: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: The first pool snapshot's balances (``chain``, ``token``, ``balance``).
    pools: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: The stored prices (:func:`toolkit.store.price_table`) and token names figures use.
    prices: pl.DataFrame = field(default_factory=pl.DataFrame)
    tokens: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: True when any run observed a simulated target (embedded service or backtest).
    simulated: bool = False
    #: The latest backtest's rebalancing policy (from its parameters; None: not recorded).
    backtest_policy: str | None = None
    #: The latest backtest's filled orders, inventory samples and transfers
    #: (:func:`toolkit.store.queries.backtest_orders`, ``backtest_inventory``,
    #: ``backtest_transfers``), and every run's rebalancing cost (``backtest_rebalancing``).
    backtest_orders: pl.DataFrame = field(default_factory=pl.DataFrame)
    backtest_inventory: pl.DataFrame = field(default_factory=pl.DataFrame)
    backtest_transfers: pl.DataFrame = field(default_factory=pl.DataFrame)
    backtest_rebalancing: pl.DataFrame = field(default_factory=pl.DataFrame)


def _open(path: Path, where: str) -> Store:
    if not path.exists():
        raise ReportError(f"{where}: no such DuckDB file; {_HINT}")
    if not path.is_file():
        raise ReportError(f"{where}: is not a file (expected a DuckDB database)")
    try:
        return Store(path, read_only=True)
    except StoreError as exc:
        raise ReportError(f"cannot read {where} as a toolkit database: {exc}") from None


def load_data(store_or_path: Store | str | os.PathLike[str]) -> ReportData:
    """Read every table the report uses.

    Parameters
    ----------
    store_or_path : toolkit.store.Store or path
        An open store (used as is, left open) or the path of a DuckDB file (opened read-only,
        then closed).

    Returns
    -------
    ReportData
        The frames the report is drawn from; an empty frame means no data for its section.
        :class:`ReportError` (naming the path and what to run) for a missing file or a store
        without collection runs.

    Examples
    --------
    >>> load_data("no/such/file.duckdb")
    Traceback (most recent call last):
    ...
    toolkit.report.result.ReportError: no/such/file.duckdb: no such DuckDB file; run ...
    """
    if isinstance(store_or_path, Store):
        store, owned = store_or_path, False
        where = "an in-memory store" if store.path is None else display_path(store.path)
    elif isinstance(store_or_path, str | os.PathLike):
        path = Path(store_or_path).expanduser()
        where = display_path(store_or_path)
        store, owned = _open(path, where), True
    else:
        raise TypeError(
            "store_or_path: must be a toolkit Store or a path to a DuckDB file, "
            f"got {type(store_or_path).__name__}"
        )
    try:
        # One open of the file for the whole read, not one per table (a writer waits for it
        # no longer than for one of its own flushes), and every table read from the same state.
        with store.session():
            return _read(store, where)
    except StoreError as exc:
        raise ReportError(f"cannot read {where}: {exc}") from None
    finally:
        if owned:
            store.close()


def _read(store: Store, where: str) -> ReportData:
    runs = store.runs()
    if runs.height == 0:
        raise ReportError(f"no collection runs in {where}: {_HINT}")
    # The collector's own RFQs (its sweeps), flagged when the sweep opened orders (each then
    # holds liquidity 60 s), apart from the market's (other users' RFQs, runs of kind traffic).
    observations = store.query(_RFQ.format(market="<>"))
    market = store.query(_RFQ.format(market="="))
    events = store.query("SELECT * FROM liquidity_events ORDER BY source, event_id")
    tiers = store.query(
        "SELECT * FROM fee_tiers "
        "ORDER BY observed_at, snapshot_id, src_chain, dst_chain, token, tier"
    )
    # The latest backtest run that wrote pool samples: one run's day, not a mix of runs.
    latest = store.query(
        "SELECT r.run_id FROM collection_runs r WHERE r.kind = 'backtest' "
        "AND EXISTS (SELECT 1 FROM backtest_pools p WHERE p.run_id = r.run_id) "
        "ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1"
    )
    run = str(latest["run_id"][0]) if latest.height else None
    # Only the columns the report reads: a day's backtest holds a million requests.
    requests = store.query(
        "SELECT t, status, outcome FROM backtest_requests WHERE run_id = ? ORDER BY t, request_id",
        [run],
    )
    pools = store.query("SELECT * FROM backtest_pools WHERE run_id = ? ORDER BY pool, t", [run])
    policy = None
    if run is not None:
        text = runs.filter(pl.col("run_id") == run)["parameters"].to_list()
        recorded = json.loads(text[0]) if text and text[0] else {}
        policy = recorded.get("policy")
    return ReportData(
        where,
        runs,
        observations,
        events,
        tiers,
        run,
        requests,
        pools,
        borrow=store.query("SELECT * FROM borrow_quotes ORDER BY observed_at, run_id, attempt_id"),
        transactions=store.query(
            "SELECT run_id, quote_id, observed_at, chain_id, status, findings, error "
            "FROM transactions ORDER BY observed_at, run_id, quote_id"
        ),
        swaps=swap_routes(store),
        credit_accounts=credit_book(store),
        credit_protocol=_latest_credit(store, "credit_protocol", "chain, collateral"),
        backtest_runs=backtest_runs(store),
        backtest_pool_totals=backtest_pool_totals(store),
        market=market,
        pools=store.query(
            "SELECT chain, token, balance FROM pool_snapshots WHERE snapshot_id = (SELECT "
            "snapshot_id FROM pool_snapshots ORDER BY observed_at, snapshot_id LIMIT 1)"
        ),
        prices=price_table(store),
        tokens=store.query("SELECT chain, address, symbol, decimals FROM tokens"),
        simulated=bool(runs.filter(pl.col("target_kind").is_in(["embedded", "simulated"])).height),
        backtest_policy=policy,
        backtest_orders=pl.DataFrame() if run is None else backtest_orders(store, run),
        backtest_inventory=pl.DataFrame() if run is None else backtest_inventory(store, run),
        backtest_transfers=pl.DataFrame() if run is None else backtest_transfers(store, run),
        backtest_rebalancing=backtest_rebalancing(store),
    )


def credit_book(store: Store) -> pl.DataFrame:
    """The credit book as of the latest observation of each account.

    Per ``(account, asset)`` the newest row of ``credit_accounts`` across every credit run (a
    run that looked at four borrowers does not hide the 300 accounts an earlier run saw).

    Parameters
    ----------
    store : toolkit.store.Store
        An open store.

    Returns
    -------
    polars.DataFrame
        ``credit_accounts``'s columns, one row per account and credit asset, with the
        ``run_id`` and ``observed_at`` each came from; empty without credit runs.

    Examples
    --------
    >>> from toolkit.store import Store
    >>> credit_book(Store(":memory:")).columns[:5]
    ['run_id', 'round', 'observed_at', 'account', 'asset']
    """
    return store.query(
        "SELECT * FROM credit_accounts QUALIFY row_number() OVER (PARTITION BY account, asset "
        "ORDER BY observed_at DESC, run_id DESC, round DESC) = 1 ORDER BY account, asset"
    )


def stored_credit_book(
    store: Store, prices: Mapping[str, float] | pl.DataFrame, *, asset: str = "USDC"
) -> CreditBook:
    """The store's credit book of credit asset ``asset`` as the
    :class:`~toolkit.models.health.CreditBook` every risk model takes.

    Each account's latest observation (:func:`credit_book`) with the ``credit_collateral`` rows
    of that same snapshot, under the protocol's latest maintenance LTVs and bonuses (see
    :func:`~toolkit.models.health.collected_book`).

    Parameters
    ----------
    store : toolkit.store.Store
        An open store.
    prices : mapping of str to float, or polars.DataFrame
        Symbol -> price in the credit asset, or a price table whose last row is taken.
    asset : str, optional
        The credit asset (default ``USDC``).

    Returns
    -------
    toolkit.models.health.CreditBook
        The accounts with debt or collateral in ``asset``; an empty book without credit runs.

    Examples
    --------
    >>> from toolkit.store import Store
    >>> stored_credit_book(Store(":memory:"), {}).accounts
    ()
    """
    return collected_book(
        store.query("SELECT * FROM credit_collateral"),
        credit_book(store),
        prices,
        _latest_credit(store, "credit_protocol", "chain, collateral"),
        asset=asset,
    )


def _latest_credit(store: Store, table: str, order: str) -> pl.DataFrame:
    """The latest round of the latest credit run: one snapshot of the book, not a mix."""
    return store.query(
        f"SELECT * FROM {table} WHERE (run_id, round) = ("
        f"SELECT (run_id, round) FROM {table} ORDER BY observed_at DESC, run_id DESC, "
        f"round DESC LIMIT 1) ORDER BY {order}"
    )


# RFQ observations with their run's kind: ``{market}`` ``'traffic'`` selects the market's
# (``=``) or the collectors' (``<>``); ``holds_orders`` marks a sweep that opened orders.
_RFQ = """
SELECT o.*, coalesce(TRY_CAST(json_extract_string(r.parameters, '$.follow_transactions')
                              AS BOOLEAN), false) AS holds_orders
FROM rfq_observations o LEFT JOIN collection_runs r ON r.run_id = o.run_id
WHERE coalesce(r.kind, 'rfq') {market} 'traffic'
ORDER BY o.observed_at, o.run_id, o.attempt_id
"""
