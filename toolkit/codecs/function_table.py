"""The one table of contract functions the toolkit builds calls for (:data:`FUNCTIONS`).

Keys are ``<family>.<function>``; the family says which contract kind the call is meant for
(the selector depends only on the canonical signature). Assumptions worth knowing:

- ``vault.redeem`` is ERC-4626 ``redeem(shares, receiver, owner)``. ERC-7540 asynchronous vaults
  claim a fulfilled redeem request with the very same function (third argument = controller),
  so one entry serves both; we use it rather than a bespoke ``claim(requestId, ...)`` because it
  is the standard any ERC-7540 vault implements.
- ``collateralEscrow.deposit/withdraw(address token, uint256 amount)`` are assumed signatures:
  the credit protocol's escrow sources are not public, only its call shapes.
- ``creditHub.addCreditReceiver/removeCreditReceiver`` are documented on the hub in some places
  and on the operator in others; the selector is the same either way.
- ``creditHub.collateralOf(borrower, token)`` is our own neutral view of what the hub has
  booked as ``borrower``'s locked ``token`` (smallest units, remote chains' collateral
  included): the real hub's read functions are not public.
- ``router.swap`` is the swap router of the embedded service (our own neutral ABI).
- ``pool.*`` are the read-only views of the embedded service's liquidity pools on its simulated
  chains (our own neutral ABI): ``balance``, ``reserved``, ``outstanding``, ``available`` of a
  token, as the reservation engine has them.
- ``escrow.open`` is the partner-escrow ``open(StandardOrder)``; it is encoded and decoded by
  :mod:`toolkit.codecs.escrow` and its single argument is a :class:`StandardOrder`.
- ``inputOracle.isProven``/``efficientRequireProven`` are OIF's ``BaseInputOracle`` views (the
  escrow's ``finalise`` asks the second); ``inputOracle.receiveMessage(chainId, emitter, topics,
  data)`` is our own: the simulated oracle takes the filled event itself from the attestation
  messenger, where Polymer's ``receiveMessage(bytes proof)`` takes a proof of it.
- ``bridge.*`` is the simulated rebalancing bridge (our own neutral ABI, a CCTP-style burn on
  ``send`` and mint on ``deliver``).
- ``priceFeed.*`` is Chainlink's ``AggregatorV3Interface`` as a reader sees it:
  ``latestRoundData()`` returning ``(roundId, answer, startedAt, updatedAt, answeredInRound)``
  and ``description()``; a feed's ``decimals()`` is ``erc20.decimals`` (the same selector). The
  credit hubs' collateral and credit assets are priced by one such USD feed each on the
  simulated chains (:mod:`toolkit.world.evm.credit.oracle`).
- ``erc20.*`` is the ERC-20 standard (OpenZeppelin names: ``transferFrom(from, to, amount)``);
  ``weth.deposit()``/``weth.withdraw(amount)`` are WETH9's wrapping functions. Entries may
  declare what they return (``returns (uint256)``) and whether they are ``view`` or
  ``payable``: the simulated chains (:mod:`toolkit.world.evm`) encode their answers with
  :func:`~toolkit.codecs.functions.encode_result`, and
  :func:`~toolkit.codecs.functions.json_abi` gives the JSON ABI a web3 contract object takes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any

from eth_utils import function_signature_to_4byte_selector

from toolkit.codecs import abi, escrow

__all__ = ["FUNCTIONS", "SIGNATURES", "Function"]

_PARAM_RE = re.compile(
    r"^(address|bytes|uint(8|16|32|48|64|128|160|256)) ([A-Za-z_][A-Za-z0-9_]*)$"
)
_OUTPUT_RE = re.compile(r"^(address|bool|bytes|string|uint(8|16|32|48|64|128|160|256))$")
_MUTABILITY = ("nonpayable", "payable", "view")


@dataclass(frozen=True)
class Function:
    """One contract function: its table key, Solidity name and named parameters."""

    key: str
    name: str
    params: tuple[tuple[str, str], ...]  # (type, name)
    outputs: tuple[str, ...] = ()
    mutability: str = "nonpayable"

    @property
    def signature(self) -> str:
        """The canonical signature, e.g. ``approve(address,uint256)``."""
        return f"{self.name}({','.join(t for t, _ in self.params)})"

    @cached_property  # a keccak: encode_call asks for it on every call
    def selector(self) -> str:
        """The 4-byte selector as ``0x`` hex."""
        return abi.hexstr(function_signature_to_4byte_selector(self.signature))

    @property
    def types(self) -> list[str]:
        return [t for t, _ in self.params]

    def abi(self) -> dict[str, Any]:
        """The function's JSON ABI entry (escrow.open's tuple argument is not spelled out).

        >>> FUNCTIONS["erc20.balanceOf"].abi()["outputs"]
        [{'name': '', 'type': 'uint256'}]
        """
        return {
            "type": "function",
            "name": self.name,
            "inputs": [{"name": n, "type": t} for t, n in self.params],
            "outputs": [{"name": "", "type": t} for t in self.outputs],
            "stateMutability": self.mutability,
        }


def _function(key: str, declaration: str) -> Function:
    mutability = "nonpayable"
    for word in ("view", "payable"):
        if f" {word}" in declaration:
            mutability = word
            declaration = declaration.replace(f" {word}", "")
    declaration, _, returns = declaration.partition(" returns ")
    outputs = tuple(filter(None, (o.strip() for o in returns.strip("()").split(","))))
    for output in outputs:
        if _OUTPUT_RE.match(output) is None:  # pragma: no cover - guards the table below
            raise ValueError(f"{key}: cannot parse output {output!r}")
    name, _, rest = declaration.partition("(")
    params: list[tuple[str, str]] = []
    inner = rest.rstrip(")")
    for part in filter(None, (p.strip() for p in inner.split(","))):
        match = _PARAM_RE.match(part)
        if match is None:  # pragma: no cover - guards the table below
            raise ValueError(f"{key}: cannot parse parameter {part!r}")
        params.append((match.group(1), match.group(3)))
    return Function(key, name, tuple(params), outputs, mutability)


_DECLARATIONS = {
    "erc20.approve": "approve(address spender,uint256 amount) returns (bool)",
    "erc20.transfer": "transfer(address to,uint256 amount) returns (bool)",
    "erc20.transferFrom": "transferFrom(address from,address to,uint256 amount) returns (bool)",
    "erc20.balanceOf": "balanceOf(address account) view returns (uint256)",
    "erc20.allowance": "allowance(address owner,address spender) view returns (uint256)",
    "erc20.totalSupply": "totalSupply() view returns (uint256)",
    "erc20.decimals": "decimals() view returns (uint8)",
    "erc20.symbol": "symbol() view returns (string)",
    "erc20.name": "name() view returns (string)",
    "weth.deposit": "deposit() payable",
    "weth.withdraw": "withdraw(uint256 amount)",
    "vault.deposit": "deposit(uint256 assets,address receiver)",
    "vault.redeem": "redeem(uint256 shares,address receiver,address owner)",
    "vault.requestRedeem": "requestRedeem(uint256 shares,address controller,address owner)",
    "creditHub.drawCredit": "drawCredit(address borrower,address receiver,uint256 amount)",
    "creditHub.repay": "repay(address borrower,uint256 amount)",
    "creditHub.setOperator": "setOperator(address operator)",
    "creditHub.addCreditReceiver": "addCreditReceiver(address receiver)",
    "creditHub.removeCreditReceiver": "removeCreditReceiver(address receiver)",
    "creditHub.liquidate": "liquidate(address borrower,uint256 amount)",
    "creditHub.collateralOf": (
        "collateralOf(address borrower,address token) view returns (uint256)"
    ),
    "collateralEscrow.deposit": "deposit(address token,uint256 amount)",
    "collateralEscrow.withdraw": "withdraw(address token,uint256 amount)",
    "operator.openCreditLine": "openCreditLine(address borrower,address receiver,uint256 amount)",
    "operator.revoke": "revoke()",
    "operator.finalizeRevoke": "finalizeRevoke()",
    # The service's liquidity pools on the simulated chains: read-only views of the engine's
    # figures for the pool of ``token`` at that address (toolkit.world.evm.pools).
    "pool.balance": "balance(address token) view returns (uint256)",
    "pool.reserved": "reserved(address token) view returns (uint256)",
    "pool.outstanding": "outstanding(address token) view returns (uint256)",
    "pool.available": "available(address token) view returns (uint256)",
    "liquidityPool.borrow": (
        "borrow(address borrowToken,uint256 amount,address target,bytes targetCallData,"
        "uint256 nonce,uint256 deadline,bytes signature)"
    ),
    "router.swap": (
        "swap(address tokenIn,address tokenOut,uint256 amountIn,uint256 minAmountOut,"
        "address recipient)"
    ),
}

_OPEN = Function(key="escrow.open", name="open", params=((escrow.ORDER_TYPE, "order"),))
# The settlers' other functions (research: intents-encoding §1.2). Struct parameters are tuple
# types: callers pass the tuple eth-abi encodes (``StandardOrder.as_abi()``), decoding gives
# tuples back (addresses inside them checksummed as eth-abi returns them).
_SETTLERS = (
    Function("escrow.refund", "refund", ((escrow.ORDER_TYPE, "order"),)),
    Function(
        "escrow.finalise",
        "finalise",
        (
            (escrow.ORDER_TYPE, "order"),
            ("(uint32,bytes32)[]", "solveParams"),
            ("bytes32", "destination"),
            ("bytes", "call"),
        ),
    ),
    Function("escrow.orderStatus", "orderStatus", (("bytes32", "orderId"),), ("uint8",), "view"),
    Function(
        "outputSettler.fill",
        "fill",
        (
            ("bytes32", "orderId"),
            (escrow.OUTPUT_TYPE, "output"),
            ("uint48", "fillDeadline"),
            ("bytes", "fillerData"),
        ),
        ("bytes32",),
        "payable",
    ),
)

# The input oracle on every origin chain (OIF's ``BaseInputOracle`` views; ``receiveMessage`` as
# Polymer's oracle names its entry, here taking the filled event itself: see
# toolkit.world.evm.input_oracle) and the simulated rebalancing bridge (toolkit.world.evm.bridge).
_PROOFS = (
    Function(
        "inputOracle.isProven",
        "isProven",
        (
            ("uint256", "remoteChainId"),
            ("bytes32", "remoteOracle"),
            ("bytes32", "application"),
            ("bytes32", "dataHash"),
        ),
        ("bool",),
        "view",
    ),
    Function(
        "inputOracle.efficientRequireProven",
        "efficientRequireProven",
        (("bytes", "proofSeries"),),
        (),
        "view",
    ),
    Function(
        "inputOracle.receiveMessage",
        "receiveMessage",
        (
            ("uint256", "chainId"),
            ("address", "emitter"),
            ("bytes32[]", "topics"),
            ("bytes", "data"),
        ),
    ),
    Function(
        "bridge.send",
        "send",
        (
            ("address", "token"),
            ("uint256", "amount"),
            ("uint256", "dstChain"),
            ("address", "recipient"),
        ),
        ("uint256",),
    ),
    Function(
        "bridge.deliver",
        "deliver",
        (
            ("uint256", "srcChain"),
            ("uint256", "id"),
            ("address", "token"),
            ("uint256", "amount"),
            ("uint256", "fee"),
            ("address", "recipient"),
        ),
    ),
    Function("bridge.sentTotal", "sentTotal", (("address", "token"),), ("uint256",), "view"),
    Function(
        "bridge.deliveredTotal", "deliveredTotal", (("address", "token"),), ("uint256",), "view"
    ),
)

# The AMM pools and the Uniswap Universal Router (v1.2) the simulated chains run: the getters
# of ``UniswapV2Pair`` and ``UniswapV3Pool`` a pool reader needs (``token0``/``token1`` are one
# entry, ``amm.*``, as both pools share the selector) and ``execute(commands, inputs, deadline)``.
_AMM = (
    Function("amm.token0", "token0", (), ("address",), "view"),
    Function("amm.token1", "token1", (), ("address",), "view"),
    Function("v2pair.getReserves", "getReserves", (), ("uint112", "uint112", "uint32"), "view"),
    Function(
        "v3pool.slot0",
        "slot0",
        (),
        ("uint160", "int24", "uint16", "uint16", "uint16", "uint8", "bool"),
        "view",
    ),
    Function("v3pool.liquidity", "liquidity", (), ("uint128",), "view"),
    Function("v3pool.fee", "fee", (), ("uint24",), "view"),
    Function("v3pool.tickSpacing", "tickSpacing", (), ("int24",), "view"),
    Function(
        "v3pool.ticks",
        "ticks",
        (("int24", "tick"),),
        ("uint128", "int128", "uint256", "uint256", "int56", "uint160", "uint32", "bool"),
        "view",
    ),
    Function("v3pool.tickBitmap", "tickBitmap", (("int16", "word"),), ("uint256",), "view"),
    Function("v3pool.feeGrowthGlobal0X128", "feeGrowthGlobal0X128", (), ("uint256",), "view"),
    Function("v3pool.feeGrowthGlobal1X128", "feeGrowthGlobal1X128", (), ("uint256",), "view"),
    # Chainlink's AggregatorV3Interface (the feeds the credit hubs price collateral with).
    Function(
        "priceFeed.latestRoundData",
        "latestRoundData",
        (),
        ("uint80", "int256", "uint256", "uint256", "uint80"),
        "view",
    ),
    Function("priceFeed.description", "description", (), ("string",), "view"),
    Function(
        "universalRouter.execute",
        "execute",
        (("bytes", "commands"), ("bytes[]", "inputs"), ("uint256", "deadline")),
        (),
        "payable",
    ),
)

FUNCTIONS: Mapping[str, Function] = MappingProxyType(
    {key: _function(key, decl) for key, decl in _DECLARATIONS.items()}
    | {_OPEN.key: _OPEN}
    | {fn.key: fn for fn in _SETTLERS}
    | {fn.key: fn for fn in _PROOFS}
    | {fn.key: fn for fn in _AMM}
)
"""Every known function by key."""

SIGNATURES: Mapping[str, str] = MappingProxyType(
    {key: fn.signature for key, fn in FUNCTIONS.items()}
)
"""Key → canonical signature (what the selector is the keccak of)."""
