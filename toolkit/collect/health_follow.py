"""The health-factor watch as a follower of ``toolkit watch`` (:mod:`toolkit.collect.follow`).

:class:`HealthFollower` gives a :class:`~toolkit.collect.HealthWatch` the five names of the
follower protocol. Its run (kind ``health``) records the watch's options and, when it stops,
the alerts written under the watch's name; run again under the same name, the plan resumes
that run, and the watch takes back from ``alerts`` what was in breach, so nothing is written
or posted twice. A poll is the watch's :meth:`~toolkit.collect.HealthWatch.step`: every block
since the last one, read, evaluated and written at once (never behind); its request and node
errors reach the loop, which counts them, shows them in ``toolkit status`` and polls again
after a backoff.

>>> from toolkit.client import ServiceClient
>>> from toolkit.store import Store
>>> client = ServiceClient("http://127.0.0.1:8700", env={})
>>> follower = HealthFollower(HealthWatch(client, None, Store(":memory:"), cadence_s=5))
>>> follower.name, follower.every_s, follower.status.kind, follower.status.row()["target_url"]
('health', 5.0, 'health', 'http://127.0.0.1:8700')
"""

from __future__ import annotations

import logging
from typing import Any

from toolkit.collect.follow import FollowStatus, log_event
from toolkit.collect.health_watch import HealthWatch
from toolkit.errors import InputError

__all__ = ["HealthFollower"]

KIND = "health"


class HealthFollower:
    """``watch`` followed every ``watch.cadence_s`` seconds under its name; ``resume``: the
    run (of kind ``health``) to continue."""

    def __init__(self, watch: HealthWatch, *, resume: str | None = None) -> None:
        self.watch = watch
        self.store = watch.store
        self.name = watch.name
        self.every_s = watch.cadence_s
        self.resume = resume
        self.status = FollowStatus(self.name, KIND, watch.client.base_url, self.every_s)
        self._undelivered = 0

    def parameters(self) -> dict[str, Any]:
        """The run's parameters: the watch's options and rules (whether it posts to a webhook,
        never where)."""
        watch = self.watch
        return {
            "follow": True, "every_s": self.every_s, "asset": watch.asset,
            "confirmations": watch.confirmations, "from_block": watch.from_block,
            "refresh_s": watch.refresh_s, "webhook": watch.webhook is not None,
            "rules": [[r.name, r.kind, str(r.threshold), r.dimension] for r in watch.rules],
        }  # fmt: skip

    def start(self) -> None:
        """Record a new run, or resume ``resume`` (refused when it is not a health run)."""
        if self.resume is None:
            target = self.status.target_url
            self.status.run_id = self.store.start_run(KIND, self.parameters(), target)
        else:
            record = self.store.run_record(self.resume)
            if record["kind"] != KIND:
                raise InputError(
                    f"resume: run {self.resume} is a {record['kind']} run, not a {KIND} run",
                    field="resume",
                )
            self.store.resume_run(self.resume)
            self.status.run_id = self.resume
        log_event("start", follower=self.name, run_id=self.status.run_id,
                  resumed=self.resume is not None)  # fmt: skip

    def poll(self, now: float) -> bool:
        """One step of the watch; its alerts are the rows it wrote. Never behind."""
        before = self.watch.status.alerts_written
        done = self.watch.step(now)
        self.status.head_block = done.head
        self.status.stored_block = done.block
        self.status.flushed(done.alerts_written - before)
        if done.undelivered != self._undelivered:  # the webhook stopped (or resumed) taking them
            self._undelivered = done.undelivered
            log_event("undelivered", logging.WARNING if done.undelivered else logging.INFO,
                      follower=self.name, alerts=done.undelivered)  # fmt: skip
        return False

    def stop(self, state: str) -> None:
        """Close the run (the watch holds nothing unwritten: each step writes its rows), its
        rows the alerts under the watch's name: what every start of the run wrote, a killed
        one's too (``alerts`` has no run column: a watch's name keys its alerts)."""
        query = "SELECT count(*) AS n FROM alerts WHERE watch = $w"
        rows = int(self.store.query(query, {"w": self.name})["n"][0])
        if self.status.run_id is not None:
            self.store.finish_run(self.status.run_id, state, rows)
        self.status.state = "failed" if state == "failed" else "stopped"
        log_event("stop", follower=self.name, run_id=self.status.run_id, state=state, rows=rows)
