"""format_frame: the same text for the same frame, whatever polars' display settings."""

from __future__ import annotations

import datetime as dt
import math

import polars as pl
import pytest

from toolkit.testing import format_frame


def test_floats_are_rounded_and_negative_zero_is_zero() -> None:
    frame = pl.DataFrame({"x": [1 / 3, -1e-9, 2.0, math.nan, -math.inf, None]})
    assert format_frame(frame, decimals=4).splitlines() == [
        "     x",
        "0.3333",
        "0.0000",
        "2.0000",
        "   NaN",
        "  -inf",
        "  null",
    ]


def test_amounts_are_exact_and_text_is_left_aligned() -> None:
    frame = pl.DataFrame(
        {
            "pool": ["8453:USDC:usdc", "x"],
            "balance": pl.Series([2**100, 0], dtype=pl.Int128),
            "ok": [True, False],
            "at": [dt.datetime(2025, 1, 1, tzinfo=dt.UTC), None],
        }
    )
    assert format_frame(frame) == (
        "pool                                    balance  ok     at\n"
        "8453:USDC:usdc  1267650600228229401496703205376  true   2025-01-01T00:00:00+00:00\n"
        "x                                             0  false  null"
    )


def test_polars_display_settings_do_not_change_the_text() -> None:
    frame = pl.DataFrame({"a": list(range(30)), "b": [k / 7 for k in range(30)]})
    plain = format_frame(frame)
    with pl.Config(tbl_rows=3, float_precision=1, tbl_width_chars=20):
        assert format_frame(frame) == plain
    assert len(plain.splitlines()) == 31


def test_an_empty_frame_shows_its_header() -> None:
    assert format_frame(pl.DataFrame({"a": [], "bb": []})) == "a  bb"
    assert format_frame(pl.DataFrame()) == ""


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (({"a": [1]},), {}, TypeError, "frame: expected a polars DataFrame, got dict"),
        ((pl.DataFrame({"a": [1]}),), {"decimals": -1}, ValueError, "decimals: must be an integer"),
        (
            (pl.DataFrame({"a": [1]}),),
            {"decimals": 1.5},
            ValueError,
            "decimals: must be an integer",
        ),
        ((pl.DataFrame({"a": [[1]]}),), {}, TypeError, "cannot show a value of type list"),
    ],
)
def test_bad_input_is_refused(
    args: tuple[object, ...], kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        format_frame(*args, **kwargs)  # type: ignore[arg-type]
