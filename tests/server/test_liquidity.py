"""The liquidity API: tokens, pools, fees, solver, health and the borrow quote."""

from __future__ import annotations

import pytest

from toolkit.resources import (
    BorrowQuoteResponse,
    FeesResponse,
    PoolLiquidityResponse,
    SolverResponse,
    TokensResponse,
    parse,
)
from toolkit.scenario import Scenario

from .conftest import AUTH, USDC, Client, FakeClock, pool, pools, rfq_params

QUOTE = "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactInput/quote"


def borrow_params(**extra: str) -> dict[str, str]:
    params = {"dstChain": "eip155:8453", "amount": "100000000", "token": USDC[8453]}
    params.update(extra)
    return params


def test_health(client: Client) -> None:
    answer = client.get("/health")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok"}


def test_tokens(client: Client) -> None:
    answer = client.get("/liquidity/chain/eip155:8453/tokens", headers=AUTH)
    assert answer.status_code == 200
    tokens = parse(TokensResponse, answer.json()).data
    assert tokens["USDC"].address == USDC[8453]
    assert tokens["USDC"].decimals == 6
    assert tokens["WETH"].decimals == 18


@pytest.mark.parametrize(
    ("chain", "message"),
    [
        ("base", "chainId: must have the form <namespace>:<reference>, e.g. eip155:8453"),
        ("eip155:130", "chainId: eip155:130 is not a chain this service serves"),
    ],
)
def test_tokens_errors(client: Client, chain: str, message: str) -> None:
    answer = client.get(f"/liquidity/chain/{chain}/tokens", headers=AUTH)
    assert answer.status_code == 400
    assert answer.json() == {"error": message}


def test_pool_balance_is_available_now(client: Client, clock: FakeClock) -> None:
    path = "/liquidity/pools/usdc"
    params = {"chain": "eip155:8453", "tokenSymbol": "usdc"}
    first = parse(PoolLiquidityResponse, client.get(path, params=params, headers=AUTH).json())
    assert first.data.address == "0xB58Bb9643884abbbad64FA7eBc874c5481E5c032"
    assert first.data.balance_int == 4_000_000_000_000
    quote = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH).json()
    output = int(quote["quotes"][0]["preview"]["outputs"][0]["amount"])
    held = client.get(path, params=params, headers=AUTH).json()
    assert int(held["data"]["balance"]) == 4_000_000_000_000 - output
    clock.advance(15)
    back = client.get(path, params=params, headers=AUTH).json()
    assert int(back["data"]["balance"]) == 4_000_000_000_000


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        ("/liquidity/pools/big", {"chain": "eip155:8453", "tokenSymbol": "USDC"}, "poolType: "),
        ("/liquidity/pools/usdc", {"tokenSymbol": "USDC"}, "chain: is required"),
        ("/liquidity/pools/usdc", {"chain": "eip155:8453"}, "tokenSymbol: is required"),
        (
            "/liquidity/pools/aave_v2",
            {"chain": "eip155:8453", "tokenSymbol": "USDC"},
            "tokenSymbol: no aave_v2 pool holds USDC on eip155:8453",
        ),
    ],
)
def test_pool_errors(client: Client, path: str, params: dict[str, str], message: str) -> None:
    answer = client.get(path, params=params, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)


FEES = "/liquidity/protocol/partner-escrow/fees"


@pytest.mark.parametrize(
    "tokens", [("USDC", "USDC"), ("usdc", USDC[8453]), (USDC[1].lower(), "USDC")]
)
def test_fees_by_symbol_or_address(client: Client, tokens: tuple[str, str]) -> None:
    params = {
        "srcChain": "eip155:1",
        "dstChain": "eip155:8453",
        "srcToken": tokens[0],
        "dstToken": tokens[1],
    }
    answer = client.get(FEES, params=params, headers=AUTH)
    assert answer.status_code == 200
    tiers = parse(FeesResponse, answer.json()).data
    assert [(t.fee_bps, t.min_amount, t.max_amount) for t in tiers] == [
        (5, 10_000_000, 100_000_000_000),
        (3, 100_000_000_000, 1_000_000_000_000),
    ]


@pytest.mark.parametrize(
    ("src", "dst", "src_token", "dst_token"),
    [
        ("eip155:8453", "eip155:8453", "USDC", "USDC"),
        ("eip155:1", "eip155:8453", "USDC", "WETH"),
        ("eip155:1", "eip155:8453", "DAI", "DAI"),
        ("eip155:1", "eip155:130", "USDC", "USDC"),
    ],
)
def test_fees_for_an_unconfigured_route_are_404(
    client: Client, src: str, dst: str, src_token: str, dst_token: str
) -> None:
    params = {"srcChain": src, "dstChain": dst, "srcToken": src_token, "dstToken": dst_token}
    answer = client.get(FEES, params=params, headers=AUTH)
    assert answer.status_code == 404
    assert answer.json()["error"].startswith("route: none is configured")


def test_fees_errors(client: Client) -> None:
    params = {"srcChain": "eip155:1", "dstChain": "eip155:8453", "srcToken": "USDC"}
    answer = client.get(FEES, params={**params, "dstToken": "0x12"}, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"] == "dstToken: must be a 0x-prefixed 20-byte hex address"
    assert client.get(FEES, params=params, headers=AUTH).json() == {
        "error": "dstToken: is required"
    }
    other = client.get(
        "/liquidity/protocol/other/fees", params={**params, "dstToken": "USDC"}, headers=AUTH
    )
    assert other.status_code == 400
    assert other.json() == {"error": "protocol: must be partner-escrow"}


SOLVER = "/protocol/partner-escrow/solver"


def solver_params(**extra: str) -> dict[str, str]:
    params = {
        "amount": "1000",
        "sourceChainId": "eip155:1",
        "destinationChainId": "eip155:8453",
        "sourceToken": "USDC",
        "destinationToken": "USDC",
    }
    params.update(extra)
    return params


def test_solver_needs_no_key(client: Client, scenario: Scenario) -> None:
    answer = client.get(SOLVER, params=solver_params())
    assert answer.status_code == 200
    solver = parse(SolverResponse, answer.json())
    assert solver.solver == scenario.filler
    assert solver.duration == scenario.eta(1, 8453)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"amount": "lots"}, "amount: must be an integer"),
        ({"destinationToken": "WETH"}, "destinationToken: no route from eip155:1 USDC"),
        ({"sourceChainId": "eip155:8453"}, "destinationToken: no route"),
    ],
)
def test_solver_errors(client: Client, change: dict[str, str], message: str) -> None:
    answer = client.get(SOLVER, params=solver_params(**change))
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)
    other = client.get("/protocol/elsewhere/solver", params=solver_params())
    assert other.json() == {"error": "protocol: must be partner-escrow"}


def test_borrow_quote_reserves_for_quote_duration(
    client: Client, clock: FakeClock, scenario: Scenario
) -> None:
    answer = client.get(QUOTE, params=borrow_params(), headers=AUTH)
    assert answer.status_code == 200
    quote = parse(BorrowQuoteResponse, answer.json()).data
    assert quote.id is not None
    assert quote.quote_duration == scenario.windows.borrow_quote_s == 60
    assert quote.required_input_int == 100_000_000
    assert quote.required_input_int - quote.required_output_int == quote.borrow_cost_int
    assert quote.fee_bps == 5
    assert quote.repayment_chain == 1
    assert quote.repayment_recipient == scenario.filler
    assert quote.liquidity_pool in {p.address for p in scenario.pools_for(8453, "USDC")}
    pool_id = next(
        p.id for p in scenario.pools_for(8453, "USDC") if p.address == quote.liquidity_pool
    )
    assert pool(client, pool_id)["reserved"] == quote.required_output_int
    clock.advance(59.9)
    assert pool(client, pool_id)["reserved"] == quote.required_output_int
    clock.advance(0.1)
    assert pool(client, pool_id)["reserved"] == 0


def test_borrow_quote_exact_output_preferred_pool_and_hub(client: Client) -> None:
    aave = "0x7C255279c098fdF6c3116D2BecD9978002c09f4b"
    path = "/liquidity/v2/chain/eip155:10/protocol/partner-escrow/type/ExactOutput/quote"
    answer = client.get(path, params=borrow_params(pool=aave, exclusive="true"), headers=AUTH)
    assert answer.status_code == 200
    data = answer.json()["data"]
    assert data["requiredOutput"] == "100000000"
    assert data["liquidityPool"] == aave
    assert data["repaymentChain"] == 42161  # not Ethereum: repaid on the hub


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        (QUOTE.replace("ExactInput", "Exactly"), borrow_params(), "type: must be 'ExactInput'"),
        (QUOTE.replace("eip155:1/", "eip155:x/"), borrow_params(), "srcChain: chain id must"),
        (QUOTE.replace("partner-escrow", "other"), borrow_params(), "protocol: must be"),
        (QUOTE, borrow_params(amount="0"), "amount: must be greater than 0"),
        (QUOTE, borrow_params(exclusive="maybe"), "exclusive: must be true or false"),
        (QUOTE, borrow_params(pool="0x" + "99" * 20), "pool: no USDC pool at"),
        (QUOTE, borrow_params(token=USDC[10]), "token: "),
        (QUOTE, borrow_params(amount="5"), "amount: 5 is outside the route's limits"),
    ],
)
def test_borrow_quote_errors(
    client: Client, path: str, params: dict[str, str], message: str
) -> None:
    answer = client.get(path, params=params, headers=AUTH)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)
    assert all(p["reserved"] == 0 for p in pools(client).values())


def test_borrow_quote_without_capacity_is_404(client: Client) -> None:
    # Optimism holds 2.5M USDC: two 900k-USDC borrows fit, the third does not.
    path = "/liquidity/v2/chain/eip155:1/protocol/partner-escrow/type/ExactOutput/quote"
    params = {"dstChain": "eip155:10", "amount": str(900_000 * 10**6), "token": USDC[10]}
    for _ in range(2):
        assert client.get(path, params=params, headers=AUTH).status_code == 200
    full = client.get(path, params=params, headers=AUTH)
    assert full.status_code == 404
    assert "no pool can serve" in full.json()["error"]
