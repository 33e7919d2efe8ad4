"""``GET /swap/{network}/v1/route`` end to end: the answer validates against the vendor's swap
document, and its calldata, sent with web3.py to the simulated chain, delivers ``amountOut``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from web3 import Web3
from web3.types import Wei

from tests.reference import reference_document
from toolkit.client import EmbeddedService, chain_provider
from toolkit.clock import VirtualClock
from toolkit.codecs import events, functions
from toolkit.codecs import universal_router as ur
from toolkit.world.evm.markets import market_for
from toolkit.world.swap import NATIVE

SWAP = reference_document("swap-openapi.yaml")
ABI = functions.json_abi("erc20", "weth") + events.json_abi("erc20", "v3pool", "v2pair")
BASIC = ("analyst", "demo-key")


def _valid(name: str, instance: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{name}", "components": SWAP["components"]}
    jsonschema.Draft202012Validator(schema).validate(instance)


class Node:
    def __init__(self) -> None:
        self.clock = VirtualClock()
        self.service = EmbeddedService("default", env={}, clock=self.clock)
        self.http = httpx.Client(
            transport=self.service.sync_transport(), base_url="http://embedded"
        )
        inner = self.service.app.state.service  # type: ignore[attr-defined]
        self.markets = {cid: market_for(inner.scenario, cid) for cid in (1, 8453)}

    def token(self, chain_id: int, symbol: str) -> str:
        if symbol == "ETH":
            return NATIVE
        market = self.markets[chain_id]
        assert market is not None
        return market.tokens[symbol].address

    def route(self, network: str = "mainnet", auth: Any = BASIC, **params: Any) -> httpx.Response:
        return self.http.get(f"/swap/{network}/v1/route", params=params, auth=auth)

    def web3(self, chain_id: int) -> Web3:
        return Web3(chain_provider(self.service, chain_id))

    def close(self) -> None:
        self.http.close()
        self.service.close()


@pytest.fixture(scope="module")
def node() -> Iterator[Node]:
    made = Node()
    try:
        yield made
    finally:
        made.close()


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    _valid("RouteV1Response", body)
    assert response.headers["Request-ID"] == body["requestId"]
    return body


def _send(w3: Web3, sender: str, body: dict[str, Any], value: int = 0) -> Any:
    tx_hash = w3.eth.send_transaction(
        {
            "from": Web3.to_checksum_address(sender),
            "to": body["target"],
            "data": body["callData"],
            "gas": body["gasLimit"],
            "value": Wei(value),
        }
    )
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    return w3.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)


def _approve(w3: Web3, sender: str, token: str, deal: int = 0) -> None:
    if deal:
        w3.provider.make_request("anvil_dealERC20", [sender, token, hex(deal)])  # type: ignore[arg-type]
    contract = w3.eth.contract(address=Web3.to_checksum_address(token), abi=ABI)
    contract.functions.approve(ur.UNIVERSAL_ROUTER, 2**256 - 1).transact({"from": sender})
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("token_in", "token_out", "amount"),
    [
        ("USDC", "WETH", 50_000_000 * 10**6),  # deep enough to split across pools
        ("USDC", "TAILB", 2_000 * 10**6),  # three hops: USDC > WETH > WBTC > TAILB
        ("USDT", "TAILA", 500 * 10**6),  # a V3 hop then a V2 hop
    ],
)
def test_calldata_delivers_amount_out_exactly(
    node: Node, token_in: str, token_out: str, amount: int
) -> None:
    w3 = node.web3(1)
    sender = w3.eth.accounts[2]  # type: ignore[misc]  # web3 types accounts as a 1-tuple
    tin, tout = node.token(1, token_in), node.token(1, token_out)
    _approve(w3, sender, tin, deal=amount)
    body = _ok(node.route(amountIn=str(amount), tokenIn=tin, tokenOut=tout, slippageBps="30"))
    amount_out = int(body["amountOut"])
    assert int(body["minAmountOut"]) == amount_out * 9970 // 10000
    assert body["gasLimit"] == body["gasUsed"] * 13 // 10
    assert body["target"] == ur.UNIVERSAL_ROUTER
    commands, _ = ur.decode_execute(body["callData"])
    out = w3.eth.contract(address=Web3.to_checksum_address(tout), abi=ABI)
    before = out.functions.balanceOf(sender).call()
    receipt = _send(w3, sender, body)
    assert receipt["status"] == 1
    assert receipt["gasUsed"] == body["gasUsed"]
    assert out.functions.balanceOf(sender).call() - before == amount_out
    swaps = [
        log
        for log in receipt["logs"]
        if log["topics"][0].hex().endswith(events.EVENTS["v3pool.Swap"].topic0[2:])
        or log["topics"][0].hex().endswith(events.EVENTS["v2pair.Swap"].topic0[2:])
    ]
    hops = sum(
        len(c.path) // 2 if isinstance(c, ur.V3SwapExactIn) else len(c.path) - 1
        for c in commands
        if isinstance(c, ur.V3SwapExactIn | ur.V2SwapExactIn)
    )
    assert len(swaps) == hops
    if token_out == "TAILB":
        assert hops == 3
    if amount == 50_000_000 * 10**6:
        assert sum(isinstance(c, ur.V3SwapExactIn | ur.V2SwapExactIn) for c in commands) >= 2


def test_native_in_and_out_on_base(node: Node) -> None:
    w3 = node.web3(8453)
    sender = w3.eth.accounts[3]  # type: ignore[misc]  # web3 types accounts as a 1-tuple
    usdc = node.token(8453, "USDC")
    body = _ok(node.route("base", amountIn=str(2 * 10**18), tokenIn=NATIVE, tokenOut=usdc))
    out = w3.eth.contract(address=Web3.to_checksum_address(usdc), abi=ABI)
    before = out.functions.balanceOf(sender).call()
    receipt = _send(w3, sender, body, value=2 * 10**18)
    assert receipt["status"] == 1
    assert out.functions.balanceOf(sender).call() - before == int(body["amountOut"])

    _approve(w3, sender, usdc)
    body = _ok(node.route("base", amountIn=str(1_000 * 10**6), tokenIn=usdc, tokenOut=NATIVE))
    native_before = w3.eth.get_balance(sender)
    receipt = _send(w3, sender, body)
    assert receipt["status"] == 1
    fee = receipt["gasUsed"] * receipt["effectiveGasPrice"]
    assert w3.eth.get_balance(sender) - native_before + fee == int(body["amountOut"])


def test_a_route_reverts_when_the_pool_moved_past_its_slippage(node: Node) -> None:
    w3 = node.web3(1)
    alice, bob = w3.eth.accounts[4], w3.eth.accounts[5]  # type: ignore[misc]  # a 1-tuple to web3
    usdc, weth = node.token(1, "USDC"), node.token(1, "WETH")
    _approve(w3, alice, usdc)
    _approve(w3, bob, usdc, deal=20_000_000 * 10**6)
    params = {"amountIn": str(100_000 * 10**6), "tokenIn": usdc, "tokenOut": weth}
    stale = _ok(node.route(slippageBps="0", **params))
    mover = _ok(node.route(**{**params, "amountIn": str(20_000_000 * 10**6)}))
    assert _send(w3, bob, mover)["status"] == 1
    receipt = _send(w3, alice, stale)
    assert receipt["status"] == 0  # below minAmountOut: the router reverts, nothing moves
    fresh = _ok(node.route(slippageBps="0", **params))
    assert int(fresh["amountOut"]) < int(stale["amountOut"])
    assert _send(w3, alice, fresh)["status"] == 1


def test_timeout_of_one_millisecond_still_answers(node: Node) -> None:
    usdc, weth = node.token(1, "USDC"), node.token(1, "WETH")
    _ok(node.route(amountIn=str(10**13), tokenIn=usdc, tokenOut=weth, timeout="1"))


def _error(response: httpx.Response, status: int, mentions: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    _valid("Error", body)
    assert body["code"] == status
    assert response.headers["Request-ID"] == body["requestId"]
    assert mentions in body["error"]


def test_credentials(node: Node) -> None:
    usdc, weth = node.token(1, "USDC"), node.token(1, "WETH")
    params = {"amountIn": "1000000", "tokenIn": usdc, "tokenOut": weth}
    _error(node.route(auth=None, **params), 401, "authorization")
    _error(node.route(auth=("analyst", "wrong"), **params), 401, "unknown API key")
    _error(node.route(auth=("", "demo-key"), **params), 401, "authorization")
    _error(node.route("polygon", auth=None, **params), 401, "authorization")


@pytest.mark.parametrize(
    ("network", "change", "mentions"),
    [
        ("polygon", {}, "network"),
        ("mainnet", {"amountIn": "1e6"}, "amountIn"),
        ("mainnet", {"amountIn": "0"}, "amountIn"),
        ("mainnet", {"amountIn": None}, "amountIn"),
        ("mainnet", {"tokenIn": "0x1234"}, "tokenIn"),
        ("mainnet", {"tokenOut": None}, "tokenOut"),
        ("mainnet", {"slippageBps": "10001"}, "slippageBps"),
        ("mainnet", {"slippageBps": "0.5"}, "slippageBps"),
        ("mainnet", {"timeout": "0"}, "timeout"),
        ("mainnet", {"tokenOut": "USDC"}, "tokenOut"),
    ],
)
def test_bad_parameters_are_400(
    node: Node, network: str, change: dict[str, str | None], mentions: str
) -> None:
    usdc, weth = node.token(1, "USDC"), node.token(1, "WETH")
    params: dict[str, str | None] = {"amountIn": "1000000", "tokenIn": usdc, "tokenOut": weth}
    params.update(change)
    if params["tokenOut"] == "USDC":
        params["tokenOut"] = usdc
    sent = {k: v for k, v in params.items() if v is not None}
    _error(node.route(network, **sent), 400, mentions)


def test_no_path_and_too_large_are_404(node: Node) -> None:
    usdc = node.token(1, "USDC")
    stranger = "0x" + "77" * 20
    _error(node.route(amountIn="1000000", tokenIn=usdc, tokenOut=stranger), 404, "no path")
    tail = node.token(1, "TAILA")
    huge = str(10**12 * 10**6)
    _error(node.route(amountIn=huge, tokenIn=usdc, tokenOut=tail), 404, "absorb")
