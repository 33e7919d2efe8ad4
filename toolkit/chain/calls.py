"""Typed builders of unsigned contract calls (:class:`~toolkit.resources.ContractCall`).

Each builder takes the chain id, the contract to call and the function's arguments, and returns
a ``ContractCall`` with ``value="0"`` (none of these functions is payable). There is a typed
builder for each call the toolkit itself hands out; any other function of the table is built
by :func:`contract_call` with its key (``contract_call(8453, hub, "creditHub.repay", borrower,
amount)``). The generic codec
(:func:`encode_call`, :func:`decode_call`, the :data:`FUNCTIONS` table and the assumptions behind
it) lives in :mod:`toolkit.codecs.functions` and is re-exported here.
"""

from __future__ import annotations

from typing import Any

from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.function_table import FUNCTIONS, SIGNATURES, Function
from toolkit.codecs.functions import DecodedCall, decode_call, encode_call
from toolkit.resources import ContractCall

__all__ = [
    "FUNCTIONS",
    "SIGNATURES",
    "DecodedCall",
    "Function",
    "add_credit_receiver",
    "collateral_deposit",
    "collateral_withdraw",
    "contract_call",
    "decode_call",
    "draw_credit",
    "encode_call",
    "erc20_approve",
    "remove_credit_receiver",
    "set_operator",
    "vault_claim_redeem",
    "vault_deposit",
    "vault_redeem",
    "vault_request_redeem",
]


def contract_call(chain_id: int, to: str, function: str, *args: Any) -> ContractCall:
    """A call of any function in the table on contract ``to`` of chain ``chain_id``.

    Example:
        >>> c = contract_call(8453, "0x" + "ab" * 20, "operator.revoke")
        >>> (c.chain, c.data, c.value)
        ('8453', '0xb6549f75', '0')
    """
    if isinstance(chain_id, bool) or not isinstance(chain_id, int) or chain_id <= 0:
        raise InvalidValue("chainId", "must be a positive integer")
    target = abi.address(to, "to")
    return ContractCall(chain=str(chain_id), to=target, data=encode_call(function, *args))


def erc20_approve(chain_id: int, token: str, spender: str, amount: int) -> ContractCall:
    """ERC-20 ``approve(spender, amount)`` on ``token``.

    Example:
        >>> erc20_approve(1, "0x" + "11" * 20, "0x" + "22" * 20, 5).data[:10]
        '0x095ea7b3'
    """
    return contract_call(chain_id, token, "erc20.approve", spender, amount)


def vault_deposit(chain_id: int, vault: str, assets: int, receiver: str) -> ContractCall:
    """ERC-4626 ``deposit(assets, receiver)`` on ``vault``.

    Example:
        >>> vault_deposit(8453, "0x" + "11" * 20, 10, "0x" + "22" * 20).data[:10]
        '0x6e553f65'
    """
    return contract_call(chain_id, vault, "vault.deposit", assets, receiver)


def vault_redeem(chain_id: int, vault: str, shares: int, receiver: str, owner: str) -> ContractCall:
    """ERC-4626 ``redeem(shares, receiver, owner)`` on ``vault``.

    Example:
        >>> vault_redeem(8453, "0x" + "11" * 20, 10, "0x" + "22" * 20, "0x" + "22" * 20).data[:10]
        '0xba087652'
    """
    return contract_call(chain_id, vault, "vault.redeem", shares, receiver, owner)


def vault_request_redeem(
    chain_id: int, vault: str, shares: int, controller: str, owner: str
) -> ContractCall:
    """ERC-7540 ``requestRedeem(shares, controller, owner)`` on an asynchronous ``vault``.

    Example:
        >>> a = "0x" + "22" * 20
        >>> vault_request_redeem(8453, "0x" + "11" * 20, 10, a, a).data[:10]
        '0x7d41c86e'
    """
    return contract_call(chain_id, vault, "vault.requestRedeem", shares, controller, owner)


def vault_claim_redeem(
    chain_id: int, vault: str, shares: int, receiver: str, controller: str
) -> ContractCall:
    """Claim a fulfilled ERC-7540 redeem request: ``redeem(shares, receiver, controller)``.

    ERC-7540 claims through the ERC-4626 ``redeem`` signature with the controller as third
    argument, so this is the call every compliant asynchronous vault accepts.

    Example:
        >>> a = "0x" + "22" * 20
        >>> vault_claim_redeem(8453, "0x" + "11" * 20, 10, a, a).data[:10]
        '0xba087652'
    """
    return contract_call(chain_id, vault, "vault.redeem", shares, receiver, controller)


def draw_credit(chain_id: int, hub: str, borrower: str, receiver: str, amount: int) -> ContractCall:
    """Credit hub ``drawCredit(borrower, receiver, amount)``.

    Example:
        >>> a = "0x" + "22" * 20
        >>> draw_credit(8453, "0x" + "11" * 20, a, a, 1_000_000).data[:10]
        '0xf83bc7b8'
    """
    return contract_call(chain_id, hub, "creditHub.drawCredit", borrower, receiver, amount)


def set_operator(chain_id: int, hub: str, operator: str) -> ContractCall:
    """Credit hub ``setOperator(operator)``, called by the user.

    Example:
        >>> set_operator(8453, "0x" + "11" * 20, "0x" + "22" * 20).data[:10]
        '0xb3ab15fb'
    """
    return contract_call(chain_id, hub, "creditHub.setOperator", operator)


def add_credit_receiver(chain_id: int, contract: str, receiver: str) -> ContractCall:
    """``addCreditReceiver(receiver)``: whitelist a receiver for operator draws.

    Example:
        >>> add_credit_receiver(8453, "0x" + "11" * 20, "0x" + "22" * 20).data[:10]
        '0x0b0dd11c'
    """
    return contract_call(chain_id, contract, "creditHub.addCreditReceiver", receiver)


def remove_credit_receiver(chain_id: int, contract: str, receiver: str) -> ContractCall:
    """``removeCreditReceiver(receiver)``: take a receiver off the whitelist.

    Example:
        >>> remove_credit_receiver(8453, "0x" + "11" * 20, "0x" + "22" * 20).data[:10]
        '0x0852ca19'
    """
    return contract_call(chain_id, contract, "creditHub.removeCreditReceiver", receiver)


def collateral_deposit(chain_id: int, escrow: str, token: str, amount: int) -> ContractCall:
    """Collateral escrow ``deposit(token, amount)`` (assumed signature, see functions).

    Example:
        >>> collateral_deposit(8453, "0x" + "11" * 20, "0x" + "22" * 20, 5).data[:10]
        '0x47e7ef24'
    """
    return contract_call(chain_id, escrow, "collateralEscrow.deposit", token, amount)


def collateral_withdraw(chain_id: int, escrow: str, token: str, amount: int) -> ContractCall:
    """Collateral escrow ``withdraw(token, amount)`` (assumed signature, see functions).

    Example:
        >>> collateral_withdraw(8453, "0x" + "11" * 20, "0x" + "22" * 20, 5).data[:10]
        '0xf3fef3a3'
    """
    return contract_call(chain_id, escrow, "collateralEscrow.withdraw", token, amount)
