"""How a collection ends, for every kind: the one-line message and the exit status."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolkit.cli.argtypes import flagged
from toolkit.cli.target import load_target

__all__ = ["connect", "fail", "outcome", "report", "run_or_follow"]


def fail(problem: BaseException | str) -> int:
    """Print ``problem`` (an error, or a message the command wrote) naming flags; exit status 2."""
    print(f"toolkit collect: {flagged(problem)}", file=sys.stderr)
    return 2


def retry_policy(args: argparse.Namespace) -> Any:
    """The run's one :class:`~toolkit.client.RetryPolicy` (``--capacity-retries``,
    ``--max-rps``), given to every client the run opens so that they share its rate."""
    from toolkit.client import RetryPolicy

    return RetryPolicy(capacity_retries=args.capacity_retries, max_rps=args.max_rps)


def connect(args: argparse.Namespace, **options: Any) -> Any:
    """The :class:`~toolkit.client.Connection` of the command's target (raises TargetError),
    its clients under the run's :func:`retry_policy`."""
    from toolkit.client import Connection

    options.setdefault("retry", retry_policy(args))
    return Connection(load_target(args), **options)


def outcome(collect: Any, target: str, rejected: str = "") -> int:
    """Run ``collect`` (a collector's ``run``, or followers returning their exit status) and turn
    its outcome into the exit status: the one place where every collector's errors become
    one-line messages. A run in which every request failed is recorded ``failed`` and named by
    its first error."""
    import httpx

    from toolkit.client import ServiceError, TransportError, Unauthorized
    from toolkit.collect import CollectionFailed, RpcFailure
    from toolkit.store import StoreError

    try:
        result = collect()
    except Unauthorized:
        return fail(f"{target} rejected {rejected}")
    except CollectionFailed as exc:
        cause = exc.__cause__
        if isinstance(cause, TransportError | httpx.TransportError):
            reason = cause if isinstance(cause, TransportError) else type(cause).__name__
            return fail(f"cannot reach {target} ({reason})")
        return fail(f"run failed: every request to {target} failed; the first: {exc}")
    except TransportError as exc:
        return fail(f"cannot reach {target} ({exc})")
    except (ServiceError, RpcFailure) as exc:
        return fail(f"{target} answered an error: {exc}")
    except httpx.HTTPError as exc:
        return fail(f"cannot reach {target} ({type(exc).__name__})")
    except (StoreError, ValueError) as exc:
        return fail(exc)
    return result if isinstance(result, int) else report(result)


def run_or_follow(made: Any, store: Any, args: argparse.Namespace) -> Any:
    """Run a collector (its result), or with ``--follow`` run the follower ``made`` until a
    signal (the exit status): the one place both ways part."""
    if getattr(args, "follow", False):
        from toolkit.cli.following import run_followers

        return run_followers(store, [made], log_json=args.log_json)
    return made.run(resume=args.resume)


def report(result: Any) -> int:
    """Print a finished run (its id, rows written, database); 130 when it was interrupted."""
    tables = ", ".join(f"{name} {count}" for name, count in sorted(result.by_table.items()))
    print(f"run {result.run_id} ({result.kind}) {result.status}")
    print(f"rows written: {result.rows_written}" + (f" ({tables})" if tables else ""))
    print(f"database: {result.db_path}")
    if result.status == "interrupted":
        print(f"resume with: toolkit collect {result.kind} --resume {result.run_id}")
        return 130
    return 0
