"""Effective fee, fee curve and amount buckets on hand-built rfq_observations frames."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.models.fees import t95
from toolkit.models.pricing import effective_fee_bps, fee_by_amount_bucket, fee_curve

E18 = 10**18


def test_effective_fee_exact_input_and_exact_output(rfq) -> None:
    obs = rfq(
        # ExactInput: amount is the input; 12.5 bps taken from the output.
        {"amount": 10**22, "input_amount": 10**22, "output_amount": 10**22 - 125 * E18 // 10},
        # ExactOutput: amount is the output; the input carries the 4 bps fee.
        {
            "quote_type": "ExactOutput",
            "amount": 9_996 * E18,
            "input_amount": 10_000 * E18,
            "output_amount": 9_996 * E18,
        },
        {"status": 404},
        {"status": 200, "input_amount": 0, "output_amount": 0},
        {"status": 200, "input_amount": 100, "output_amount": 101},
    )
    fees = effective_fee_bps(obs)
    assert fees.columns == [*obs.columns, "effective_fee_bps"]
    assert fees["effective_fee_bps"].to_list() == [12.5, 4.0, None, None, -100.0]
    assert fees.schema["input_amount"] == pl.Int128


def test_effective_fee_keeps_wei_differences_above_2_pow_63(rfq) -> None:
    # In floats 10^30 and 10^30 − 10^13 are one or two ulps apart; in Int128 they differ by 10^13.
    obs = rfq({"input_amount": 10**30, "output_amount": 10**30 - 10**13})
    assert effective_fee_bps(obs)["effective_fee_bps"][0] == pytest.approx(1e-13, rel=1e-15)
    assert float(10**30) - float(10**30 - 10**13) != 1e13


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2**127 - 1), st.data())
def test_effective_fee_matches_exact_rationals(input_amount: int, data: st.DataObject) -> None:
    output_amount = data.draw(st.integers(0, 2**127 - 1))
    obs = pl.DataFrame(
        {"status": [200], "input_amount": [input_amount], "output_amount": [output_amount]},
        schema={"status": pl.Int32, "input_amount": pl.Int128, "output_amount": pl.Int128},
    )
    expected = float(Fraction(input_amount - output_amount, input_amount) * 10_000)
    assert effective_fee_bps(obs)["effective_fee_bps"][0] == pytest.approx(expected, rel=1e-14)


def curve_obs(rfq, fees: dict[int, float], **extra: object) -> pl.DataFrame:
    rows = []
    for amount, fee in fees.items():
        output = amount - int(Fraction(fee).limit_denominator(10**6) * amount / 10_000)
        rows.append({"amount": amount, "input_amount": amount, "output_amount": output, **extra})
    return rfq(*rows)


def test_fee_curve_recovers_a_log_linear_fee(rfq) -> None:
    amounts = [10**k * E18 for k in range(1, 6)]  # all above 2^63
    usdc = curve_obs(rfq, {a: 8.0 - 1.5 * np.log10(a / E18) for a in amounts})
    usdt = curve_obs(rfq, {a: 3.0 for a in amounts[:3]}, token="USDT")
    noise = rfq({"status": 404}, {"status": 500, "token": "USDT"})
    result = fee_curve(pl.concat([usdc, usdt, noise]))
    assert result.columns == [
        "src_chain", "dst_chain", "token", "quote_type", "n", "intercept",
        "log10_amount_coef", "utilization_coef", "r2", "rmse", "amount_min", "amount_max",
        "log10_amount_coef_se", "log10_amount_coef_lo", "log10_amount_coef_hi", "size_dependence",
    ]  # fmt: skip
    first = result.row(0, named=True)
    assert first["token"] == "USDC"
    assert first["n"] == 5
    assert first["log10_amount_coef"] == pytest.approx(-1.5, abs=1e-9)
    assert first["intercept"] == pytest.approx(8.0 + 1.5 * 18, abs=1e-8)
    assert first["r2"] == pytest.approx(1.0)
    assert first["rmse"] == pytest.approx(0.0, abs=1e-9)
    assert first["utilization_coef"] is None
    assert (first["amount_min"], first["amount_max"]) == (10 * E18, 10**5 * E18)
    flat = result.row(1, named=True)
    assert flat["token"] == "USDT"
    assert flat["log10_amount_coef"] == pytest.approx(0.0, abs=1e-9)
    assert flat["r2"] is None  # the fee never varies: nothing to explain


def test_fee_curve_with_utilization(rfq) -> None:
    rows = []
    for amount in (10**6, 10**7, 10**8):
        for utilization in (0.0, 0.5, 0.9):
            fee = 2.0 + 1.0 * np.log10(amount) + 4.0 * utilization
            output = amount - round(fee * amount / 10_000)
            rows.append(
                {
                    "amount": amount,
                    "input_amount": amount,
                    "output_amount": output,
                    "utilization": utilization,
                }
            )
    obs = rfq(*[{k: v for k, v in r.items() if k != "utilization"} for r in rows])
    obs = obs.with_columns(pl.Series("utilization", [r["utilization"] for r in rows]))
    obs = pl.concat([obs, obs.head(1).with_columns(pl.lit(None, pl.Float64).alias("utilization"))])
    fit = fee_curve(obs).row(0, named=True)
    assert fit["n"] == 9  # the row without a utilization is left out
    assert fit["utilization_coef"] == pytest.approx(4.0, abs=1e-6)
    assert fit["log10_amount_coef"] == pytest.approx(1.0, abs=1e-6)
    assert fit["intercept"] == pytest.approx(2.0, abs=1e-5)


def test_fee_curve_undetermined_fits_are_null(rfq) -> None:
    obs = rfq({"amount": 500}, {"amount": 500})  # one amount: slope undetermined
    fit = fee_curve(obs).row(0, named=True)
    assert fit["n"] == 2
    assert fit["intercept"] is None and fit["log10_amount_coef"] is None and fit["r2"] is None


def test_fee_curve_empty_input_and_no_successes(rfq) -> None:
    full = fee_curve(rfq({"amount": 10}, {"amount": 1000}))
    for frame in (rfq(), rfq({"status": 404})):
        empty = fee_curve(frame)
        assert empty.height == 0
        assert empty.schema == full.schema


def test_fee_by_amount_bucket_decades(rfq) -> None:
    obs = rfq(
        *[
            {"amount": 10**20 + k, "input_amount": 10_000, "output_amount": 10_000 - k}
            for k in range(1, 11)
        ],
        {"amount": 10**21, "input_amount": 10_000, "output_amount": 9_999},
        {"amount": 10**21 - 1, "input_amount": 10_000, "output_amount": 9_998},
        {"status": 404, "amount": 10**21},
    )
    result = fee_by_amount_bucket(obs, by=())
    assert result.select("bucket_lo", "bucket_hi", "n").rows() == [
        (10**20, 10**21, 11),
        (10**21, 10**22, 1),
    ]
    low = result.row(0, named=True)
    fees = sorted([float(k) for k in range(1, 11)] + [2.0])
    assert low["fee_median"] == pytest.approx(float(np.median(fees)))
    assert low["fee_p10"] == pytest.approx(float(np.quantile(fees, 0.1)))
    assert low["fee_p90"] == pytest.approx(float(np.quantile(fees, 0.9)))
    assert (low["fee_min"], low["fee_max"]) == (1.0, 10.0)
    assert result.schema["bucket_lo"] == pl.Int128


def test_fee_by_amount_bucket_custom_edges(rfq) -> None:
    obs = rfq(
        {"amount": 5},
        {"amount": 100},
        {"amount": 999},
        {"amount": 1_000},
        {"amount": 10**25},
        {"amount": 7, "token": "USDT"},
    )
    result = fee_by_amount_bucket(obs, [100, 1_000], by="token")
    assert result.select("token", "bucket_lo", "bucket_hi", "n").rows() == [
        ("USDC", 0, 100, 1),
        ("USDC", 100, 1_000, 2),
        ("USDC", 1_000, None, 2),
        ("USDT", 0, 100, 1),
    ]
    assert fee_by_amount_bucket(obs, [0, 100], by=())["bucket_lo"].to_list() == [0, 100]


@pytest.mark.parametrize(
    ("buckets", "error", "message"),
    [
        ([], ValueError, "buckets: must be a non-empty sequence"),
        ([10, 10], ValueError, "buckets: edges must be strictly ascending"),
        ([10, 5], ValueError, "buckets: edges must be strictly ascending"),
        ([1.5], TypeError, r"buckets\[0\]: must be an integer amount, got float"),
        ([-1], ValueError, r"buckets\[0\]: must be between 0 and 2\^127"),
    ],
)
def test_fee_by_amount_bucket_rejects_bad_edges(
    rfq, buckets: list[object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fee_by_amount_bucket(rfq({}), buckets)  # type: ignore[arg-type]


def test_fee_by_amount_bucket_empty(rfq) -> None:
    full = fee_by_amount_bucket(rfq({}))
    empty = fee_by_amount_bucket(rfq())
    assert empty.height == 0
    assert empty.schema == full.schema


@settings(max_examples=25, deadline=None)
@given(
    st.floats(-5.0, 20.0),
    st.floats(-3.0, 3.0),
    st.lists(st.integers(3, 30), min_size=3, max_size=8, unique=True),
)
def test_fee_curve_recovers_noiseless_coefficients(
    intercept: float, slope: float, exponents: list[int]
) -> None:
    amounts = [10**k for k in exponents]
    fees = [intercept + slope * k for k in exponents]
    # Outputs chosen so the exact fee is the target to ~1e-9 bps (amounts >= 1000 wei).
    outputs = [a - round(f * a / 10_000) for a, f in zip(amounts, fees, strict=True)]
    obs = pl.DataFrame(
        {"status": 200, "amount": amounts, "input_amount": amounts, "output_amount": outputs},
        schema={
            "status": pl.Int32,
            "amount": pl.Int128,
            "input_amount": pl.Int128,
            "output_amount": pl.Int128,
        },
    )
    fit = fee_curve(obs, by=()).row(0, named=True)
    assert fit["n"] == len(amounts)
    tolerance = 10.0 / min(amounts) * 10_000 + 1e-9
    assert fit["log10_amount_coef"] == pytest.approx(slope, abs=tolerance)


def _obs(amounts: list[int], fees_bps: list[float]) -> pl.DataFrame:
    outputs = [a - round(a * f / 10_000) for a, f in zip(amounts, fees_bps, strict=True)]
    return pl.DataFrame(
        {
            "status": [200] * len(amounts),
            "amount": amounts,
            "input_amount": amounts,
            "output_amount": outputs,
            "token": ["USDC"] * len(amounts),
        },
        schema_overrides={
            "amount": pl.Int128,
            "input_amount": pl.Int128,
            "output_amount": pl.Int128,
        },
    )


@pytest.mark.parametrize(("df", "table"), [(1, 12.706), (3, 3.182), (5, 2.571), (20, 2.086)])
def test_t95_matches_the_published_t_table(df: int, table: float) -> None:
    """Reference: the two-sided 95 % column of Student's t table (e.g. NIST/SEMATECH
    e-Handbook of Statistical Methods, table 1.3.6.7.2)."""
    assert abs(t95(df) - table) <= 0.002


def test_the_slope_interval_is_the_textbook_one() -> None:
    """Reference: simple regression's slope standard error sqrt(SSE / (n − 2) / Sxx) and the
    interval b ± t(0.975, n − 2)·se (Montgomery and Runger, *Applied Statistics*, §11-5)."""
    rng = np.random.default_rng(4)
    amounts = [int(10 ** rng.uniform(7, 11)) for _ in range(40)]
    x = np.log10(np.array(amounts, dtype=float))
    fees = list(8.0 - 1.0 * (x - 7) + rng.normal(0, 0.8, 40))
    fit = fee_curve(_obs(amounts, fees), by="token").row(0, named=True)
    y = np.array(
        [(a - (a - round(a * f / 10_000))) / a * 1e4 for a, f in zip(amounts, fees, strict=True)]
    )
    b, a = np.polyfit(x, y, 1)
    sse = float(((y - (a + b * x)) ** 2).sum())
    se = np.sqrt(sse / 38 / ((x - x.mean()) ** 2).sum())
    assert fit["log10_amount_coef_se"] == pytest.approx(se, rel=1e-9)
    assert fit["log10_amount_coef_lo"] == pytest.approx(b - t95(38) * se, rel=1e-9)
    assert fit["size_dependence"] is True


def test_a_flat_fee_is_no_size_dependence() -> None:
    rng = np.random.default_rng(9)
    amounts = [int(10 ** rng.uniform(7, 11)) for _ in range(60)]
    fees = list(5.0 + rng.normal(0, 0.5, 60))
    fit = fee_curve(_obs(amounts, fees), by="token").row(0, named=True)
    assert fit["log10_amount_coef_lo"] < 0 < fit["log10_amount_coef_hi"]
    assert fit["size_dependence"] is False
    assert fit["r2"] < 0.1
