"""The card program's settings: latency distributions, the simulated path's latencies and
failure rates (:class:`Latencies`), the answer's budget (:class:`Budget`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from toolkit.arguments import ArgumentError, fraction, number

__all__ = ["Budget", "Distribution", "Empirical", "Latencies", "Lognormal"]


class Distribution(Protocol):
    """A latency distribution: ``sample(rng, n)`` gives ``n`` durations in seconds."""

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        ...


@dataclass(frozen=True)
class Lognormal:
    """Log-normal durations: ``median_ms`` milliseconds, log-sd ``sigma``.

    >>> d = Lognormal(40, 0.35)
    >>> round(d.quantile_ms(0.99), 1)  # p99 = median x exp(2.326 sigma)
    90.3
    >>> float(d.sample(np.random.default_rng(0), 10_000).mean()) > 0.04
    True
    """

    median_ms: float
    sigma: float

    def __post_init__(self) -> None:
        number(self.median_ms, "median_ms", minimum=0)
        number(self.sigma, "sigma", minimum=0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        return self.median_ms / 1_000 * rng.lognormal(0.0, self.sigma, n)

    def quantile_ms(self, q: float) -> float:
        """The ``q`` quantile in milliseconds."""
        from statistics import NormalDist

        z = NormalDist().inv_cdf(number(q, "q", above=0, below=1))
        return self.median_ms * math.exp(self.sigma * z)


@dataclass(frozen=True)
class Empirical:
    """Measured durations (``samples_ms``, milliseconds), resampled with replacement: how
    latencies measured from a service (the embedded one over loopback) feed the simulation.

    >>> sorted(set(Empirical((10.0, 20.0)).sample(np.random.default_rng(0), 100).tolist()))
    [0.01, 0.02]
    """

    samples_ms: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_ms:
            raise ArgumentError("samples_ms", "at least one sample", self.samples_ms)
        for i, value in enumerate(self.samples_ms):
            number(value, f"samples_ms[{i}]", minimum=0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        return (
            np.asarray(self.samples_ms, dtype=np.float64)[rng.integers(0, len(self.samples_ms), n)]
            / 1_000
        )


@dataclass(frozen=True)
class Latencies:
    """The simulated path's latencies and failure rates; the defaults are assumptions sized on
    the vendor's card-program budget (research §4.5: signature check < 1 ms, card → wallet
    lookup < 10 ms, ``/info`` < 100 ms, ``/draw`` < 100 ms, on-chain < 1 s) until figures measured
    over loopback replace them (:class:`Empirical`):

    - ``pre``: signature check and wallet lookup, median 4 ms (log-sd 0.5);
    - ``info``, ``draw``: a hosted API from the program's backend, medians 35 and 40 ms (log-sd
      0.35: p99 79 and 90 ms, so about 0.1 % and 0.4 % exceed the 100 ms budgets);
    - ``broadcast``: signing (KMS) and sending the operator call to a dedicated RPC, median
      60 ms; ``receipt``: seeing the block's receipt after it is produced, median 50 ms;
    - ``balance``: the pre-funded path's read of the receiver's balance, median 3 ms;
    - blocks every ``block_time_s`` s (2 s) at a random phase; a sent draw goes into the first
      block after it reaches the sequencer and slips a block with ``missed_block`` (1 %);
    - ``*_error``: the chance a step answers an error instead (0.05 % to 0.1 %).

    >>> Latencies().block_time_s, Latencies().info.median_ms
    (2.0, 35.0)
    """

    pre: Distribution = field(default_factory=lambda: Lognormal(4.0, 0.5))
    info: Distribution = field(default_factory=lambda: Lognormal(35.0, 0.35))
    draw: Distribution = field(default_factory=lambda: Lognormal(40.0, 0.35))
    broadcast: Distribution = field(default_factory=lambda: Lognormal(60.0, 0.4))
    receipt: Distribution = field(default_factory=lambda: Lognormal(50.0, 0.4))
    balance: Distribution = field(default_factory=lambda: Lognormal(3.0, 0.5))
    block_time_s: float = 2.0
    missed_block: float = 0.01
    info_error: float = 0.0005
    draw_error: float = 0.0005
    broadcast_error: float = 0.001
    balance_error: float = 0.0002

    def __post_init__(self) -> None:
        number(self.block_time_s, "block_time_s", above=0)
        fraction(self.missed_block, "missed_block")
        if self.missed_block >= 1:
            raise ArgumentError("missed_block", "a probability below 1", self.missed_block)
        for name in ("info_error", "draw_error", "broadcast_error", "balance_error"):
            fraction(getattr(self, name), name)


@dataclass(frozen=True)
class Budget:
    """The answer's budget (``total``, from the swipe) and the steps' own, in seconds.

    >>> Budget().total, Budget().info, Budget().draw
    (2.0, 0.1, 0.1)
    """

    total: float = 2.0
    info: float = 0.1
    draw: float = 0.1
    balance: float = 0.1

    def __post_init__(self) -> None:
        number(self.total, "total", above=0)
        for name in ("info", "draw", "balance"):
            number(getattr(self, name), name, above=0)


class Samples:
    """Durations drawn in blocks of 4,096 (one numpy call each), handed out one at a time."""

    def __init__(self, distribution: Distribution, rng: np.random.Generator) -> None:
        self._distribution, self._rng = distribution, rng
        self._values: list[float] = []

    def next(self) -> float:
        if not self._values:
            self._values = self._distribution.sample(self._rng, 4_096).tolist()[::-1]
        return self._values.pop()
