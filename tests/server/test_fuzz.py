"""Fuzzing the request surface: never a 500, and every 400 names the field it is about."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.clock import VirtualClock
from toolkit.scenario import Scenario
from toolkit.server import create_app

from .conftest import AUTH, USDC, USER, Client, rfq_params

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TEXT = st.text(max_size=60)
NUMBERS = st.integers(min_value=-(10**90), max_value=10**90).map(str)
HEXES = st.from_regex(r"0x[0-9a-fA-F]{0,70}", fullmatch=True)
PLAUSIBLE = st.sampled_from(
    [
        "eip155:1",
        "eip155:8453",
        "eip155:0",
        "eip155:01",
        "cosmos:hub",
        USDC[1],
        USDC[8453],
        USER,
        "0x" + "00" * 20,
        "ExactInput",
        "ExactOutput",
        "true",
        "1000000000",
        "0",
        "",
    ]
)
VALUES = st.one_of(TEXT, NUMBERS, HEXES, PLAUSIBLE)


@pytest.fixture
def fuzz_client(scenario: Scenario) -> Iterator[Client]:
    # One app for every example: state piles up (reservations), which is part of the point.
    client = Client(create_app(scenario, clock=VirtualClock(1_760_000_000.0)))
    try:
        yield client
    finally:
        client.close()


def mutated(base: dict[str, str], names: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """Valid parameters with some removed, some replaced, and some unknown ones added."""
    return st.tuples(
        st.sets(st.sampled_from(names)),
        st.dictionaries(st.sampled_from(names), VALUES, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=8), VALUES, max_size=2),
    ).map(
        lambda t: {
            **{k: v for k, v in base.items() if k not in t[0]},
            **t[1],
            **t[2],
        }
    )


def assert_names_a_field(status: int, body: dict[str, Any], fields: set[str]) -> None:
    assert status != 500
    if status == 400:
        assert set(body) <= {"error", "debug"}
        error = body["error"]
        assert any(error.startswith(f"{field}: ") for field in fields), error


RFQ_NAMES = ["srcChain", "dstChain", "amount", "token", "user", "srcToken", "receiver", "type"]


@FUZZ
@given(params=mutated(rfq_params(), RFQ_NAMES))
def test_rfq_query(fuzz_client: Client, params: dict[str, str]) -> None:
    answer = fuzz_client.get("/partner-intents/rfq", params=params, headers=AUTH)
    assert answer.status_code in (200, 400, 404)
    assert_names_a_field(answer.status_code, answer.json(), set(RFQ_NAMES) | set(params))


BORROW_NAMES = ["dstChain", "amount", "token", "exclusive", "pool"]
BORROW_BASE = {"dstChain": "eip155:8453", "amount": "100000000", "token": USDC[8453]}


@FUZZ
@given(
    params=mutated(BORROW_BASE, BORROW_NAMES),
    kind=st.sampled_from(["ExactInput", "ExactOutput", "exactinput", ""]),
    src=st.sampled_from(["eip155:1", "eip155:10", "eip155:999", "1"]),
)
def test_borrow_quote_query(
    fuzz_client: Client, params: dict[str, str], kind: str, src: str
) -> None:
    path = f"/liquidity/v2/chain/{src}/protocol/partner-escrow/type/{kind}/quote"
    answer = fuzz_client.get(path, params=params, headers=AUTH)
    assert answer.status_code in (200, 400, 404)
    if answer.status_code == 404 and kind == "":
        return  # an empty path segment is another path: no such endpoint
    fields = set(BORROW_NAMES) | set(params) | {"srcChain", "type"}
    assert_names_a_field(answer.status_code, answer.json(), fields)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**80), max_value=10**80) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
QUOTE_PATHS = [
    ("preview",),
    ("preview", "inputs"),
    ("preview", "inputs", 0),
    ("preview", "inputs", 0, "amount"),
    ("preview", "inputs", 0, "user"),
    ("preview", "inputs", 0, "asset"),
    ("preview", "outputs"),
    ("preview", "outputs", 0, "amount"),
    ("preview", "outputs", 0, "receiver"),
    ("preview", "outputs", 0, "asset"),
    ("quoteId",),
    ("validUntil",),
    ("eta",),
    ("partialFill",),
    ("metadata",),
    ("metadata", "exclusiveFor"),
    ("order",),
    ("order", "nonce"),
    ("order", "fillDeadline"),
    ("order", "expires"),
    ("order", "inputOracle"),
]
QUOTE_FIELDS = re.compile(
    r"^(body|preview|quoteId|validUntil|eta|provider|failureHandling|partialFill|metadata"
    r"|order|transactionRequest)([.\[][^:]*)?: "
)


def _apply(quote: dict[str, Any], edits: list[tuple[tuple[Any, ...], Any]]) -> Any:
    body = copy.deepcopy(quote)
    for path, value in edits:
        target: Any = body
        for key in path[:-1]:
            if isinstance(target, dict):
                target = target.setdefault(key, {})
            elif isinstance(target, list) and isinstance(key, int) and key < len(target):
                target = target[key]
            else:
                break
        else:
            last = path[-1]
            if isinstance(target, dict):
                if value is _DELETE:
                    target.pop(last, None)
                else:
                    target[last] = value
            elif isinstance(target, list) and isinstance(last, int) and last < len(target):
                if value is _DELETE:
                    del target[last]
                else:
                    target[last] = value
    return body


_DELETE = object()
EDITS = st.lists(
    st.tuples(st.sampled_from(QUOTE_PATHS), st.one_of(st.just(_DELETE), JSON, NUMBERS, HEXES)),
    min_size=1,
    max_size=3,
)


@FUZZ
@given(edits=EDITS)
def test_transaction_body(fuzz_client: Client, edits: list[tuple[tuple[Any, ...], Any]]) -> None:
    quote = fuzz_client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()[
        "quotes"
    ][0]
    answer = fuzz_client.post("/partner-intents/transaction", json=_apply(quote, edits))
    assert answer.status_code in (200, 400)
    if answer.status_code == 400:
        assert QUOTE_FIELDS.match(answer.json()["error"]), answer.json()


@FUZZ
@given(body=st.one_of(JSON, st.binary(max_size=80)))
def test_transaction_arbitrary_body(fuzz_client: Client, body: Any) -> None:
    if isinstance(body, bytes):
        answer = fuzz_client.post(
            "/partner-intents/transaction",
            content=body,
            headers={"content-type": "application/json"},
        )
    else:
        answer = fuzz_client.post("/partner-intents/transaction", json=body)
    assert answer.status_code == 400
    assert QUOTE_FIELDS.match(answer.json()["error"]), answer.json()
