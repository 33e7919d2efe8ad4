"""The checks of the flow contracts: an intents flow before a replay (:func:`check_flow`, which
also turns it into plain columns for the event loop), and the frames traffic plays on a live
service (:func:`checked_frame`, :func:`check_swaps`, :func:`check_credit`).

Every rule failure names the column, the first offending row (0-based) where there is one and
the rule, e.g. ``flow.amount: row 3: must be positive, got -5``. Nothing deep inside polars or
the engine is left to fail on bad input.
"""

from __future__ import annotations

from typing import NamedTuple

import polars as pl

from toolkit.arguments import ArgumentError
from toolkit.flows.schema import CREDIT_ACTIONS, EXACT_INPUT, EXACT_OUTPUT, FLOW_COLUMNS
from toolkit.scenario import Scenario
from toolkit.world.evm.accounts import DEV_ACCOUNTS
from toolkit.world.evm.markets import MARKET_CHAINS, Market, market_for

__all__ = [
    "FlowColumns",
    "check_credit",
    "check_flow",
    "check_swaps",
    "checked_frame",
]

_TYPES = (EXACT_INPUT, EXACT_OUTPUT)


class FlowColumns(NamedTuple):
    """A checked flow as Python lists, plus the route index of every row.

    ``frame`` holds the flow's identifying columns in result dtypes (``request_id``, ``t``,
    ``src_chain``, ``dst_chain``, ``token``, ``quote_type``, ``amount``). ``routes`` lists the
    distinct ``(src_chain, dst_chain, token)`` of the flow in the scenario's route order;
    ``route`` holds each row's index into it.
    """

    frame: pl.DataFrame
    t: list[float]
    route: list[int]
    routes: list[tuple[int, int, str]]
    amount: list[int]
    exact_output: list[bool]
    converts: list[bool]
    convert_delay: list[float]


def _first(mask: pl.Series) -> int | None:
    """Index of the first True in ``mask`` (nulls count as False), or None."""
    mask = mask.fill_null(False)
    if not mask.any():
        return None
    return int(mask.arg_max())  # type: ignore[arg-type]


def _is_integer(dtype: pl.DataType) -> bool:
    return dtype.is_integer() or (isinstance(dtype, pl.Decimal) and dtype.scale == 0)


def _check_dtypes(flow: pl.DataFrame) -> None:
    schema = flow.schema
    missing = [c for c in FLOW_COLUMNS if c not in schema]
    if missing:
        raise ValueError(
            f"flow: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(a flow needs {', '.join(FLOW_COLUMNS)})"
        )
    rules = {
        "t": (lambda d: d.is_numeric(), "a numeric column of seconds"),
        "src_chain": (_is_integer, "an integer column of chain ids"),
        "dst_chain": (_is_integer, "an integer column of chain ids"),
        "token": (lambda d: d == pl.String, "a string column of token symbols"),
        "amount": (_is_integer, "an integer column of smallest units (Int64 or Int128)"),
        "type": (
            lambda d: d == pl.String or isinstance(d, pl.Categorical | pl.Enum),
            "a string column of ExactInput/ExactOutput",
        ),
        "converts": (lambda d: d == pl.Boolean, "a boolean column"),
        "convert_delay": (lambda d: d.is_numeric(), "a numeric column of seconds"),
    }
    for name, (ok, rule) in rules.items():
        dtype = schema[name]
        if not ok(dtype):
            raise ValueError(f"flow.{name}: must be {rule}, got dtype {dtype}")
    if "request_id" in schema:
        dtype = schema["request_id"]
        if not (dtype == pl.String or dtype.is_integer()):
            raise ValueError(
                f"flow.request_id: must be a string or integer column, got dtype {dtype}"
            )


def _check_values(flow: pl.DataFrame) -> None:
    names = [*FLOW_COLUMNS, *(["request_id"] if "request_id" in flow.schema else [])]
    for name in names:
        row = _first(flow[name].is_null())
        if row is not None:
            raise ValueError(f"flow.{name}: row {row}: must not be null")
    t = flow["t"].cast(pl.Float64)
    row = _first(~t.is_finite() | (t < 0))
    if row is not None:
        raise ValueError(f"flow.t: row {row}: must be a finite number >= 0, got {t[row]}")
    row = _first(t.diff() < 0)
    if row is not None:
        raise ValueError(
            f"flow.t: row {row}: must be sorted ascending, got {t[row]} after {t[row - 1]}"
        )
    for name in ("src_chain", "dst_chain"):
        row = _first(flow[name] <= 0)
        if row is not None:
            raise ValueError(
                f"flow.{name}: row {row}: must be a positive chain id, got {flow[name][row]}"
            )
    row = _first(flow["amount"] <= 0)
    if row is not None:
        raise ValueError(f"flow.amount: row {row}: must be positive, got {flow['amount'][row]}")
    kinds = flow["type"].cast(pl.String)
    row = _first(~kinds.is_in(_TYPES))
    if row is not None:
        raise ValueError(
            f"flow.type: row {row}: must be ExactInput or ExactOutput, got {kinds[row]!r}"
        )
    delay = flow["convert_delay"].cast(pl.Float64)
    row = _first(~delay.is_finite() | (delay < 0))
    if row is not None:
        raise ValueError(
            f"flow.convert_delay: row {row}: must be a finite number >= 0, got {delay[row]}"
        )
    if "request_id" in flow.schema:
        ids = flow["request_id"].cast(pl.String)
        # Counting distinct ids is six times cheaper than marking duplicates: mark them only
        # when there are some, to name the first.
        row = _first(ids.is_duplicated()) if ids.n_unique() != len(ids) else None
        if row is not None:
            second = int((ids == ids[row]).arg_true()[1])
            raise ValueError(
                f"flow.request_id: row {second}: must be unique, {ids[row]!r} is also in row {row}"
            )


def _route_index(
    flow: pl.DataFrame, scenario: Scenario
) -> tuple[list[int], list[tuple[int, int, str]]]:
    keyed = flow.select(
        pl.col("src_chain").cast(pl.Int64),
        pl.col("dst_chain").cast(pl.Int64),
        pl.col("token"),
    ).with_row_index("row")
    firsts = keyed.group_by("src_chain", "dst_chain", "token").agg(pl.col("row").min())
    bad: list[tuple[int, int, int, str]] = []
    present: set[tuple[int, int, str]] = set()
    for row, src, dst, token in firsts.select("row", "src_chain", "dst_chain", "token").rows():
        if scenario.route(src, dst, token) is None:
            bad.append((row, src, dst, token))
        else:
            present.add((src, dst, token))
    if bad:
        row, src, dst, token = min(bad)
        raise ValueError(
            f"flow: row {row}: route {src}->{dst} {token} is not onboarded in scenario "
            f"{scenario.name!r} (src_chain, dst_chain, token must name one of its routes)"
        )
    routes = [
        (r.src, r.dst, r.token) for r in scenario.routes if (r.src, r.dst, r.token) in present
    ]
    table = pl.DataFrame(
        {
            "src_chain": [r[0] for r in routes],
            "dst_chain": [r[1] for r in routes],
            "token": [r[2] for r in routes],
            "route": list(range(len(routes))),
        },
        schema={
            "src_chain": pl.Int64,
            "dst_chain": pl.Int64,
            "token": pl.String,
            "route": pl.Int64,
        },
    )
    index = keyed.join(table, on=["src_chain", "dst_chain", "token"], how="left").sort("row")
    return index["route"].to_list(), routes


def check_flow(flow: object, scenario: Scenario) -> FlowColumns:
    """Validate ``flow`` against ``scenario`` and return its columns for the replay loop.

    >>> from toolkit.flows import generate_flow
    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default")
    >>> cols = check_flow(generate_flow(s, span_h=0.1, rate_per_s=1.0, seed=3), s)
    >>> len(cols.t) == len(cols.amount) > 0
    True
    >>> check_flow(generate_flow(s, span_h=0.1, seed=3).drop("amount"), s)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: flow: missing column amount (a flow needs t, src_chain, ...)
    """
    if not isinstance(flow, pl.DataFrame):
        raise ValueError(f"flow: must be a polars DataFrame, got {type(flow).__name__}")
    _check_dtypes(flow)
    if flow.height == 0:
        raise ValueError("flow: has no rows; a replay needs at least one request")
    _check_values(flow)
    route, routes = _route_index(flow, scenario)
    if "request_id" in flow.schema:
        ids = pl.col("request_id").cast(pl.String)
    else:
        width = len(str(flow.height - 1))
        ids = pl.format("r{}", pl.int_range(pl.len()).cast(pl.String).str.zfill(width))
    frame = flow.select(
        ids.alias("request_id"),
        pl.col("t").cast(pl.Float64),
        pl.col("src_chain").cast(pl.Int64),
        pl.col("dst_chain").cast(pl.Int64),
        pl.col("token"),
        pl.col("type").cast(pl.String).alias("quote_type"),
        pl.col("amount").cast(pl.Int128),
    )
    return FlowColumns(
        frame=frame,
        t=frame["t"].to_list(),
        route=route,
        routes=routes,
        amount=frame["amount"].to_list(),
        exact_output=(flow["type"].cast(pl.String) == EXACT_OUTPUT).to_list(),
        converts=flow["converts"].to_list(),
        convert_delay=flow["convert_delay"].cast(pl.Float64).to_list(),
    )


def checked_frame(
    frame: pl.DataFrame | None, name: str, columns: tuple[str, ...], generator: str
) -> pl.DataFrame:
    """``frame``'s ``columns`` (a flow schema's, :mod:`toolkit.flows.schema`), sorted by ``t``
    (an empty frame for None); ``generator`` names the function that makes such frames."""
    if frame is None:
        return pl.DataFrame(schema=list(columns))
    if not isinstance(frame, pl.DataFrame):
        raise ValueError(f"{name}: must be a polars DataFrame (see {generator})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)}")
    out = frame.select(columns)
    t = out["t"]
    if not t.dtype.is_numeric():
        raise ArgumentError(f"{name}.t", "seconds from the start (numbers)", str(t.dtype))
    bad = out.filter(pl.col("t").is_null() | ~pl.col("t").cast(pl.Float64).is_finite())
    bad = bad if not bad.is_empty() else out.filter(pl.col("t") < 0)
    if not bad.is_empty():
        raise ArgumentError(f"{name}.t", "finite seconds >= 0", bad["t"][0])
    return out.sort("t")


def _integers(
    frame: pl.DataFrame, name: str, column: str, minimum: int, maximum: int | None, rule: str
) -> None:
    values = frame[column]
    if not values.dtype.is_integer():
        raise ArgumentError(f"{name}.{column}", rule, str(values.dtype))
    low = values.is_null() | (values < minimum)
    bad = values.filter(low if maximum is None else low | (values > maximum))
    if len(bad):
        raise ArgumentError(f"{name}.{column}", rule, bad[0])


def check_swaps(swaps: pl.DataFrame, scenario: Scenario) -> dict[int, Market]:
    """The market of every chain ``swaps`` trades on, each row's tokens checked against it."""
    if swaps.is_empty():
        return {}
    _integers(swaps, "swaps", "chain", 1, None, "a chain id")
    _integers(swaps, "swaps", "amount_in", 1, None, "an integer >= 1 (smallest units)")
    markets: dict[int, Market] = {}
    for chain in swaps["chain"].unique().sort().to_list():
        market = market_for(scenario, chain) if chain in MARKET_CHAINS else None
        if market is None:
            names = ", ".join(f"{c} ({n})" for c, n in sorted(MARKET_CHAINS.items()))
            raise ArgumentError("swaps.chain", f"a chain with an AMM market: {names}", chain)
        markets[chain] = market
    for column in ("token_in", "token_out"):
        for chain, symbol in swaps.select("chain", column).unique().sort("chain", column).rows():
            tokens = markets[chain].tokens
            if symbol not in tokens:
                rule = f"a token of the {MARKET_CHAINS[chain]} market ({', '.join(sorted(tokens))})"
                raise ArgumentError(f"swaps.{column}", rule, symbol)
    same = swaps.filter(pl.col("token_in") == pl.col("token_out"))
    if not same.is_empty():
        raise ArgumentError("swaps.token_out", "another token than token_in", same["token_out"][0])
    return markets


def check_credit(credit: pl.DataFrame, scenario: Scenario) -> str:
    """The credit asset's address; every row of ``credit`` checked."""
    if credit.is_empty():
        return ""
    if scenario.credit is None:
        raise ValueError(f"credit: scenario {scenario.name!r} has no credit product")
    actions = credit["action"]
    bad = actions.filter(actions.is_null() | ~actions.cast(pl.String).is_in(CREDIT_ACTIONS))
    if len(bad):
        raise ArgumentError("credit.action", f"one of {', '.join(CREDIT_ACTIONS)}", bad[0])
    rule = f"the index of a development account, 0 to {DEV_ACCOUNTS - 1}"
    _integers(credit, "credit", "borrower", 0, DEV_ACCOUNTS - 1, rule)
    _integers(credit, "credit", "amount", 1, None, "an integer >= 1 (smallest units)")
    return scenario.credit.asset_address
