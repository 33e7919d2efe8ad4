"""Seeded intents (RFQ) flows: arrivals, routes, sizes, quote types and conversions.

A flow is a polars frame with one row per RFQ, sorted by ``t`` (seconds from the start), of
the schema :data:`toolkit.flows.FLOW_SCHEMA`:

========================  ===========  ==================================================
column                    dtype        meaning
========================  ===========  ==================================================
``request_id``            String       unique id (``r0000000``, ``r0000001``, ...)
``t``                     Float64      arrival time, seconds from the start, sorted
``src_chain``             Int64        source chain id
``dst_chain``             Int64        destination chain id
``token``                 String       token symbol (the same on both chains)
``amount``                Int128       smallest units: input (ExactInput) or output
``type``                  String       ``ExactInput`` or ``ExactOutput``
``converts``              Boolean      the caller posts the quote to the transaction call
``convert_delay``         Float64      seconds from the quote to the transaction call
========================  ===========  ==================================================

Arrivals are a Poisson process whose intensity is ``rate_per_s`` times the hour-of-day multiplier of
``profile`` (piecewise constant per hour): within each hour the count is Poisson and the times
uniform, which is exact for a piecewise-constant intensity. Everything is drawn from one
``numpy.random.Generator(PCG64(seed))`` in a fixed order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal

import numpy as np
import polars as pl

from toolkit.arguments import fraction, number, whole
from toolkit.flows.distributions import (
    DelayModel,
    Exponential,
    Fixed,
    LogNormal,
    SizeModel,
    generator,
)
from toolkit.flows.schema import EXACT_INPUT, EXACT_OUTPUT
from toolkit.scenario import Scenario, load_scenario

__all__ = [
    "DEFAULT_PROFILE",
    "default_sizes",
    "generate_flow",
    "poisson_arrivals",
]

#: A day's shape: quiet nights, a European morning and a busier US afternoon (mean exactly 1).
DEFAULT_PROFILE: tuple[float, ...] = (
    0.5, 0.4, 0.4, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.3, 1.3, 1.3,
    1.3, 1.4, 1.5, 1.6, 1.6, 1.5, 1.3, 1.1, 0.9, 0.8, 0.7, 0.6,
)  # fmt: skip

# A typical request is worth about this much; turned into token units with scenario prices.
_TYPICAL_USD = Decimal(5_000)
_HOUR = 3600.0


def _check_rate(rate_per_s: object) -> float:
    return number(rate_per_s, "rate_per_s", minimum=0)


def _check_profile(profile: Sequence[float] | None) -> tuple[float, ...]:
    if profile is None:
        return (1.0,) * 24
    if isinstance(profile, str | bytes) or not isinstance(profile, Sequence):
        raise ValueError("profile: must be a sequence of 24 hourly multipliers")
    if len(profile) != 24:
        raise ValueError(f"profile: must hold 24 hourly multipliers, got {len(profile)}")
    values = []
    for hour, value in enumerate(profile):
        values.append(number(value, f"profile[{hour}]", minimum=0))
    return tuple(values)


def _check_seed(seed: object) -> int:
    return whole(seed, "seed", minimum=0)


def poisson_arrivals(
    rate_per_s: float,
    span_h: float,
    *,
    seed: int | np.random.Generator = 0,
    profile: Sequence[float] | None = None,
) -> np.ndarray:
    """Sorted arrival times (seconds) of a Poisson process over ``span_h`` hours.

    The intensity in hour ``h`` of the run is ``rate_per_s * profile[h % 24]`` per second (a
    flat ``rate_per_s`` when ``profile`` is None). ``seed`` is an integer or a generator to draw
    from.

    >>> times = poisson_arrivals(2.0, 1.0, seed=7)
    >>> bool((times[1:] >= times[:-1]).all()), 6000 < len(times) < 8400
    (True, True)
    """
    per_second = _check_rate(rate_per_s)
    number(span_h, "span_h", above=0)
    shape = _check_profile(profile)
    rng = seed if isinstance(seed, np.random.Generator) else generator(_check_seed(seed))
    duration = float(span_h) * _HOUR
    n_hours = math.ceil(duration / _HOUR)
    starts = np.arange(n_hours, dtype=np.float64) * _HOUR
    lengths = np.minimum(duration - starts, _HOUR)
    multipliers = np.array([shape[h % 24] for h in range(n_hours)], dtype=np.float64)
    counts = rng.poisson(per_second * multipliers * lengths)
    offsets = np.repeat(starts, counts)
    spans = np.repeat(lengths, counts)
    times = offsets + rng.random(int(counts.sum())) * spans
    # Hours do not overlap, so one global sort equals sorting each hour's uniforms.
    times.sort(kind="stable")
    return times


def _route_keys(
    scenario: Scenario, routes: Mapping[tuple[int, int, str], float] | None
) -> tuple[list[tuple[int, int, str]], np.ndarray]:
    if routes is None:
        keys = [(r.src, r.dst, r.token) for r in scenario.routes]
        return keys, np.full(len(keys), 1.0 / len(keys))
    if not isinstance(routes, Mapping) or not routes:
        raise ValueError("routes: must be a non-empty mapping of (src, dst, token) to a weight")
    keys, weights = [], []
    for key, weight in routes.items():
        if not (isinstance(key, tuple) and len(key) == 3):
            raise ValueError(f"routes: key {key!r} must be a (src_chain, dst_chain, token) tuple")
        src, dst, token = key
        if scenario.route(src, dst, token) is None:
            raise ValueError(
                f"routes: route {src}->{dst} {token} is not onboarded in scenario {scenario.name!r}"
            )
        ok = not isinstance(weight, bool) and isinstance(weight, int | float)
        if not ok or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"routes[{key!r}]: weight must be a finite number >= 0")
        keys.append((int(src), int(dst), str(token)))
        weights.append(float(weight))
    total = math.fsum(weights)
    if total <= 0:
        raise ValueError("routes: at least one weight must be > 0")
    return keys, np.array(weights) / total


def default_sizes(scenario: Scenario | str) -> dict[str, SizeModel]:
    """Log-normal sizes per token: median worth about 5,000 USD, ``sigma`` 1.2.

    Without a scenario price for a token, the median is the geometric middle of its routes'
    fee-tier range.

    >>> default_sizes("default")["USDC"]
    LogNormal(median=5000000000, sigma=1.2)
    """
    s = load_scenario(scenario)
    out: dict[str, SizeModel] = {}
    for symbol in sorted({r.token for r in s.routes}):
        price = s.pricing.price_usd(symbol)
        decimals = next(t.decimals for t in s.tokens if t.symbol == symbol)
        if price is not None:
            median = int(_TYPICAL_USD / price * Decimal(10) ** decimals)
        else:
            low = min(r.fee_tiers[0].min_amount for r in s.routes if r.token == symbol)
            high = max(r.fee_tiers[-1].max_amount for r in s.routes if r.token == symbol)
            median = math.isqrt(max(low, 1) * high)
        out[symbol] = LogNormal(median=max(median, 1), sigma=1.2)
    return out


def _sizes(
    scenario: Scenario,
    keys: list[tuple[int, int, str]],
    route_idx: np.ndarray,
    sizes: Mapping[str, SizeModel] | None,
    rng: np.random.Generator,
) -> pl.Series:
    models = default_sizes(scenario) if sizes is None else dict(sizes)
    n = len(route_idx)
    amount = pl.Series("amount", [0] * 0, dtype=pl.Int128).extend_constant(0, n)
    low = [0] * len(keys)
    high = [0] * len(keys)
    for k, (src, dst, token) in enumerate(keys):
        tiers = scenario.route(src, dst, token).fee_tiers  # type: ignore[union-attr]
        low[k], high[k] = max(tiers[0].min_amount, 1), tiers[-1].max_amount
    for symbol in sorted({key[2] for key in keys}):
        model = models.get(symbol)
        if not isinstance(model, LogNormal | Fixed):
            raise ValueError(f"sizes[{symbol!r}]: must be a LogNormal or Fixed size model")
        members = [k for k, key in enumerate(keys) if key[2] == symbol]
        if isinstance(model, Fixed):
            for k in members:
                if not low[k] <= model.amount <= high[k]:
                    src, dst, _ = keys[k]
                    raise ValueError(
                        f"sizes[{symbol!r}]: Fixed amount {model.amount} is outside the "
                        f"fee-tier range [{low[k]}, {high[k]}] of route {src}->{dst}"
                    )
        rows = np.flatnonzero(np.isin(route_idx, members))
        decimals = scenario.token(keys[members[0]][0], symbol).decimals
        drawn = model.sample(rng, len(rows), step=10 ** max(decimals - 4, 0))
        if len(rows):
            amount.scatter(rows, drawn)
    bounds = pl.DataFrame(
        {"lo": pl.Series(low, dtype=pl.Int128), "hi": pl.Series(high, dtype=pl.Int128)}
    )
    lo = bounds["lo"].gather(route_idx)
    hi = bounds["hi"].gather(route_idx)
    return amount.clip(lo, hi)


def generate_flow(
    scenario: Scenario | str,
    *,
    span_h: float = 24.0,
    rate_per_s: float = 1.0,
    seed: int = 0,
    profile: Sequence[float] | None = DEFAULT_PROFILE,
    routes: Mapping[tuple[int, int, str], float] | None = None,
    sizes: Mapping[str, SizeModel] | None = None,
    exact_output_share: float = 0.5,
    convert_probability: float = 0.3,
    convert_delay: DelayModel | None = None,
) -> pl.DataFrame:
    """A seeded flow of RFQs for ``scenario`` (a scenario name, a path or a Scenario).

    - ``span_h``: the flow's length in hours; ``rate_per_s``: mean RFQs per second before the
      hourly ``profile`` multiplier.
    - ``routes``: weights over ``(src_chain, dst_chain, token)``; default equal weights over
      every onboarded route. ``sizes``: a size model per token (default :func:`default_sizes`);
      log-normal draws are clipped to each route's fee-tier range.
    - ``exact_output_share``: share of ExactOutput requests.
    - ``convert_probability`` and ``convert_delay`` (default exponential, mean 4 s): whether
      and when the caller posts the quote to the transaction call.

    >>> flow = generate_flow("default", span_h=0.5, rate_per_s=2.0, seed=1)
    >>> flow.columns[:4], 1500 < flow.height < 2100  # the night hour runs at half the rate
    (['request_id', 't', 'src_chain', 'dst_chain'], True)
    """
    s = load_scenario(scenario)
    seed = _check_seed(seed)
    share_out = fraction(exact_output_share, "exact_output_share")
    p_convert = fraction(convert_probability, "convert_probability")
    delay = Exponential(4.0) if convert_delay is None else convert_delay
    if not hasattr(delay, "sample") or not isinstance(delay, DelayModel):
        raise ValueError("convert_delay: must be a Constant, Uniform or Exponential delay model")
    if sizes is not None and not isinstance(sizes, Mapping):
        raise ValueError("sizes: must be a mapping of token symbol to a size model")
    keys, weights = _route_keys(s, routes)
    rng = generator(seed)
    times = poisson_arrivals(rate_per_s, span_h, seed=rng, profile=profile)
    n = len(times)
    route_idx = rng.choice(len(keys), size=n, p=weights).astype(np.int64)
    amounts = _sizes(s, keys, route_idx, sizes, rng)
    exact_output = rng.random(n) < share_out
    converts = rng.random(n) < p_convert
    delays = delay.sample(rng, n)
    src = np.array([k[0] for k in keys], dtype=np.int64)
    dst = np.array([k[1] for k in keys], dtype=np.int64)
    symbols = pl.Series([k[2] for k in keys], dtype=pl.String)
    width = max(7, len(str(max(n - 1, 0))))
    return pl.DataFrame(
        {
            "request_id": pl.Series(np.arange(n), dtype=pl.Int64),
            "t": pl.Series(times, dtype=pl.Float64),
            "src_chain": pl.Series(src[route_idx], dtype=pl.Int64),
            "dst_chain": pl.Series(dst[route_idx], dtype=pl.Int64),
            "token": symbols.gather(route_idx),
            "amount": amounts,
            "type": pl.Series(np.where(exact_output, EXACT_OUTPUT, EXACT_INPUT), dtype=pl.String),
            "converts": pl.Series(converts, dtype=pl.Boolean),
            "convert_delay": pl.Series(delays, dtype=pl.Float64),
        }
    ).with_columns(
        pl.concat_str(pl.lit("r"), pl.col("request_id").cast(pl.String).str.zfill(width)).alias(
            "request_id"
        )
    )
