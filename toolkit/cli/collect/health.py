"""``toolkit collect health``: the health-factor watch of one credit hub, until ``--duration``
or Ctrl-C (:class:`toolkit.collect.HealthWatch`).

The hub lending USDC on ``--chain`` (default 8453) is read through the target's credit surface
and ``$TOOLKIT_RPC_URL_<chainId>`` (or the embedded service with ``--embedded``), polled every
``--interval`` seconds (default 2); crossings go to the database's ``alerts`` and, with
``--webhook URL`` or ``$TOOLKIT_WEBHOOK_URL``, to that webhook (the URL is shown only as the
redaction policy shows it: it often holds a token).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING

from toolkit.cli.collect.outcome import connect, fail, retry_policy

if TYPE_CHECKING:
    from toolkit.client import Connection, Webhook
    from toolkit.collect import HealthWatch

__all__ = ["WEBHOOK_URL_ENV", "add_health_arguments", "collect_health"]

WEBHOOK_URL_ENV = "TOOLKIT_WEBHOOK_URL"


def add_health_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``health`` option: where alerts are posted."""
    parser.add_argument(
        "--webhook",
        metavar="URL",
        default=None,
        help=f"health: post each alert there as JSON (default: ${WEBHOOK_URL_ENV}; none: the "
        "alerts table only)",
    )


def collect_health(args: argparse.Namespace) -> int:
    """Watch the hub's health factors (``toolkit collect health``); 0 at ``--duration``, 130
    on Ctrl-C, 2 for a bad target or option."""
    from toolkit.client import TargetError, Webhook

    url = args.webhook or os.environ.get(WEBHOOK_URL_ENV)
    try:
        hook = None if url is None else Webhook(url, retry=retry_policy(args))
    except TargetError as exc:
        return fail(exc)
    try:
        conn = connect(args)
    except TargetError as exc:
        if hook is not None:
            hook.close()
        return fail(exc)
    try:
        return _watch(conn, hook, args)
    finally:
        if hook is not None:
            hook.close()


def _watch(conn: Connection, hook: Webhook | None, args: argparse.Namespace) -> int:
    """Run the watch on the connection until ``--duration`` or Ctrl-C."""
    from toolkit.client import TargetError
    from toolkit.collect import HealthWatch
    from toolkit.store import Store, StoreError

    with conn:
        try:
            client, w3 = conn.credit_service, conn.chain(args.chain or 8453)
            store = Store(args.db)
        except TargetError as exc:
            return fail(exc)
        except StoreError as exc:
            return fail(f"cannot use the database: {exc}")
        with store:
            watch = HealthWatch(client, w3, store, webhook=hook, cadence_s=args.interval or 2.0)
            deadline = None if args.duration is None else time.monotonic() + args.duration
            try:
                while deadline is None or time.monotonic() < deadline:
                    began = time.monotonic()
                    status = watch.poll(time.time())
                    if status.last_error:
                        print(f"toolkit collect: health: {status.last_error}", file=sys.stderr)
                    time.sleep(max(0.0, began + watch.cadence_s - time.monotonic()))
            except KeyboardInterrupt:
                _print(watch, hook)
                return 130
            _print(watch, hook)
            return 0


def _print(watch: HealthWatch, hook: Webhook | None) -> None:
    status = watch.status
    where = "" if hook is None else f", posted to {hook.url}"
    print(
        f"health watch {status.name}: block {status.block}, {status.accounts} accounts, "
        f"{status.in_breach} in breach, {status.alerts_written} alerts written{where} "
        f"({status.undelivered} undelivered)"
    )
