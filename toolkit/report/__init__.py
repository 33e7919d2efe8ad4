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
- always ``summary.csv`` (``section, metric, value``), ``routes.csv`` when there are RFQ
  observations, and ``summary.md``, a Markdown page with the tables and links to the figures.

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
