"""Bad requests get a 400 naming the parameter (404 for what is not supported) and change
nothing; the rules the endpoints check are the ledger's rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.credit_surface.book import Book, account, credit_book, small_book

USDC = 10**6


@pytest.fixture(scope="module")
def book() -> Iterator[Book]:
    with credit_book(small_book(0)) as opened:
        user = account(60)
        usdc = opened.settings.asset_address
        opened.deal(user, usdc, 1_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        opened.run(user, opened.ok(f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc)["calls"])
        opened.run(user, opened.ok(f"{v2}/draw", amount=str(800 * USDC), receiver=user)["calls"])
        yield opened


USER = account(60)
V2 = f"/credit/v2/accounts/{USER}/assets/usdc"


@pytest.mark.parametrize(
    "amount",
    ["１２", "٣", "Infinity", "NaN", "-1", "1.5", "1e6", "", "0", " 1", "0x10", str(2**256)],
)
def test_malformed_amounts_are_400_naming_amount(book: Book, amount: str) -> None:
    before = book.info(USER)
    for path, extra in (
        ("/draw", {"receiver": USER}),
        ("/repay", {}),
        ("/lock", {"earnAsset": book.settings.asset_address}),
    ):
        status, body = book.get(V2 + path, amount=amount, **extra)
        assert status == 400, (path, amount, body)
        assert body["error"].startswith("amount: "), body
    assert book.info(USER) == before


def test_draw_beyond_capacity_says_so(book: Book) -> None:
    status, body = book.get(V2 + "/draw", amount=str(100 * USDC + 1), receiver=USER)
    assert status == 400
    assert body["error"] == (
        "amount: exceeds the remaining credit capacity (100.000000 USDC): the maintenance "
        "health factor would fall below 1"
    )
    assert book.get(V2 + "/draw", amount=str(100 * USDC), receiver=USER)[0] == 200


def test_unlock_that_would_make_the_position_liquidatable(book: Book) -> None:
    usdc = book.settings.asset_address
    # 800 debt needs 800 / 0.925 = 864.86 locked; 135 may go, 136 may not.
    assert book.get(V2 + "/unlock", amount=str(135 * USDC), collateral=usdc)[0] == 200
    status, body = book.get(V2 + "/unlock", amount=str(136 * USDC), collateral=usdc)
    assert status == 400
    assert body["error"] == (
        "amount: unlocking it would make the position liquidatable (health factor below 1)"
    )
    status, body = book.get(V2 + "/unlock", amount=str(1_001 * USDC), collateral=usdc)
    assert (status, body["error"]) == (400, "amount: exceeds the USDC locked (1000000000)")


def test_unsupported_collateral_and_credit_asset(book: Book) -> None:
    stranger = account(99)
    status, body = book.get(V2 + "/lock", amount="1", earnAsset=stranger)
    assert status == 404 and body["error"].startswith("earnAsset: ")
    status, body = book.get(f"/credit/accounts/{USER}/lock", amount="1", asset="DOGE")
    assert (status, body["error"]) == (404, "asset: DOGE is not a supported collateral")
    status, body = book.get(
        f"/credit/v2/accounts/{USER}/assets/USDC/draw", amount="1", receiver=USER
    )
    assert (status, body["error"]) == (400, "asset: must be one of usdc, eure")
    status, body = book.get(f"/credit/collateral/eip155:1/{book.settings.asset_address}")
    assert status == 404


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/credit/accounts/0x12/info", {}, "account"),
        ("/credit/accounts/0x12/draw", {"amount": "1", "receiver": USER}, "account"),
        (f"/credit/accounts/{USER}/draw", {"amount": "1", "receiver": "me"}, "receiver"),
        (f"/credit/accounts/{USER}/draw", {"amount": "1"}, "receiver"),
        (f"/credit/accounts/{USER}/draw", {"amount": "1", "receiver": USER, "fee": "0"}, "fee"),
        (f"{V2}/unlock", {"amount": "1", "asset": USER}, "collateral"),
        (f"{V2}/unlock", {"amount": "1", "collateral": USER, "unwrap": "maybe"}, "unwrap"),
        (
            f"{V2}/operator/auto-topup/enable",
            {"receiver": USER, "threshold": "9", "targetBalance": "8"},
            "targetBalance",
        ),
        (f"{V2}/operator/auto-topup/enable", {"receiver": USER, "threshold": "1"}, "targetBalance"),
        ("/credit/collateral/base/0x12", {}, "chain"),
        (
            "/credit/earn/unwrap",
            {
                "owner": USER,
                "receiver": USER,
                "amount": "1",
                "asset": USER,
                "chain": "eip155:8453",
                "slippage": "NaN",
            },
            "slippage",
        ),
    ],
)
def test_malformed_parameters_name_themselves(
    book: Book, path: str, params: dict[str, str], field: str
) -> None:
    status, body = book.get(path, **params)
    assert status == 400, body
    assert body["error"].startswith(f"{field}: "), body


def test_repay_without_debt_is_400(book: Book) -> None:
    other = account(61)
    status, body = book.get(f"/credit/accounts/{other}/repay", amount="1")
    assert (status, body["error"]) == (400, "amount: the account has no debt to repay")


PATHS = [
    "/credit/protocol",
    "/credit/accounts/{a}/info",
    "/credit/accounts/{a}/operator",
    "/credit/accounts/{a}/lock",
    "/credit/accounts/{a}/unlock",
    "/credit/accounts/{a}/draw",
    "/credit/accounts/{a}/repay",
    "/credit/accounts/{a}/operator/auto-topup/enable",
    "/credit/accounts/{a}/operator/auto-topup/disable",
    "/credit/collateral/{c}/{a}",
    "/credit/v2/assets/{s}/collateral/{c}/{a}",
    "/credit/v2/accounts/{a}/assets/{s}/operator",
    "/credit/v2/accounts/{a}/assets/{s}/lock",
    "/credit/v2/accounts/{a}/assets/{s}/unlock",
    "/credit/v2/accounts/{a}/assets/{s}/draw",
    "/credit/v2/accounts/{a}/assets/{s}/repay",
    "/credit/v2/accounts/{a}/assets/{s}/operator/auto-topup/enable",
    "/credit/v2/accounts/{a}/assets/{s}/operator/auto-topup/update",
    "/credit/v2/accounts/{a}/assets/{s}/operator/auto-topup/disable",
    "/credit/v2/accounts/{a}/assets/{s}/operator/auto-topup/config",
    "/credit/earn/wrap",
    "/credit/earn/unwrap",
    "/credit/earn/claim",
]
NAMES = [
    "amount",
    "asset",
    "earnAsset",
    "earn",
    "collateral",
    "unwrap",
    "receiver",
    "threshold",
    "targetBalance",
    "healthFactor",
    "account",
    "token",
    "chain",
    "owner",
    "slippage",
    "claimRequestId",
]
segment = st.one_of(
    st.sampled_from(
        [USER, "usdc", "eure", "eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"]
    ),
    st.text(
        alphabet=st.characters(blacklist_characters="/?#%", blacklist_categories=["Cs", "Cc"]),
        min_size=1,
        max_size=12,
    ),
)
value = st.one_of(
    st.sampled_from(["1", "0", "1000000", str(2**256), "true", "0.3", USER, "gauntlet-usdc-prime"]),
    st.text(max_size=12),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(PATHS),
    segment,
    segment,
    segment,
    st.dictionaries(st.sampled_from(NAMES), value, max_size=5),
)
def test_no_credit_endpoint_answers_500(
    book: Book, path: str, a: str, s: str, c: str, params: dict[str, str]
) -> None:
    before = book.info(USER)
    status, body = book.get(path.format(a=a, s=s, c=c), **params)
    assert status in (200, 400, 404, 409), (path, a, s, c, params, status, body)
    assert status == 200 or set(body) <= {"error", "debug"}
    assert book.info(USER) == before
