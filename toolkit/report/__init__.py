"""``toolkit report``: figures and a summary table from a toolkit DuckDB file.

:func:`write_report` reads the store (read-only) and writes, for each table that has rows:

- ``fee_curve.png``: effective fee (bps) against amount (log x) per route, one panel per
  token; ``fee_curve.csv``: the fitted fee curve per route and quote type;
- ``blocking.png`` / ``blocking.csv``: RFQ 404 share per route and time window, with
  binomial standard errors;
- ``eta_validity.png`` / ``eta_validity.csv``: quoted fill time and validity window per route;
- ``capacity_timeline.png`` / ``.csv``: each pool's utilization from the liquidity events;
- ``backtest.png`` / ``backtest_timeline.csv``: the latest backtest's pool utilization and 404
  share over virtual time;
- ``borrow.png`` / ``borrow.csv``: borrow fees by USD amount, per route, and loans authorized;
- ``findings.csv``: calldata-guard findings counted by rule (the field at fault) and severity;
- ``swap_impact.png`` / ``.csv``: swap price impact (bps) by trade size in USD, per pair and
  network;
- ``credit_health.png``, ``credit_accounts.csv``, ``credit_collateral.csv``: the latest credit
  snapshot's health factors (accounts below 1 and 1.3), debt against collateral, collaterals;
- ``economics.png`` / ``.csv``: the latest backtest's fee revenue in USD and return on pool
  capital (annualised); ``capital_404.png`` / ``.csv``: capital against 404 rate when a
  ``pool_scale`` sweep of one flow is stored;
- always ``summary.csv`` (``section, metric, value``), ``routes.csv`` when there are RFQ
  observations, and ``summary.md``, a Markdown page with the tables and links to the figures.

Figures and frames meant for people are in human units (:mod:`toolkit.report.units`: whole
tokens, USD at the default scenario's prices, chain and token names) and drawn with the shared
helpers of :mod:`toolkit.report.style`; the database keeps exact integers.

A missing file or a database without collection runs is a :class:`ReportError` whose message
names the path and what to run.

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     write_report(store, "unused")
Traceback (most recent call last):
...
toolkit.report.result.ReportError: no collection runs in an in-memory store: run ...
"""

from toolkit.report.load import display_path
from toolkit.report.result import ReportError, ReportResult
from toolkit.report.writer import write_report

__all__ = ["ReportError", "ReportResult", "display_path", "write_report"]
