"""Uniswap's own published bytecode on a node: the V2 and V3 factories, pools and periphery.

Everything is deployed from the published artifacts (:mod:`toolkit.testing.artifacts`):
nothing is compiled. The bytecode hashes to the pool init-code hashes the periphery hard-codes
(V2 ``0x96e8ac42…``, V3 ``0xe34f199b…``), so ``SwapRouter``, ``NonfungiblePositionManager`` and
``UniswapV2Router02`` find the pools exactly as on mainnet.

Transactions go out from the node's first unlocked account through ``eth_sendTransaction``
with the gas given (no estimate round trip) and are mined on arrival (automine); positions are
sent as JSON-RPC batches, so hundreds of them take about a second.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eth_abi import decode, encode
from eth_utils import function_signature_to_4byte_selector, keccak, to_checksum_address
from web3 import Web3
from web3.contract import Contract
from web3.types import RPCEndpoint

from toolkit.collect.pool_state import MULTICALL3
from toolkit.testing.artifacts import artifact

__all__ = [
    "MINT_TOPIC",
    "SWAP_TOPIC",
    "SwapEvent",
    "Uniswap",
    "deploy_uniswap",
    "spread_positions",
]

_MAX = 2**256 - 1
_GAS = 8_000_000
_SEND = RPCEndpoint("eth_sendTransaction")
_RECEIPT = RPCEndpoint("eth_getTransactionReceipt")


_MINT = function_signature_to_4byte_selector(
    "mint((address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256))"
)
_MINT_TYPES = "(address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256)"
_EXACT_IN = function_signature_to_4byte_selector(
    "exactInputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
)
_EXACT_OUT = function_signature_to_4byte_selector(
    "exactOutputSingle((address,address,uint24,address,uint256,uint256,uint256,uint160))"
)
_SWAP_TYPES = "(address,address,uint24,address,uint256,uint256,uint256,uint160)"
#: ``UniswapV3Pool``'s ``Swap`` and ``Mint`` event topics.
SWAP_TOPIC = "0x" + keccak(text="Swap(address,address,int256,int256,uint160,uint128,int24)").hex()
MINT_TOPIC = "0x" + keccak(text="Mint(address,address,int24,int24,uint128,uint256,uint256)").hex()


def _call(selector: bytes, types: str, params: tuple[Any, ...]) -> str:
    return "0x" + (selector + encode([types], [params])).hex()


@dataclass(frozen=True)
class SwapEvent:
    """A V3 pool's ``Swap`` event: the amounts (positive: paid in) and the state after."""

    amount0: int
    amount1: int
    sqrt_price_x96: int
    liquidity: int
    tick: int

    @classmethod
    def decode(cls, data: str) -> SwapEvent:
        """From the log's data."""
        values = decode(
            ["int256", "int256", "uint160", "uint128", "int24"], bytes.fromhex(data[2:])
        )
        return cls(*values)


@dataclass
class Uniswap:
    """Uniswap V2 and V3 deployed on one node, driven from ``account`` (unlocked)."""

    w3: Web3
    account: str
    weth: Contract
    v3_factory: Contract
    positions: Contract
    router: Contract
    v2_factory: Contract
    v2_router: Contract
    deployed_at: int
    tokens: list[Contract] = field(default_factory=list)
    nonce: int | None = None
    _tokens_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    _fee_of: dict[str, int] = field(default_factory=dict)
    #: The receipt of the last :meth:`swap` (its ``gasUsed``, its logs).
    last_receipt: dict[str, Any] = field(default_factory=dict)

    # -- sending -------------------------------------------------------------------------

    def _next_nonce(self, count: int) -> int:
        """The next ``count`` nonces of :attr:`account`, kept here: a node answering a batch may
        still be mining it when the next transaction arrives."""
        if self.nonce is None:
            self.nonce = self.w3.eth.get_transaction_count(self.account)  # type: ignore[arg-type]
        first = self.nonce
        self.nonce += count
        return first

    def send(self, to: str | None, data: str, *, value: int = 0, gas: int = _GAS) -> dict[str, Any]:
        """One transaction from :attr:`account`, mined on arrival: its receipt (raises on
        revert)."""
        tx: dict[str, Any] = {
            "from": self.account,
            "data": data,
            "gas": hex(gas),
            "value": hex(value),
            "nonce": hex(self._next_nonce(1)),
        }
        if to is not None:
            tx["to"] = to
        answer = self.w3.provider.make_request(_SEND, [tx])
        if "error" in answer:
            raise RuntimeError(f"eth_sendTransaction: {answer['error']}")
        return self.receipts([answer["result"]])[0]

    def receipts(self, hashes: Sequence[str]) -> list[dict[str, Any]]:
        """The receipts of mined transactions (waiting for the last, which the node may still be
        mining), in one batch; a reverted one raises."""
        if not hashes:
            return []
        batch = [(_RECEIPT, [h]) for h in hashes]
        answers = self.w3.provider.make_batch_request(batch)  # type: ignore[attr-defined]
        if any(answer.get("result") is None for answer in answers):
            self.w3.eth.wait_for_transaction_receipt(hashes[-1], timeout=60, poll_latency=0.005)  # type: ignore[arg-type]
            answers = self.w3.provider.make_batch_request(batch)  # type: ignore[attr-defined]
        receipts = []
        for h, answer in zip(hashes, answers, strict=True):
            receipt = answer.get("result")
            if receipt is None or int(receipt["status"], 16) != 1:
                raise RuntimeError(f"transaction {h} reverted or was not mined")
            receipts.append(receipt)
        return receipts

    def send_many(self, calls: Sequence[tuple[str, str]], *, gas: int = 1_000_000) -> list[str]:
        """Many ``(to, data)`` transactions in one JSON-RPC batch: their hashes (each mined as it
        arrives; a failing one raises)."""
        nonce = self._next_nonce(len(calls))
        batch = [
            (
                _SEND,
                [
                    {
                        "from": self.account,
                        "to": to,
                        "data": data,
                        "gas": hex(gas),
                        "nonce": hex(nonce + i),
                    }
                ],
            )
            for i, (to, data) in enumerate(calls)
        ]
        hashes = []
        # mined together, on demand: a node automining a batch as it arrives can still be
        # mining it when the next request comes (and anvil sometimes left the last one out)
        self._rpc("evm_setAutomine", [False])
        try:
            for answer in self.w3.provider.make_batch_request(batch):  # type: ignore[attr-defined]
                if "error" in answer:
                    raise RuntimeError(f"eth_sendTransaction: {answer['error']}")
                hashes.append(answer["result"])
            target = nonce + len(calls)
            while self.w3.eth.get_transaction_count(self.account) < target:  # type: ignore[arg-type]
                self._rpc("evm_mine", [])  # as many as the block's gas limit takes
        finally:
            self._rpc("evm_setAutomine", [True])
        self.receipts(hashes)
        return hashes

    def _rpc(self, method: str, params: list[Any]) -> Any:
        answer = self.w3.provider.make_request(RPCEndpoint(method), params)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result")

    def deploy(self, name: str, *args: Any, value: int = 0) -> Contract:
        """Deploy a published contract (see :func:`artifact`)."""
        abi, code = artifact(name)
        data = self.w3.eth.contract(abi=abi, bytecode=code).constructor(*args).data_in_transaction
        receipt = self.send(None, data, value=value, gas=12_000_000)
        address = to_checksum_address(receipt["contractAddress"])
        return self.w3.eth.contract(address=address, abi=abi)

    # -- markets -------------------------------------------------------------------------

    def token(self, supply: int = 10**40, *, at: str | None = None) -> Contract:
        """A new test ERC-20 (``@uniswap/v2-core``'s ``ERC20``), the whole supply held by
        :attr:`account` and approved to the periphery. ``at``: put it at that address instead
        (its runtime code set there, the supply written to its storage: ``totalSupply`` is slot
        0, ``balanceOf`` slot 1 of that contract), e.g. a real token's address on a chain id 1
        node, so routes named by real addresses find it."""
        token = self.deploy("ERC20", supply)
        if at is not None:
            address = to_checksum_address(at)
            self._rpc("anvil_setCode", [address, Web3.to_hex(self.w3.eth.get_code(token.address))])
            balance_slot = keccak(encode(["address", "uint256"], [self.account, 1]))
            for slot, value in ((b"\0" * 32, supply), (balance_slot, supply)):
                self._rpc("anvil_setStorageAt", [address, "0x" + slot.hex(), f"0x{value:064x}"])
            token = self.w3.eth.contract(address=address, abi=token.abi)
        self.approve(token)
        self.tokens.append(token)
        return token

    def approve(self, token: Contract) -> None:
        """Let the position manager and both routers spend :attr:`account`'s ``token``."""
        self.send_many(
            [
                (token.address, token.functions.approve(spender, _MAX)._encode_transaction_data())
                for spender in (self.positions.address, self.router.address, self.v2_router.address)
            ]
        )

    def wrap(self, amount: int) -> None:
        """Deposit ``amount`` of the native coin into WETH (the node's balance is topped up)."""
        balance = self.w3.eth.get_balance(self.account)  # type: ignore[arg-type]
        self.w3.provider.make_request(
            RPCEndpoint("anvil_setBalance"), [self.account, hex(balance + amount + 10**21)]
        )
        self.send(
            self.weth.address,
            self.weth.functions.deposit()._encode_transaction_data(),
            value=amount,
        )

    def v3_pool(
        self, token_a: Contract, token_b: Contract, fee: int, sqrt_price_x96: int
    ) -> Contract:
        """Create and initialise the V3 pool of two tokens at ``fee`` (pips)."""
        token0, token1 = sorted((token_a.address, token_b.address), key=str.lower)
        call = self.positions.functions.createAndInitializePoolIfNecessary(
            token0, token1, fee, sqrt_price_x96
        )
        self.send(self.positions.address, call._encode_transaction_data())
        address = self.v3_factory.functions.getPool(token0, token1, fee).call()
        abi, _ = artifact("UniswapV3Pool")
        return self.w3.eth.contract(address=address, abi=abi)

    def mint(self, pool: Contract, ranges: Sequence[tuple[int, ...]]) -> list[str]:
        """Positions ``(tick_lower, tick_upper, amount)`` (or ``(..., amount0, amount1)``)
        through the position manager, where the amounts are the most of each token the
        position may take; the transaction hashes."""
        token0 = pool.functions.token0().call()
        token1 = pool.functions.token1().call()
        fee = pool.functions.fee().call()
        calls = []
        for lower, upper, amount, *second in ranges:
            amount1 = second[0] if second else amount
            params = (token0, token1, fee, lower, upper, amount, amount1, 0, 0, self.account, 2**40)
            calls.append((self.positions.address, _call(_MINT, _MINT_TYPES, params)))
        return self.send_many(calls)

    def swap(
        self,
        pool: Contract,
        zero_for_one: bool,
        amount_specified: int,
        sqrt_price_limit_x96: int = 0,
    ) -> SwapEvent:
        """Swap on ``pool`` through ``SwapRouter``: ``exactInputSingle`` for a positive
        ``amount_specified``, ``exactOutputSingle`` (the whole output or a revert) for a
        negative one; the pool's ``Swap`` event (raises when the transaction reverts)."""
        token0, token1 = self._pool_tokens(pool)
        token_in, token_out = (token0, token1) if zero_for_one else (token1, token0)
        fee = self._pool_fee(pool)
        if amount_specified > 0:
            params = (token_in, token_out, fee, self.account, 2**40, amount_specified, 0,
                      sqrt_price_limit_x96)  # fmt: skip
            data = _call(_EXACT_IN, _SWAP_TYPES, params)
        else:
            params = (token_in, token_out, fee, self.account, 2**40, -amount_specified,
                      2**255, sqrt_price_limit_x96)  # fmt: skip
            data = _call(_EXACT_OUT, _SWAP_TYPES, params)
        receipt = self.send(self.router.address, data, gas=30_000_000)
        self.last_receipt = receipt
        for log in receipt["logs"]:
            if log["address"].lower() == pool.address.lower() and log["topics"][0] == SWAP_TOPIC:
                return SwapEvent.decode(log["data"])
        raise RuntimeError("the swap emitted no Swap event")

    def _pool_tokens(self, pool: Contract) -> tuple[str, str]:
        key = pool.address
        if key not in self._tokens_of:
            self._tokens_of[key] = (pool.functions.token0().call(), pool.functions.token1().call())
        return self._tokens_of[key]

    def _pool_fee(self, pool: Contract) -> int:
        if pool.address not in self._fee_of:
            self._fee_of[pool.address] = int(pool.functions.fee().call())
        return self._fee_of[pool.address]

    def v2_pair(
        self, token_a: Contract, token_b: Contract, amount_a: int, amount_b: int
    ) -> Contract:
        """The V2 pair of two tokens with liquidity added through ``UniswapV2Router02``."""
        call = self.v2_router.functions.addLiquidity(
            token_a.address, token_b.address, amount_a, amount_b, 0, 0, self.account, 2**40
        )
        self.send(self.v2_router.address, call._encode_transaction_data())
        address = self.v2_factory.functions.getPair(token_a.address, token_b.address).call()
        abi, _ = artifact("UniswapV2Pair")
        return self.w3.eth.contract(address=address, abi=abi)


def spread_positions(
    rng: random.Random,
    tick: int,
    tick_spacing: int,
    count: int,
    *,
    width: int = 120,
    amount: int = 10**24,
) -> list[tuple[int, int, int]]:
    """``count`` random ranges within ``width`` tick spacings of ``tick``, most of them with
    distinct edges (so ``2 × count`` initialised ticks or close to it).

    >>> ranges = spread_positions(random.Random(1), 0, 60, 3)
    >>> all(lo < hi and lo % 60 == 0 and hi % 60 == 0 for lo, hi, _ in ranges)
    True
    """
    centre = tick // tick_spacing
    ranges = []
    for _ in range(count):
        lo, hi = sorted(rng.sample(range(centre - width, centre + width + 1), 2))
        ranges.append((lo * tick_spacing, hi * tick_spacing, amount))
    return ranges


def deploy_uniswap(w3: Web3, *, multicall: bool = True) -> Uniswap:
    """Deploy WETH9, the V3 factory, position manager and swap router, the V2 factory and
    Router02 on the node behind ``w3`` from its first account; with ``multicall``, Multicall3 at
    its canonical address too (deployed, then its runtime code set there with
    ``anvil_setCode``)."""
    account = to_checksum_address(w3.eth.accounts[0])
    blank = w3.eth.contract(address=to_checksum_address("0x" + "00" * 20), abi=[])
    shell = Uniswap(w3, account, blank, blank, blank, blank, blank, blank, w3.eth.block_number)
    weth = shell.deploy("WETH9")
    v3_factory = shell.deploy("UniswapV3Factory")
    # the token descriptor only renders tokenURI, which no test reads: any address serves
    positions = shell.deploy(
        "NonfungiblePositionManager", v3_factory.address, weth.address, account
    )
    router = shell.deploy("SwapRouter", v3_factory.address, weth.address)
    v2_factory = shell.deploy("UniswapV2Factory", account)
    v2_router = shell.deploy("UniswapV2Router02", v2_factory.address, weth.address)
    if multicall:
        deployed = shell.deploy("Multicall3")
        code = w3.eth.get_code(deployed.address)
        w3.provider.make_request(RPCEndpoint("anvil_setCode"), [MULTICALL3, Web3.to_hex(code)])
    uniswap = Uniswap(
        w3, account, weth, v3_factory, positions, router, v2_factory, v2_router, shell.deployed_at
    )
    uniswap.nonce = shell.nonce
    uniswap.approve(weth)
    return uniswap
