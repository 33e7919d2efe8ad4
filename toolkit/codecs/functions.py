"""The one table of contract functions the toolkit builds calls for, and a generic ABI codec.

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
- ``priceFeed.*`` is Chainlink's ``AggregatorV3Interface`` as a reader sees it:
  ``latestRoundData()`` returning ``(roundId, answer, startedAt, updatedAt, answeredInRound)``
  and ``description()``; a feed's ``decimals()`` is ``erc20.decimals`` (the same selector). The
  credit hubs' collateral and credit assets are priced by one such USD feed each on the
  simulated chains (:mod:`toolkit.world.evm.credit.oracle`).
- ``erc20.*`` is the ERC-20 standard (OpenZeppelin names: ``transferFrom(from, to, amount)``);
  ``weth.deposit()``/``weth.withdraw(amount)`` are WETH9's wrapping functions. Entries may
  declare what they return (``returns (uint256)``) and whether they are ``view`` or
  ``payable``: the simulated chains (:mod:`toolkit.world.evm`) encode their answers with
  :func:`encode_result`, and :func:`abi` gives the JSON ABI a web3 contract object takes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import eth_abi
from eth_abi.exceptions import DecodingError, EncodingError, InsufficientDataBytes
from eth_utils import function_signature_to_4byte_selector, to_checksum_address

from toolkit.codecs import abi, escrow
from toolkit.codecs.errors import InvalidValue

__all__ = [
    "FUNCTIONS",
    "SIGNATURES",
    "DecodedCall",
    "Function",
    "decode_call",
    "decode_result",
    "encode_call",
    "encode_result",
    "json_abi",
]

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

    @property
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
    | {fn.key: fn for fn in _AMM}
)
"""Every known function by key."""

SIGNATURES: Mapping[str, str] = MappingProxyType(
    {key: fn.signature for key, fn in FUNCTIONS.items()}
)
"""Key → canonical signature (what the selector is the keccak of)."""

_BY_SELECTOR: dict[str, Function] = {}
for _fn in FUNCTIONS.values():
    if _fn.selector in _BY_SELECTOR:  # pragma: no cover - guards the table above
        raise RuntimeError(f"{_fn.key} and {_BY_SELECTOR[_fn.selector].key} share a selector")
    _BY_SELECTOR[_fn.selector] = _fn


@dataclass(frozen=True)
class DecodedCall:
    """A decoded call: the function's table key and its arguments by parameter name.

    Addresses are checksummed, integers are ``int``, ``bytes`` parameters are ``bytes``; the
    argument of ``escrow.open`` is ``order`` (a :class:`~toolkit.codecs.escrow.StandardOrder`).
    """

    function: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> tuple[Any, ...]:
        """The arguments in declaration order."""
        return tuple(self.args.values())


def _lookup(function: str) -> Function:
    if not isinstance(function, str) or function not in FUNCTIONS:
        known = ", ".join(sorted(FUNCTIONS))
        raise InvalidValue("function", f"unknown function {function!r}; known: {known}")
    return FUNCTIONS[function]


def _normalise(type_: str, value: Any, name: str) -> Any:
    if type_ == "address":
        return abi.address(value, name)
    if type_ == "bytes":
        return abi.data(value, name)
    if type_ == "bytes32":
        if isinstance(value, bytes) and len(value) == 32:
            return value
        return bytes.fromhex(abi.bytes32(value, name)[2:])
    if not type_.startswith("uint"):
        return value  # a struct (tuple) or array: eth-abi checks it while encoding
    return abi.uint(value, int(type_[4:]), name)


def encode_call(function: str, *args: Any) -> str:
    """ABI-encode a call of a known function as ``0x`` hex calldata.

    Example:
        >>> encode_call("erc20.approve", "0x000025c3226C00B2Cdc200005a1600509f4e00C0", 5)[:10]
        '0x095ea7b3'
    """
    fn = _lookup(function)
    if function == "escrow.open":
        if len(args) != 1:
            raise InvalidValue("args", f"escrow.open takes 1 argument (order), got {len(args)}")
        return escrow.encode_open(args[0])
    if len(args) != len(fn.params):
        names = ", ".join(n for _, n in fn.params)
        raise InvalidValue(
            "args", f"{function} takes {len(fn.params)} arguments ({names}), got {len(args)}"
        )
    values = [_normalise(t, v, n) for (t, n), v in zip(fn.params, args, strict=True)]
    selector = function_signature_to_4byte_selector(fn.signature)
    try:
        body = eth_abi.encode(fn.types, values)
    except (EncodingError, TypeError, ValueError) as exc:
        raise InvalidValue("args", f"cannot encode {function} ({exc})") from exc
    return abi.hexstr(selector + body)


#: ABI types of one 32-byte word: eth_abi's strict decoder already refuses their non-canonical
#: encodings (dirty padding, a bool other than 0 or 1), so only the length is left to check.
_STATIC = re.compile(r"(address|bool|u?int\d*|bytes([1-9]|[12]\d|3[012]))")


def decode_call(data: str | bytes, *, checksum: bool = True) -> DecodedCall:
    """Decode calldata of a known function; unknown selectors and malformed data are rejected.

    Addresses come back EIP-55 checksummed, or lowercase with ``checksum=False`` (the simulated
    contracts' hot path: a checksum is a keccak per address).

    Example:
        >>> call = decode_call(encode_call("creditHub.setOperator", "0x" + "ab" * 20))
        >>> call.function, call.args
        ('creditHub.setOperator', {'operator': '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB'})
    """
    raw = abi.data(data, "data")
    if len(raw) < 4:
        raise InvalidValue("data", "too short to hold a function selector")
    selector = abi.hexstr(raw[:4])
    fn = _BY_SELECTOR.get(selector)
    if fn is None:
        raise InvalidValue("data", f"unknown function selector {selector}")
    if fn.key == "escrow.open":
        try:
            order = escrow.decode_open(raw)
        except InvalidValue as exc:
            raise InvalidValue("data", exc.rule) from exc
        return DecodedCall(fn.key, {"order": order})
    try:
        decoded = eth_abi.decode(fn.types, raw[4:])
    except InsufficientDataBytes as exc:
        raise InvalidValue("data", f"truncated {fn.key} calldata ({exc})") from exc
    except (DecodingError, OverflowError, ValueError) as exc:
        raise InvalidValue("data", f"malformed {fn.key} calldata ({exc})") from exc
    types = fn.types
    if all(_STATIC.fullmatch(t) for t in types):
        canonical = len(raw) == 4 + 32 * len(types)
    else:  # offsets and lengths of dynamic values: only a re-encoding tells
        canonical = eth_abi.encode(types, list(decoded)) == raw[4:]
    if not canonical:
        raise InvalidValue("data", f"not the canonical ABI encoding of {fn.key}")
    if not checksum:
        return DecodedCall(fn.key, dict(zip((n for _, n in fn.params), decoded, strict=True)))
    args = {
        name: str(to_checksum_address(value)) if type_ == "address" else value
        for (type_, name), value in zip(fn.params, decoded, strict=True)
    }
    return DecodedCall(fn.key, args)


def encode_result(function: str, *values: Any) -> bytes:
    """ABI-encode what a known function returns (its declared outputs).

    >>> encode_result("erc20.balanceOf", 5).hex()[-4:]
    '0005'
    """
    fn = _lookup(function)
    return eth_abi.encode(list(fn.outputs), list(values))


def decode_result(function: str, data: str | bytes) -> tuple[Any, ...]:
    """Decode what a known function returned.

    >>> decode_result("erc20.symbol", encode_result("erc20.symbol", "USDC"))
    ('USDC',)
    """
    fn = _lookup(function)
    raw = abi.data(data, "data")
    try:
        return tuple(eth_abi.decode(list(fn.outputs), raw))
    except (DecodingError, InsufficientDataBytes, OverflowError, ValueError) as exc:
        raise InvalidValue("data", f"malformed {fn.key} result ({exc})") from exc


def json_abi(*families: str) -> list[dict[str, Any]]:
    """The JSON ABI of every function of the given families (e.g. ``"erc20"``, ``"weth"``).

    >>> [entry["name"] for entry in json_abi("weth")]
    ['deposit', 'withdraw']
    """
    return [
        fn.abi()
        for key, fn in FUNCTIONS.items()
        if key.partition(".")[0] in families and not any(t.startswith("(") for t in fn.types)
    ]
