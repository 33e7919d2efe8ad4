"""Round-based sweeps over a grid: the pacing, resume and attempt bookkeeping they share.

A sweep visits every grid point once per round; rounds start every ``interval_s`` seconds, until
``rounds`` rounds are done or ``duration_s`` seconds have passed (whichever comes first). A
``spread`` sweep paces its points evenly over the interval instead of sending a round as one
burst: a burst of quotes reserves many pools at once for 15 s, which is the collector changing
what it measures. Every
HTTP attempt of every point is recorded under the id ``round:grid_index:retry``, so a resumed
run skips exactly the points it already recorded (a point interrupted between retries counts as
visited: its recorded attempts stand, none is made twice).

On resume the stored grid applies; ``rounds``, ``duration_s`` and ``interval_s`` are the stored
ones (parameters ``duration`` and ``interval``) unless given to the resuming collector, and a
``duration_s`` counts from the resume.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from toolkit.arguments import number, whole
from toolkit.client import Attempt, ServiceClient
from toolkit.collect.grid import (
    DEFAULT_CHAINS,
    DEFAULT_SYMBOLS,
    GridPoint,
    discover_routes,
    grid_for,
)
from toolkit.collect.rows import resume_round, rounds_recorded
from toolkit.collect.run import Collector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.errors import InputError
from toolkit.store import Store

__all__ = ["DEFAULT_INTERVAL_S", "Sweep"]

#: Seconds between the starts of two rounds: a quote reservation lapses in 15 s, so by default
#: each round sees the capacity the previous round's quotes held come back.
DEFAULT_INTERVAL_S = 15.0


class SweepOptions(TypedDict, total=False):
    """The options every sweep takes (:class:`Sweep`), passed through by the RFQ and borrow
    sweeps as they are: declared once, here."""

    grid: Sequence[GridPoint] | None
    rounds: int | None
    duration_s: float | None
    interval_s: float | None
    spread: bool
    chains: Sequence[int]
    symbols: Sequence[str]
    progress: bool
    batch_size: int


class Sweep(Collector):
    """A collector that visits a grid of points in rounds (RFQ and borrow-quote sweeps).

    With no ``grid``, the grid is discovered from the target: its onboarded routes among
    ``chains`` for ``symbols`` (:func:`toolkit.collect.grid.discover_routes`).
    """

    table: str = ""
    unit = "point"

    def __init__(
        self,
        client: ServiceClient,
        store: Store,
        *,
        grid: Sequence[GridPoint] | None = None,
        rounds: int | None = None,
        duration_s: float | None = None,
        interval_s: float | None = None,
        spread: bool = False,
        chains: Sequence[int] = DEFAULT_CHAINS,
        symbols: Sequence[str] = DEFAULT_SYMBOLS,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        super().__init__(client, store, progress=progress, batch_size=batch_size)
        if not isinstance(spread, bool):
            raise ValueError(f"spread: must be True or False, got {spread!r}")
        if rounds is not None:
            whole(rounds, "rounds", minimum=1)
        if duration_s is not None:
            number(duration_s, "duration_s", above=0)
        if interval_s is not None:
            number(interval_s, "interval_s", above=0)
        if grid is not None:
            grid = list(grid)
            if not grid or not all(isinstance(p, GridPoint) for p in grid):
                raise ValueError("grid: must be a non-empty list of GridPoint")
        self.grid: list[GridPoint] | None = grid
        self.rounds = rounds
        self.duration_s = None if duration_s is None else float(duration_s)
        self.interval_s = DEFAULT_INTERVAL_S if interval_s is None else float(interval_s)
        self.spread = spread
        self.chains = tuple(chains)
        self.symbols = tuple(symbols)
        self._given = {
            name
            for name, value in (
                ("rounds", rounds),
                ("duration", duration_s),
                ("interval", interval_s),
            )
            if value is not None
        }

    def prepare(self) -> None:
        """Check that a new run knows when to stop, and discover the grid when none was given."""
        if self.rounds is None and self.duration_s is None:
            raise InputError(
                "rounds: give a number of rounds or a duration (or both)", field="rounds"
            )
        self.plan_grid()

    def plan_grid(self) -> None:
        """Discover the grid when none was given (a followed sweep, which has no end, plans
        only this)."""
        if self.grid is None:
            routes = discover_routes(self.client, chains=self.chains, symbols=self.symbols)
            if not routes:
                raise ValueError(
                    "grid: the target has no onboarded route among chains "
                    f"{', '.join(map(str, self.chains))} for {', '.join(self.symbols)}"
                )
            self.grid = grid_for(routes)

    def sweep_parameters(self) -> dict[str, Any]:
        """The parameters common to sweeps."""
        assert self.grid is not None
        return {
            "grid": [p.to_json() for p in self.grid],
            "rounds": self.rounds,
            "duration": self.duration_s,
            "interval": self.interval_s,
            "spread": self.spread,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        points = parameters.get("grid")
        if not isinstance(points, list) or not points:
            raise InputError("resume: the run has no grid to resume", field="resume")
        self.grid = [GridPoint.from_json(p) for p in points]
        if "rounds" not in self._given:
            self.rounds = parameters.get("rounds")
        if "duration" not in self._given:
            self.duration_s = parameters.get("duration")
        if "interval" not in self._given:
            self.interval_s = float(parameters.get("interval") or self.interval_s)
        self.spread = bool(parameters.get("spread", False))

    def total(self) -> int | None:
        if self.grid is None or self.rounds is None:
            return None
        return self.rounds * len(self.grid)

    def visit(
        self, run_id: str, round_no: int, index: int, point: GridPoint, writer: BatchWriter
    ) -> None:
        """Request one grid point and queue its rows."""
        raise TypeError(f"{type(self).__name__} does not define how to visit a point")

    def stamp(self, attempts: list[tuple[Attempt, float]]) -> Any:
        """An ``on_attempt`` hook that records each attempt with the time it ended."""

        def hook(attempt: Attempt) -> None:
            attempts.append((attempt, self.clock()))

        return hook

    def next_round(self, run_id: str) -> tuple[int, set[int]]:
        """Where a followed run resumes: its last round and the points that round recorded."""
        assert self.grid is not None
        return resume_round(
            rounds_recorded(self.store.attempt_ids(run_id, self.table)), len(self.grid)
        )

    def round_size(self) -> int:
        """The parts of a round a follower visits one poll at a time: the grid's points."""
        assert self.grid is not None
        return len(self.grid)

    def visit_part(self, run_id: str, round_no: int, index: int, writer: BatchWriter) -> None:
        """Visit grid point ``index`` as part of round ``round_no`` (a followed sweep: the
        cadence paces the rounds, so a round's points go out back to back)."""
        assert self.grid is not None
        self.visit(run_id, round_no, index, self.grid[index], writer)

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        assert self.grid is not None
        done: set[tuple[int, int]] = set()
        if resumed:
            stored = rounds_recorded(self.store.attempt_ids(run_id, self.table))
            done = {(r, i) for r, indices in stored.items() for i in indices}
        deadline = None if self.duration_s is None else self.clock() + self.duration_s
        for round_no in itertools.count():
            if self.rounds is not None and round_no >= self.rounds:
                return
            todo = [i for i in range(len(self.grid)) if (round_no, i) not in done]
            bar.update(len(self.grid) - len(todo))
            if not todo:
                continue
            if deadline is not None and self.clock() >= deadline:
                return
            started = self.clock()
            for k, index in enumerate(todo):
                if self.spread:
                    wait = started + k * self.interval_s / len(todo) - self.clock()
                    if wait > 0:
                        self.clock.sleep(wait)
                if deadline is not None and self.clock() >= deadline:
                    return
                self.visit(run_id, round_no, index, self.grid[index], writer)
                bar.update(1)
            last_round = self.rounds is not None and round_no + 1 >= self.rounds
            if not last_round:
                wait = started + self.interval_s - self.clock()
                if deadline is not None:
                    wait = min(wait, deadline - self.clock())
                if wait > 0:
                    self.clock.sleep(wait)
