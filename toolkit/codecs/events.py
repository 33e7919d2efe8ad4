"""The one table of contract events the simulated chains emit, and their log codec.

Keys are ``<family>.<Event>``; topic0 is the keccak of the canonical signature, so logs carry
the real topics (``Transfer(address,address,uint256)`` is
``0xddf252ad...``) and any client's ABI decodes them. Indexed parameters go into topics
(addresses left-padded to 32 bytes), the others are ABI-encoded into ``data``.

>>> EVENTS["erc20.Transfer"].topic0[:10]
'0xddf252ad'
>>> topics, data = encode_log("erc20.Transfer", "0x" + "11" * 20, "0x" + "22" * 20, 5)
>>> decode_log(topics, data).args["value"]
5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import eth_abi
from eth_abi.exceptions import DecodingError
from eth_utils import keccak

from toolkit.codecs import abi, plain_abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import ORDER_TYPE, OUTPUT_TYPE

__all__ = ["EVENTS", "DecodedLog", "Event", "decode_log", "encode_log", "json_abi"]


@dataclass(frozen=True)
class Event:
    """One event: table key, name and parameters ``(type, name, indexed)``."""

    key: str
    name: str
    params: tuple[tuple[str, str, bool], ...]

    @property
    def signature(self) -> str:
        """The canonical signature, e.g. ``Transfer(address,address,uint256)``."""
        return f"{self.name}({','.join(t for t, _, _ in self.params)})"

    @cached_property  # every emitted log reads it: one keccak per event, not per log
    def topic0(self) -> str:
        """keccak of the signature as ``0x`` hex."""
        return abi.hexstr(keccak(text=self.signature))

    def abi(self) -> dict[str, Any]:
        """The event's JSON ABI entry."""
        return {
            "type": "event",
            "name": self.name,
            "anonymous": False,
            "inputs": [{"name": n, "type": t, "indexed": i} for t, n, i in self.params],
        }


def _event(key: str, declaration: str) -> Event:
    name, _, rest = declaration.partition("(")
    params = []
    for part in filter(None, (p.strip() for p in rest.rstrip(")").split(","))):
        words = part.split()
        params.append((words[0], words[-1], "indexed" in words))
    return Event(key, name, tuple(params))


_DECLARATIONS = {
    "erc20.Transfer": "Transfer(address indexed from,address indexed to,uint256 value)",
    "erc20.Approval": "Approval(address indexed owner,address indexed spender,uint256 value)",
    "weth.Deposit": "Deposit(address indexed dst,uint256 wad)",
    "weth.Withdrawal": "Withdrawal(address indexed src,uint256 wad)",
    # UniswapV2Pair and UniswapV3Pool.
    "v2pair.Swap": (
        "Swap(address indexed sender,uint256 amount0In,uint256 amount1In,uint256 amount0Out,"
        "uint256 amount1Out,address indexed to)"
    ),
    "v2pair.Sync": "Sync(uint112 reserve0,uint112 reserve1)",
    "v2pair.Mint": "Mint(address indexed sender,uint256 amount0,uint256 amount1)",
    "v2pair.Burn": (
        "Burn(address indexed sender,uint256 amount0,uint256 amount1,address indexed to)"
    ),
    "v3pool.Swap": (
        "Swap(address indexed sender,address indexed recipient,int256 amount0,int256 amount1,"
        "uint160 sqrtPriceX96,uint128 liquidity,int24 tick)"
    ),
    "v3pool.Mint": (
        "Mint(address sender,address indexed owner,int24 indexed tickLower,"
        "int24 indexed tickUpper,uint128 amount,uint256 amount0,uint256 amount1)"
    ),
    "v3pool.Burn": (
        "Burn(address indexed owner,int24 indexed tickLower,int24 indexed tickUpper,"
        "uint128 amount,uint256 amount0,uint256 amount1)"
    ),
    "v3pool.Collect": (
        "Collect(address indexed owner,address recipient,int24 indexed tickLower,"
        "int24 indexed tickUpper,uint128 amount0,uint128 amount1)"
    ),
    "v3pool.Flash": (
        "Flash(address indexed sender,address indexed recipient,uint256 amount0,"
        "uint256 amount1,uint256 paid0,uint256 paid1)"
    ),
    # ERC-4626 vaults.
    "vault.Deposit": (
        "Deposit(address indexed sender,address indexed owner,uint256 assets,uint256 shares)"
    ),
    "vault.Withdraw": (
        "Withdraw(address indexed sender,address indexed receiver,address indexed owner,"
        "uint256 assets,uint256 shares)"
    ),
    # ERC-7540 asynchronous redemption.
    "vault.RedeemRequest": (
        "RedeemRequest(address indexed controller,address indexed owner,"
        "uint256 indexed requestId,address sender,uint256 shares)"
    ),
    # The credit ledger of the simulated chains (toolkit.world.evm.credit).
    "creditHub.CreditDrawn": (
        "CreditDrawn(address indexed borrower,address indexed receiver,uint256 amount,uint256 fee)"
    ),
    "creditHub.Repaid": (
        "Repaid(address indexed borrower,address indexed payer,uint256 principal,uint256 interest)"
    ),
    "creditHub.BadDebt": ("BadDebt(address indexed borrower,uint256 principal,uint256 interest)"),
    "creditHub.OperatorSet": "OperatorSet(address indexed borrower,address indexed operator)",
    "creditHub.Liquidated": (
        "Liquidated(address indexed borrower,address indexed liquidator,uint256 repaid,"
        "uint256 badDebt)"
    ),
    "collateralEscrow.Deposited": (
        "Deposited(address indexed user,address indexed token,uint256 amount)"
    ),
    "collateralEscrow.Withdrawn": (
        "Withdrawn(address indexed user,address indexed token,uint256 amount)"
    ),
    "collateralEscrow.WithdrawRequested": (
        "WithdrawRequested(address indexed user,address indexed token,uint256 amount)"
    ),
    "collateralEscrow.Seized": (
        "Seized(address indexed user,address indexed token,address indexed to,uint256 amount)"
    ),
    "operator.CreditReceiverAdded": (
        "CreditReceiverAdded(address indexed borrower,address indexed receiver)"
    ),
    "operator.CreditReceiverRemoved": (
        "CreditReceiverRemoved(address indexed borrower,address indexed receiver)"
    ),
    "operator.CreditLineOpened": (
        "CreditLineOpened(address indexed borrower,address indexed receiver,uint256 amount)"
    ),
    "operator.RevokeScheduled": "RevokeScheduled(address indexed borrower,uint256 accessUntil)",
    "operator.RevokeFinalized": "RevokeFinalized(address indexed borrower)",
    # OIF's BaseInputOracle: an attested payload (nothing indexed, as there).
    "inputOracle.OutputProven": (
        "OutputProven(uint256 chainid,bytes32 remoteIdentifier,bytes32 application,"
        "bytes32 payloadHash)"
    ),
    # The simulated rebalancing bridge (toolkit.world.evm.bridge).
    "bridge.TransferSent": (
        "TransferSent(uint256 indexed id,address indexed token,uint256 amount,uint256 dstChain,"
        "address recipient)"
    ),
    "bridge.TransferDelivered": (
        "TransferDelivered(uint256 indexed srcChain,uint256 indexed id,address indexed token,"
        "uint256 amount,uint256 fee,address recipient)"
    ),
}

# The partner-escrow settlers' events (research: intents-encoding §1.8). Their struct
# parameters are spelled as tuple types, so they are built here rather than parsed.
_SETTLER_EVENTS = (
    # Open(bytes32 indexed orderId, StandardOrder order): 0x9ff74bd5...
    Event("escrow.Open", "Open", (("bytes32", "orderId", True), (ORDER_TYPE, "order", False))),
    # Refunded(bytes32 indexed orderId): 0xfe509803...
    Event("escrow.Refunded", "Refunded", (("bytes32", "orderId", True),)),
    # Finalised(bytes32 indexed orderId, bytes32 solver, bytes32 destination): 0x6d1ab3c9...
    Event(
        "escrow.Finalised",
        "Finalised",
        (
            ("bytes32", "orderId", True),
            ("bytes32", "solver", False),
            ("bytes32", "destination", False),
        ),
    ),
    # OutputFilled(bytes32 indexed orderId, bytes32 solver, uint32 timestamp,
    #              MandateOutput output, uint256 finalAmount): 0xfef24569...
    Event(
        "outputSettler.OutputFilled",
        "OutputFilled",
        (
            ("bytes32", "orderId", True),
            ("bytes32", "solver", False),
            ("uint32", "timestamp", False),
            (OUTPUT_TYPE, "output", False),
            ("uint256", "finalAmount", False),
        ),
    ),
)

EVENTS: Mapping[str, Event] = MappingProxyType(
    {key: _event(key, decl) for key, decl in _DECLARATIONS.items()}
    | {event.key: event for event in _SETTLER_EVENTS}
)
"""Every known event by key."""

_BY_TOPIC = {event.topic0: event for event in EVENTS.values()}


@dataclass(frozen=True)
class DecodedLog:
    """A decoded log: the event's key and its arguments by name (addresses checksummed)."""

    event: str
    args: dict[str, Any] = field(default_factory=dict)


def _word(type_: str, value: Any) -> str:
    word = plain_abi.word(type_, value)
    return abi.hexstr(eth_abi.encode([type_], [value]) if word is None else word)


def encode_log(event: str, *args: Any) -> tuple[tuple[str, ...], str]:
    """The topics and data of an event emitted with ``args`` (declaration order)."""
    spec = EVENTS.get(event) if isinstance(event, str) else None
    if spec is None:
        raise InvalidValue("event", f"unknown event {event!r}; known: {', '.join(EVENTS)}")
    if len(args) != len(spec.params):
        raise InvalidValue("args", f"{event} takes {len(spec.params)} arguments, got {len(args)}")
    topics = [spec.topic0]
    types, values = [], []
    for (type_, _, indexed), value in zip(spec.params, args, strict=True):
        if indexed:
            topics.append(_word(type_, value))
        else:
            types.append(type_)
            values.append(value)
    return tuple(topics), abi.hexstr(plain_abi.encode(types, values))


def decode_log(topics: Sequence[str], data: str | bytes) -> DecodedLog:
    """Decode a log of a known event from its topics and data."""
    if not topics or topics[0] not in _BY_TOPIC:
        raise InvalidValue("topics", "topic0 is not a known event")
    spec = _BY_TOPIC[topics[0]]
    indexed = [p for p in spec.params if p[2]]
    if len(topics) != 1 + len(indexed):
        raise InvalidValue("topics", f"{spec.key} has {len(indexed)} indexed parameters")
    plain = [p for p in spec.params if not p[2]]
    values: dict[str, Any] = {}
    try:
        body = eth_abi.decode([t for t, _, _ in plain], abi.data(data, "data"))
        for (type_, name, _), topic in zip(indexed, topics[1:], strict=True):
            (values[name],) = eth_abi.decode([type_], bytes.fromhex(topic[2:]))
    except DecodingError as exc:  # a log of another contract under a known topic0
        raise InvalidValue("data", f"not the data of {spec.key}: {exc}") from None
    for (_, name, _), value in zip(plain, body, strict=True):
        values[name] = value
    args = {
        name: abi.checksum(values[name]) if type_ == "address" else values[name]
        for type_, name, _ in spec.params
    }
    return DecodedLog(spec.key, args)


def json_abi(*families: str) -> list[dict[str, Any]]:
    """The JSON ABI entries of every event of the given families (``"erc20"``, ``"weth"``).

    Events with struct parameters (the settlers') are left out: decode them with
    :func:`decode_log`.
    """
    return [
        e.abi()
        for key, e in EVENTS.items()
        if key.partition(".")[0] in families and not any(t.startswith("(") for t, _, _ in e.params)
    ]
