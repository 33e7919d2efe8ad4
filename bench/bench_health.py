"""Credit health at book scale: the vectorised kernel and the chunked Monte Carlo.

Prints account-evaluations per second for the kernel (one price vector, and 100 price
scenarios at once) and scenarios per second for the Monte Carlo on a synthetic book, against the
exact one-account-at-a-time definition of ``toolkit.credit`` (what a contract does).
"""

from __future__ import annotations

import time

import numpy as np

from toolkit.credit import figures
from toolkit.models.health import health_factor, maintenance_ltvs, monte_carlo

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
    print(f"{'what':<44} {'size':>22} {'seconds':>9} {'per second':>14}")
    for n in (10_000, 1_000_000):
        held, debt = book(n, rng)
        took = timed(lambda held=held, debt=debt: health_factor(held, m, debt, PRICES))
        print(f"{'health_factor, one price vector':<44} {f'{n:,} accounts':>22} {took:>9.4f} "
              f"{n / took:>14,.0f}")  # fmt: skip
    held, debt = book(100_000, rng)
    scenarios = PRICES * rng.lognormal(0, 0.2, (100, len(ASSETS)))
    took = timed(lambda: health_factor(held, m, debt, scenarios))
    print(f"{'health_factor, 100 price scenarios':<44} {'100,000 accounts':>22} {took:>9.4f} "
          f"{100 * 100_000 / took:>14,.0f}")  # fmt: skip
    sample = [
        {a: int(held[i, j] * PRICES[j] * 10**6) for j, a in enumerate(ASSETS)} for i in range(2_000)
    ]
    took = timed(
        lambda: [figures(v, principal=int(d * 10**6)) for v, d in zip(sample, debt, strict=False)],
        1,
    )
    print(f"{'toolkit.credit.figures, exact, one at a time':<44} {'2,000 accounts':>22} "
          f"{took:>9.4f} {2_000 / took:>14,.0f}")  # fmt: skip
    held, debt = book(10_000, rng)
    vols = np.array([0.0, 0.02, 0.05, 0.05, 0.6])
    corr = np.eye(len(ASSETS))
    prices = dict(zip(ASSETS, PRICES.tolist(), strict=True))
    started = time.perf_counter()
    result = monte_carlo(held, debt, prices, vols, corr, n_scenarios=100_000, chunk=2_000)
    took = time.perf_counter() - started
    print(f"{'monte_carlo, 7 days, chunks of 2,000':<44} {'100,000 x 10,000':>22} {took:>9.2f} "
          f"{100_000 / took:>14,.0f} scenarios/s")  # fmt: skip
    print(
        f"  liquidations at risk (99 %): {result['liquidations_at_risk']:,.0f} accounts; "
        f"bad debt at risk {result['bad_debt_at_risk']:,.0f} USDC, "
        f"expected shortfall {result['bad_debt_expected_shortfall']:,.0f} USDC"
    )


if __name__ == "__main__":
    main()
