"""The guard for unsigned contract calls (credit, vault, ERC-20, router, pool).

Re-exported by :mod:`toolkit.chain.guard`; see :func:`check_calls`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from toolkit.chain.finding import Finding
from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import decode_call
from toolkit.resources import Calls, ContractCall, InvalidInput

__all__ = ["Expectation", "check_calls"]

_AMOUNT_PARAMS = frozenset({"amount", "assets", "shares", "amountIn"})
_RECEIVER_PARAMS = frozenset({"receiver", "to", "recipient"})
_ACCOUNT_PARAMS = frozenset({"owner", "borrower", "controller"})
_CONTRACT_PARAMS = frozenset({"spender", "operator", "target"})


@dataclass(frozen=True)
class Expectation:
    """What a list of calls was asked to do.

    ``targets`` are the contracts the calls may touch (and approve); ``amounts`` the amounts
    asked for; ``receivers`` who may receive funds or credit; ``account`` the user acting.
    Empty ``amounts``/``receivers`` and a ``None`` account skip those checks.

    Example:
        >>> Expectation(chain_id=8453, targets=["0x" + "ab" * 20]).targets
        frozenset({'0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB'})
    """

    chain_id: int
    targets: Collection[str]
    amounts: Collection[int] = ()
    receivers: Collection[str] = ()
    account: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.chain_id, bool) or not isinstance(self.chain_id, int):
            raise InvalidInput("chain_id", "must be an integer")
        object.__setattr__(self, "targets", _addresses(self.targets, "targets"))
        object.__setattr__(self, "receivers", _addresses(self.receivers, "receivers"))
        if isinstance(self.amounts, str | bytes):
            raise InvalidInput("amounts", "must be a collection of integers")
        amounts = frozenset(self.amounts)
        for amount in amounts:
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise InvalidInput("amounts", "must be a collection of non-negative integers")
        object.__setattr__(self, "amounts", amounts)
        if self.account is not None:
            object.__setattr__(self, "account", _address(self.account, "account"))


def check_calls(calls: Calls | Iterable[ContractCall], *, expected: Expectation) -> list[Finding]:
    """Check unsigned contract calls against what was asked for.

    Flags a wrong chain, unknown targets, native value on non-payable calls, undecodable data,
    amounts and receivers other than those asked for, and any ERC-20 approval of 2**256-1 or
    of more than was asked (``unlimited approval``).

    Example:
        >>> from toolkit.chain import calls
        >>> usdc, hub = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x" + "ab" * 20
        >>> c = calls.erc20_approve(8453, usdc, hub, 2**256 - 1)
        >>> [f.message for f in check_calls([c], expected=Expectation(8453, [usdc, hub], [5]))]
        ['unlimited approval: approves 2**256-1']
    """
    if not isinstance(expected, Expectation):
        raise InvalidInput("expected", "must be an Expectation")
    items = calls.calls if isinstance(calls, Calls) else list(calls)
    findings: list[Finding] = []
    for i, call in enumerate(items):
        if not isinstance(call, ContractCall):
            raise InvalidInput(f"calls[{i}]", "must be a ContractCall")
        findings += _check_call(call, f"calls[{i}]", expected)
    return findings


def _check_call(call: ContractCall, where: str, expected: Expectation) -> list[Finding]:
    findings = []
    if call.chain_id != expected.chain_id:
        findings.append(Finding(f"{where}.chain", f"is {call.chain}, expected {expected.chain_id}"))
    if call.to not in expected.targets:
        findings.append(Finding(f"{where}.to", f"{call.to} is not a known contract"))
    if call.value_int != 0:
        findings.append(
            Finding(f"{where}.value", f"sends {call.value} wei; none of these calls is payable")
        )
    try:
        decoded = decode_call(call.data)
    except InvalidValue as exc:
        findings.append(Finding(f"{where}.data", exc.rule))
        return findings
    if decoded.function == "erc20.approve":
        return findings + _check_approval(decoded.args, where, expected)
    for name, value in decoded.args.items():
        findings += _check_argument(name, value, where, expected)
    return findings


def _check_approval(args: dict[str, Any], where: str, expected: Expectation) -> list[Finding]:
    findings = []
    if args["spender"] not in expected.targets:
        findings.append(
            Finding(f"{where}.args.spender", f"approves {args['spender']}, not a known contract")
        )
    amount = args["amount"]
    if amount == abi.UINT256_MAX:
        findings.append(Finding(f"{where}.args.amount", "unlimited approval: approves 2**256-1"))
    elif expected.amounts and amount > max(expected.amounts):
        findings.append(
            Finding(
                f"{where}.args.amount",
                f"unlimited approval: approves {amount}, more than the "
                f"{max(expected.amounts)} asked for",
            )
        )
    return findings


def _check_argument(name: str, value: Any, where: str, expected: Expectation) -> list[Finding]:
    field = f"{where}.args.{name}"
    if name in _AMOUNT_PARAMS and expected.amounts and value not in expected.amounts:
        asked = ", ".join(str(a) for a in sorted(expected.amounts))
        return [Finding(field, f"is {value}, not an amount asked for ({asked})")]
    if name in _RECEIVER_PARAMS and expected.receivers and value not in expected.receivers:
        return [Finding(field, f"is {value}, not a receiver asked for")]
    if name in _ACCOUNT_PARAMS and expected.account is not None and value != expected.account:
        return [Finding(field, f"is {value}, the account is {expected.account}")]
    if name in _CONTRACT_PARAMS and value not in expected.targets:
        return [Finding(field, f"is {value}, not a known contract")]
    if name == "order" and expected.account is not None and value.user != expected.account:
        return [Finding(f"{field}.user", f"is {value.user}, the account is {expected.account}")]
    return []


def _addresses(values: Any, field: str) -> frozenset[str]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise InvalidInput(field, "must be a collection of addresses")
    return frozenset(_address(v, field) for v in values)


def _address(value: Any, field: str) -> str:
    try:
        return abi.address(value, field)
    except InvalidValue as exc:
        raise InvalidInput(exc.field, exc.rule) from None


def _non_negative(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(name, "must be a non-negative integer")
    return value
