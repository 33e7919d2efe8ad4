"""Credit health at book scale: the vectorised kernel and the chunked Monte Carlo.

Prints account-evaluations per second for the kernel (one price vector, and 100 price
scenarios at once) and scenarios per second for the Monte Carlo on a synthetic book, against the
exact one-account-at-a-time definition of ``toolkit.credit`` (what a contract does).
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from toolkit.credit import figures
from toolkit.models.health import (
    CreditBook,
    MarketParameters,
    health_factor,
    maintenance_ltvs,
    monte_carlo,
)

ASSETS = ["usdc", "gtusdcp", "superusdc", "yousd", "yobtc"]
PRICES = np.array([1.0, 1.0, 1.0, 1.0, 60_000.0])


def book(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    held = rng.uniform(0, 2_000, (n, len(ASSETS))) * (rng.random((n, len(ASSETS))) < 0.4)
    held[:, -1] /= 60_000.0
    value = held @ (PRICES * maintenance_ltvs(ASSETS))
    return held, value * rng.uniform(0.2, 1.1, n)


def timed(run: object, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    m = maintenance_ltvs(ASSETS)
    print(f"{'what':<46} {'size':>24} {'seconds':>8} {'per second':>14}")
    for n in (10_000, 1_000_000):
        held, debt = book(n, rng)
        took = timed(lambda held=held, debt=debt: health_factor(held, m, debt, PRICES))
        print(f"{'health_factor, one price vector':<46} {f'{n:,} accounts':>24} {took:>8.4f} "
              f"{n / took:>14,.0f}")  # fmt: skip
    # the shape: 1M accounts x 3 assets x 100 scenarios, against one line of numpy
    three = ASSETS[:2] + ASSETS[-1:]
    held3, debt3 = book(1_000_000, rng)
    held3 = held3[:, [0, 1, 4]]
    m3, p3 = maintenance_ltvs(three), PRICES[[0, 1, 4]]
    scenarios = p3 * rng.lognormal(0, 0.2, (100, 3))
    took = timed(lambda: health_factor(held3, m3, debt3, scenarios))
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = timed(lambda: (held3[None] * (scenarios * m3)[:, None]).sum(-1) / debt3, 1)
    print(f"{'health_factor, 100 price scenarios':<46} {'1,000,000 x 3 x 100':>24} {took:>8.3f} "
          f"{100 * 1_000_000 / took:>14,.0f}")  # fmt: skip
    print(f"{'  one-line numpy: (V*p*m).sum(-1)/D':<46} {'1,000,000 x 3 x 100':>24} "
          f"{plain:>8.3f} {1e8 / plain:>14,.0f}   kernel {plain / took:.1f}x")  # fmt: skip
    held, debt = book(2_000, rng)
    sample = [
        {a: int(held[i, j] * PRICES[j] * 10**6) for j, a in enumerate(ASSETS)} for i in range(2_000)
    ]
    took = timed(
        lambda: [figures(v, principal=int(d * 10**6)) for v, d in zip(sample, debt, strict=True)], 1
    )
    print(f"{'toolkit.credit.figures, exact, one at a time':<46} {'2,000 accounts':>24} "
          f"{took:>8.4f} {2_000 / took:>14,.0f}")  # fmt: skip
    # the Monte Carlo in a fresh process, so its peak memory is its own
    subprocess.run([sys.executable, __file__, "monte-carlo"], check=True)


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not carried over from
    the parent across exec)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def monte_carlo_run() -> None:
    held, debt = book(1_000_000, np.random.default_rng(1))
    accounts = tuple(f"a{i}" for i in range(len(debt)))
    credit = CreditBook(accounts, tuple(ASSETS), held, debt, PRICES)
    vols = np.array([0.0, 0.02, 0.05, 0.05, 0.6])
    market = MarketParameters(credit.assets, vols, np.eye(len(ASSETS)))
    before = peak_rss_mb()
    started = time.perf_counter()
    result = monte_carlo(credit, market, n_scenarios=1_000)
    took = time.perf_counter() - started
    peak = peak_rss_mb()
    print(f"{'monte_carlo, 7 days, default chunks':<46} {'1,000,000 x 1,000':>24} {took:>8.2f} "
          f"{1_000 / took:>14,.0f} scenarios/s")  # fmt: skip
    print(f"  goal <= 10 s and <= 2 GB: peak RSS {peak:,.0f} MB, of which the book and "
          f"interpreter {before:,.0f} MB")  # fmt: skip
    print(
        f"  liquidations at risk (99 %): {result.liquidations_at_risk:,.0f} accounts; "
        f"bad debt at risk {result.bad_debt_at_risk:,.0f} USDC, "
        f"expected shortfall {result.bad_debt_expected_shortfall:,.0f} USDC"
    )


if __name__ == "__main__":
    monte_carlo_run() if sys.argv[1:] == ["monte-carlo"] else main()
