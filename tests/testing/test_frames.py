"""assert_frame_close: tolerances, key sorting, exact amounts, readable failures."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.testing import assert_frame_close


def frame(**columns: object) -> pl.DataFrame:
    return pl.DataFrame(columns)


BASE = pl.DataFrame(
    {
        "route": ["1-8453", "1-10", "10-1"],
        "amount": pl.Series([10**24, 5 * 10**6, 7], dtype=pl.Int128),
        "fee_bps": [5.0, 3.25, 0.0],
        "n": [3, 4, 5],
    }
)


def test_equal_frames_pass() -> None:
    assert_frame_close(BASE, BASE.clone())


def test_floats_within_the_relative_tolerance_pass() -> None:
    near = BASE.with_columns(pl.col("fee_bps") * (1 + 5e-10))
    assert_frame_close(BASE, near)
    with pytest.raises(AssertionError, match="column 'fee_bps', row 0"):
        assert_frame_close(BASE, BASE.with_columns(pl.col("fee_bps") * (1 + 2e-9)))


def test_abs_tol_covers_values_near_zero() -> None:
    left = frame(x=[0.0, 1.0])
    right = frame(x=[1e-12, 1.0])
    with pytest.raises(AssertionError, match=r"column 'x', row 0: left 0.0 != right 1e-12"):
        assert_frame_close(left, right)
    assert_frame_close(left, right, abs_tol=1e-9)


def test_nan_matches_nan_and_null_matches_null() -> None:
    left = frame(x=[math.nan, None, 1.0])
    assert_frame_close(left, left.clone())
    with pytest.raises(AssertionError, match=r"column 'x', row 1: left None != right 2.0"):
        assert_frame_close(left, frame(x=[math.nan, 2.0, 1.0]))


def test_integer_amounts_are_exact_by_default() -> None:
    off_by_one = BASE.with_columns(pl.col("amount") + 1)
    with pytest.raises(AssertionError) as info:
        assert_frame_close(BASE, off_by_one, rel_tol=0.5)
    text = str(info.value)
    assert text.startswith(
        "column 'amount', row 0: left 1000000000000000000000000 != right "
        "1000000000000000000000001 (compared exactly; 3 of 3 rows differ)"
    )


def test_explicit_exact_lists_the_only_exact_columns() -> None:
    # ``n`` left out of ``exact`` is compared within the tolerance, ``fee_bps`` exactly.
    close_counts = BASE.with_columns(pl.col("n") * 1.0 + pl.Series([0, 0, 1]))
    with pytest.raises(AssertionError, match="column 'n', row 2"):
        assert_frame_close(BASE, close_counts, check_dtypes=False)
    assert_frame_close(
        BASE, close_counts, exact=["amount", "route"], rel_tol=0.25, check_dtypes=False
    )
    tiny = BASE.with_columns(pl.col("fee_bps") * (1 + 1e-15))
    assert_frame_close(BASE, tiny)
    with pytest.raises(AssertionError, match=r"column 'fee_bps', row 0.*compared exactly"):
        assert_frame_close(BASE, tiny, exact="fee_bps")


def test_by_sorts_both_frames_and_the_message_gives_the_keys() -> None:
    shuffled = BASE.reverse()
    with pytest.raises(AssertionError, match="column 'route', row 0"):
        assert_frame_close(BASE, shuffled)
    assert_frame_close(BASE, shuffled, by="route")
    changed = shuffled.with_columns(
        pl.when(pl.col("route") == "10-1").then(0.5).otherwise(pl.col("fee_bps")).alias("fee_bps")
    )
    with pytest.raises(AssertionError) as info:
        assert_frame_close(BASE, changed, by=["route"])
    assert str(info.value) == (
        "column 'fee_bps', row 2 (route='10-1'): left 0.0 != right 0.5 "
        "(compared with rel_tol=1e-09, abs_tol=0.0; 1 of 3 rows differ; rows sorted by route)"
    )


def test_the_first_differing_column_in_column_order_is_named() -> None:
    other = BASE.with_columns(pl.col("n") + 1, pl.col("fee_bps") + 1)
    with pytest.raises(AssertionError, match=r"^column 'fee_bps'"):
        assert_frame_close(BASE, other)


def test_ignore_drops_columns_even_when_only_one_side_has_them() -> None:
    extra = BASE.with_columns(pl.lit("x").alias("observed_at"), pl.col("n") * 2)
    assert_frame_close(BASE, extra, ignore=["observed_at", "n"])


def test_column_order_is_not_compared() -> None:
    assert_frame_close(BASE, BASE.select(reversed(BASE.columns)))


def test_structural_differences_fail_with_a_plain_message() -> None:
    with pytest.raises(AssertionError, match=r"different columns \(only in left: n\)"):
        assert_frame_close(BASE, BASE.drop("n"))
    with pytest.raises(AssertionError, match=r"only in left: n; only in right: m"):
        assert_frame_close(BASE, BASE.rename({"n": "m"}))
    with pytest.raises(AssertionError, match="different heights: left 3 rows, right 2 rows"):
        assert_frame_close(BASE, BASE.head(2))
    narrow = BASE.with_columns(pl.col("amount").cast(pl.Int64, strict=False))
    with pytest.raises(AssertionError, match="column 'amount': dtypes differ: left Int128"):
        assert_frame_close(BASE.tail(2), narrow.tail(2))
    assert_frame_close(BASE.tail(2), narrow.tail(2), check_dtypes=False)


def test_strings_and_booleans_compare_exactly() -> None:
    left = frame(s=["a", "b"], ok=[True, False])
    with pytest.raises(AssertionError, match="column 's', row 1: left 'b' != right 'c'"):
        assert_frame_close(left, frame(s=["a", "c"], ok=[True, False]))
    with pytest.raises(AssertionError, match="column 'ok', row 0: left True != right False"):
        assert_frame_close(left, frame(s=["a", "b"], ok=[False, False]))


def test_failures_chain_the_polars_report() -> None:
    with pytest.raises(AssertionError) as info:
        assert_frame_close(frame(x=[1.0]), frame(x=[2.0]))
    assert isinstance(info.value.__cause__, AssertionError)
    assert "DataFrames are different" in str(info.value.__cause__)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"by": "missing"}, ValueError, "by: no column 'missing' in the left frame"),
        ({"by": ["route", "route"]}, ValueError, "by: column names must be distinct"),
        ({"by": [1]}, TypeError, "by: must be a column name or a sequence of column names"),
        ({"exact": ["nope"]}, ValueError, "exact: no column 'nope' in the left frame"),
        ({"ignore": "nope"}, ValueError, "ignore: no column 'nope' in either frame"),
        ({"by": "n", "ignore": "n"}, ValueError, "by: column 'n' is also in ignore"),
        ({"rel_tol": -1.0}, ValueError, "rel_tol: must be a finite number >= 0, got -1.0"),
        ({"abs_tol": math.nan}, ValueError, "abs_tol: must be a finite number >= 0"),
        ({"rel_tol": "1e-9"}, ValueError, "rel_tol: must be a finite number >= 0"),
    ],
)
def test_bad_arguments_name_the_argument(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        assert_frame_close(BASE, BASE, **kwargs)  # type: ignore[arg-type]


def test_non_frames_are_refused() -> None:
    with pytest.raises(TypeError, match="left: expected a polars DataFrame, got dict"):
        assert_frame_close({"a": [1]}, BASE)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="right: expected a polars DataFrame, got LazyFrame"):
        assert_frame_close(BASE, BASE.lazy())  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False), min_size=1, max_size=20),
    st.floats(min_value=1e-12, max_value=1e-3),
    st.data(),
)
def test_agrees_with_math_isclose_row_by_row(
    values: list[float], rel: float, data: st.DataObject
) -> None:
    factors = data.draw(
        st.lists(
            st.floats(min_value=-1e-2, max_value=1e-2),
            min_size=len(values),
            max_size=len(values),
        )
    )
    perturbed = [v * (1 + f) for v, f in zip(values, factors, strict=True)]
    expected = [
        k
        for k, (a, b) in enumerate(zip(values, perturbed, strict=True))
        if not math.isclose(a, b, rel_tol=rel, abs_tol=0.0)
    ]
    left, right = frame(x=values), frame(x=perturbed)
    if not expected:
        assert_frame_close(left, right, rel_tol=rel)
        return
    with pytest.raises(AssertionError) as info:
        assert_frame_close(left, right, rel_tol=rel)
    assert str(info.value).startswith(f"column 'x', row {expected[0]}:")
    assert f"{len(expected)} of {len(values)} rows differ" in str(info.value)
