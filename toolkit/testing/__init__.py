"""What a team needs to keep its own tests and regression notebooks deterministic.

- :class:`VirtualClock`: time that moves only when told (``advance``, ``set``); pass it as
  ``clock=`` to :func:`toolkit.server.create_app` or call it for "now".
- :func:`embedded_service`: a context manager yielding a :class:`Harness` (a sync client on an
  in-process embedded service under a virtual clock, plus the clock, app and scenario, and
  helpers that drive the simulated chains over JSON-RPC: ``broadcast``, ``advance``, ``mine``,
  ``rpc``; a JSON-RPC error raises :class:`RpcFailure`).
- :func:`assert_frame_close`: polars frames equal up to float tolerance, sorted by key columns,
  amounts exact; the failure names the column and the first differing row.
- :func:`assert_rate_within`: an observed rate against an expected one, within ``sigmas``
  binomial standard errors; the failure gives the z-score.
- :func:`format_frame`: a frame as a plain-text table with rounded floats that prints the same
  on every machine (what regression notebooks print).
- :class:`FaultProxy`: a fault-injecting HTTP proxy on loopback in front of a node or a served
  service: a seeded :class:`FaultMix` of 429s (with and without ``Retry-After``), 503s,
  timeouts, answers cut mid-body and garbled JSON, and providers' ``eth_getLogs`` bounds
  refused in their own words (:class:`LogLimit`).
- :class:`WebhookReceiver`: a webhook endpoint on loopback that keeps what is posted to it.

>>> from toolkit.testing import VirtualClock, assert_rate_within
>>> clock = VirtualClock(0.0)
>>> clock.advance(15)
15.0
>>> round(assert_rate_within(9, 100, 0.1), 2)
-0.33
"""

from toolkit.clock import DEFAULT_START, VirtualClock
from toolkit.testing.display import format_frame
from toolkit.testing.faults import FaultMix, LogLimit
from toolkit.testing.frames import assert_frame_close
from toolkit.testing.proxy import FaultProxy
from toolkit.testing.rates import assert_rate_within
from toolkit.testing.receiver import WebhookReceiver
from toolkit.testing.service import Harness, RpcFailure, embedded_service

__all__ = [
    "DEFAULT_START",
    "FaultMix",
    "FaultProxy",
    "Harness",
    "LogLimit",
    "RpcFailure",
    "VirtualClock",
    "WebhookReceiver",
    "assert_frame_close",
    "assert_rate_within",
    "embedded_service",
    "format_frame",
]
