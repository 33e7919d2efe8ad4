"""``toolkit collect health``: the health-factor watch of one credit hub, until ``--duration``
or Ctrl-C (:class:`toolkit.collect.HealthWatch`).

The hub lending USDC on ``--chain`` (default 8453) is read through the target's credit surface
and ``$TOOLKIT_RPC_URL_<chainId>`` (or the embedded service with ``--embedded``), polled every
``--interval`` seconds (default 2); crossings go to the database's ``alerts`` and, with
``--webhook URL`` or ``$TOOLKIT_WEBHOOK_URL``, to that webhook (the URL is shown only as the
redaction policy shows it: it often holds a token).

The options are those of a plan's ``[[health]]`` section
(:class:`~toolkit.collect.watch_plan.HealthSection`), and :func:`health_watch` builds the watch
of either: ``toolkit watch`` runs the same watch as this command.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit.cli.collect.outcome import connect, fail, retry_policy

if TYPE_CHECKING:
    from toolkit.client import Connection, RetryPolicy
    from toolkit.collect import HealthWatch
    from toolkit.collect.watch_plan import HealthSection
    from toolkit.store import Store

__all__ = ["WEBHOOK_URL_ENV", "add_health_arguments", "collect_health", "health_watch"]

WEBHOOK_URL_ENV = "TOOLKIT_WEBHOOK_URL"

#: The section's keys the command sets, and the flags that set them.
_FLAGS = {"chain": "--chain", "every_s": "--interval", "webhook_url": "--webhook",
          "from_block": "--from-block", "chunk": "--chunk"}  # fmt: skip


def add_health_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``health`` option: where alerts are posted."""
    parser.add_argument(
        "--webhook",
        metavar="URL",
        default=None,
        help=f"health: post each alert there as JSON (default: ${WEBHOOK_URL_ENV}; none: the "
        "alerts table only)",
    )


def health_watch(
    section: HealthSection,
    client: Any,
    w3: Any,
    store: Store,
    *,
    name: str = "health",
    retry: RetryPolicy | None = None,
    env: Mapping[str, str] | None = None,
) -> HealthWatch:
    """The watch ``section`` describes, reading the credit surface through ``client`` and the
    hub's chain through ``w3``, writing to ``store``; its webhook (``webhook_url``, else
    ``$TOOLKIT_WEBHOOK_URL`` in ``env``, default the process's) under ``retry``. The caller
    closes ``watch.webhook``; a bad URL raises ``TargetError`` naming it.

    >>> from toolkit.client import ServiceClient
    >>> from toolkit.collect.watch_plan import HealthSection
    >>> from toolkit.store import Store
    >>> section = HealthSection(every_s=5, health_below=[1.05], cap_share={})
    >>> client = ServiceClient("http://127.0.0.1:8700", env={})
    >>> watch = health_watch(section, client, None, Store(":memory:"), env={})
    >>> watch.cadence_s, watch.webhook, [r.name for r in watch.rules]
    (5.0, None, ['hf_below_1.05'])
    """
    from toolkit.client import Webhook
    from toolkit.collect import HealthWatch

    secret = section.webhook_url
    url = (os.environ if env is None else env).get(WEBHOOK_URL_ENV)
    url = url if secret is None else secret.get_secret_value()
    hook = None if url is None else Webhook(url, retry=retry)
    return HealthWatch(
        client, w3, store, webhook=hook, rules=section.rules(), name=name, asset=section.asset,
        cadence_s=section.every_s, from_block=section.from_block,
        confirmations=section.confirmations, refresh_s=section.refresh_s, chunk=section.chunk,
    )  # fmt: skip


def _section(args: argparse.Namespace) -> HealthSection | str:
    """The command's options as a section; a message naming the flag when one is bad."""
    from pydantic import ValidationError

    from toolkit.collect.watch_plan import HealthSection
    from toolkit.resources import config_errors

    given = {"chain": args.chain or 8453, "every_s": args.interval or 2.0, "chunk": args.chunk,
             "from_block": args.from_block, "webhook_url": args.webhook}  # fmt: skip
    try:
        return HealthSection.model_validate({k: v for k, v in given.items() if v is not None})
    except ValidationError as error:
        fault = config_errors(error)[0]
        return f"{_FLAGS.get(fault.field, fault.field)}: {fault.rule}"


def collect_health(args: argparse.Namespace) -> int:
    """Watch the hub's health factors (``toolkit collect health``); 0 at ``--duration``, 130
    on Ctrl-C, 2 for a bad target or option."""
    from toolkit.client import TargetError

    section = _section(args)
    if isinstance(section, str):
        return fail(section)
    try:
        conn = connect(args)
    except TargetError as exc:
        return fail(exc)
    return _watch(conn, section, args)


def _watch(conn: Connection, section: HealthSection, args: argparse.Namespace) -> int:
    """Run the watch on the connection until ``--duration`` or Ctrl-C."""
    from toolkit.client import TargetError
    from toolkit.store import Store, StoreError

    with conn:
        try:
            client, w3 = conn.credit_service, conn.chain(section.chain)
            store = Store(args.db)
        except TargetError as exc:
            return fail(exc)
        except StoreError as exc:
            return fail(f"cannot use the database: {exc}")
        with store:
            try:
                watch = health_watch(section, client, w3, store, retry=retry_policy(args))
            except TargetError as exc:
                return fail(exc)
            try:
                return _loop(watch, args.duration)
            finally:
                if watch.webhook is not None:
                    watch.webhook.close()


def _loop(watch: HealthWatch, duration: float | None) -> int:
    """Poll every cadence until ``duration`` seconds (0) or Ctrl-C (130), then say how it went."""
    deadline = None if duration is None else time.monotonic() + duration
    try:
        while deadline is None or time.monotonic() < deadline:
            began = time.monotonic()
            status = watch.poll(time.time())
            if status.last_error:
                print(f"toolkit collect: health: {status.last_error}", file=sys.stderr)
            time.sleep(max(0.0, began + watch.cadence_s - time.monotonic()))
    except KeyboardInterrupt:
        _print(watch)
        return 130
    _print(watch)
    return 0


def _print(watch: HealthWatch) -> None:
    status = watch.status
    where = "" if watch.webhook is None else f", posted to {watch.webhook.url}"
    print(
        f"health watch {status.name}: block {status.block}, {status.accounts} accounts, "
        f"{status.in_breach} in breach, {status.alerts_written} alerts written{where} "
        f"({status.undelivered} undelivered)"
    )
