"""Seeded distributions for order-flow generation: request sizes and conversion delays.

Each distribution is a frozen dataclass that checks its parameters on construction and draws
from a ``numpy.random.Generator`` passed in, so a flow is a pure function of its seed.

Sizes come back as exact integers (smallest units, polars ``Int128``); log-normal draws are
rounded to a ``step`` so that the last bits of a float never decide an amount.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from toolkit.arguments import number, whole

__all__ = [
    "Constant",
    "DelayModel",
    "Exponential",
    "Fixed",
    "LogNormal",
    "SizeModel",
    "Uniform",
]


def generator(seed: int) -> np.random.Generator:
    """The one generator a flow draws everything from, in a fixed order: ``PCG64(seed)``."""
    return np.random.Generator(np.random.PCG64(seed))


def _positive_real(value: object, name: str, *, allow_zero: bool = False) -> float:
    if allow_zero:
        return number(value, name, minimum=0)
    return number(value, name, above=0)


@dataclass(frozen=True)
class LogNormal:
    """Log-normal request sizes: ``median`` in smallest units, ``sigma`` the log-space spread.

    Draws are rounded to a multiple of ``step`` smallest units (at least one step).

    >>> import numpy as np
    >>> sizes = LogNormal(median=5_000_000_000, sigma=1.0)
    >>> sizes.sample(np.random.default_rng(1), 3, step=10_000).dtype
    Int128
    """

    median: int
    sigma: float = 1.0

    def __post_init__(self) -> None:
        whole(self.median, "LogNormal.median", minimum=1)
        _positive_real(self.sigma, "LogNormal.sigma", allow_zero=True)

    def sample(self, rng: np.random.Generator, n: int, step: int = 1) -> pl.Series:
        """Draw ``n`` sizes rounded to multiples of ``step``."""
        whole(step, "step", minimum=1)
        mu = math.log(self.median / step)
        counts = np.rint(rng.lognormal(mu, self.sigma, size=n))
        # Int64 counts of steps: a draw past 2**62 steps is far outside any fee tier anyway.
        counts = np.clip(counts, 1, 2**62).astype(np.int64)
        units = pl.Series("amount", counts, dtype=pl.Int64).cast(pl.Int128)
        return units * pl.Series([step], dtype=pl.Int128)


@dataclass(frozen=True)
class Fixed:
    """Every request asks for exactly ``amount`` smallest units.

    >>> import numpy as np
    >>> Fixed(1_000_000_000).sample(np.random.default_rng(0), 2).to_list()
    [1000000000, 1000000000]
    """

    amount: int

    def __post_init__(self) -> None:
        whole(self.amount, "Fixed.amount", minimum=1)

    def sample(self, rng: np.random.Generator, n: int, step: int = 1) -> pl.Series:
        """``n`` copies of ``amount`` (``rng`` and ``step`` are unused: nothing is random)."""
        return pl.repeat(self.amount, n, dtype=pl.Int128, eager=True).alias("amount")


SizeModel = LogNormal | Fixed


@dataclass(frozen=True)
class Constant:
    """A fixed delay in seconds.

    >>> import numpy as np
    >>> Constant(5.0).sample(np.random.default_rng(0), 2).tolist()
    [5.0, 5.0]
    """

    delay_s: float

    def __post_init__(self) -> None:
        _positive_real(self.delay_s, "Constant.delay_s", allow_zero=True)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` copies of ``delay_s``."""
        return np.full(n, float(self.delay_s))


@dataclass(frozen=True)
class Uniform:
    """A delay drawn uniformly from ``[low_s, high_s)`` seconds.

    >>> import numpy as np
    >>> bool((Uniform(1.0, 3.0).sample(np.random.default_rng(0), 100) < 3.0).all())
    True
    """

    low_s: float
    high_s: float

    def __post_init__(self) -> None:
        low = _positive_real(self.low_s, "Uniform.low_s", allow_zero=True)
        high = _positive_real(self.high_s, "Uniform.high_s", allow_zero=True)
        if high < low:
            raise ValueError(f"Uniform.high_s: must be >= low_s ({low}), got {high}")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` uniform delays."""
        return rng.uniform(float(self.low_s), float(self.high_s), size=n)


@dataclass(frozen=True)
class Exponential:
    """An exponential delay with the given mean ``mean_s`` seconds, optionally capped at
    ``cap_s`` seconds.

    >>> import numpy as np
    >>> float(Exponential(4.0, cap_s=10.0).sample(np.random.default_rng(0), 1000).max()) <= 10.0
    True
    """

    mean_s: float
    cap_s: float | None = None

    def __post_init__(self) -> None:
        _positive_real(self.mean_s, "Exponential.mean_s")
        if self.cap_s is not None:
            _positive_real(self.cap_s, "Exponential.cap_s", allow_zero=True)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exponential delays."""
        draws = rng.exponential(float(self.mean_s), size=n)
        if self.cap_s is not None:
            np.minimum(draws, float(self.cap_s), out=draws)
        return draws


DelayModel = Constant | Uniform | Exponential
