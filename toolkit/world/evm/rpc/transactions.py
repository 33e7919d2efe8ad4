"""Transactions: sending them (signed raw, or from a development or impersonated account)
and reading them and their receipts back."""

from __future__ import annotations

from typing import Any

from eth_account import Account
from eth_account._utils.legacy_transactions import Transaction
from eth_account.typed_transactions import TypedTransaction
from eth_utils import keccak
from hexbytes import HexBytes

from toolkit.world.evm.admission import Rejected
from toolkit.world.evm.contracts import Revert
from toolkit.world.evm.records import Tx
from toolkit.world.evm.rpc.errors import SERVER_ERROR, RpcError, invalid, revert_error
from toolkit.world.evm.rpc.fees import suggested_tip
from toolkit.world.evm.rpc.limits import UINT64_MAX, UINT256_MAX
from toolkit.world.evm.rpc.params import arg, call_object, data, hash32, quantity
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar
from toolkit.world.evm.rpc.wire import receipt_wire, tx_wire

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


def _submit(c: Call, tx: Tx) -> str:
    try:
        return c.ledger.submit(tx, c.now)
    except Rejected as exc:
        raise RpcError(SERVER_ERROR, str(exc)) from None


@_method("eth_sendRawTransaction")
def _send_raw(rpc: Host, c: Call, params: list[Any]) -> Any:
    raw = data(arg(params, 0, "data"), "data")
    return _submit(c, _decode_raw(raw))


@_method("eth_sendTransaction")
def _send(rpc: Host, c: Call, params: list[Any]) -> Any:
    request = arg(params, 0, "transaction")
    sender, to, payload, value, limit = call_object(request, "transaction")
    if "from" not in request:
        raise invalid("transaction.from", "is required")
    if not rpc.chains.can_send(c.chain_id, sender):
        raise RpcError(SERVER_ERROR, "unknown account")
    if to is None:
        raise RpcError(SERVER_ERROR, "contract creation is not supported by the simulated chain")
    ledger = c.ledger
    nonce = (
        ledger.nonce(sender, c.now, pending=True)
        if request.get("nonce") is None
        else quantity(request["nonce"], "transaction.nonce", UINT64_MAX)
    )
    if limit is None:
        limit = _estimate(c, sender, to, payload, value)
    kind, max_fee, tip = _fees(c, request)
    digest = keccak(
        b"toolkit unsigned tx"
        + c.chain_id.to_bytes(8, "big")
        + bytes.fromhex(sender[2:])
        + nonce.to_bytes(32, "big")
        + bytes.fromhex(to[2:])
        + payload
    )
    tx = Tx(
        "0x" + digest.hex(),
        kind,
        c.chain_id,
        sender,
        nonce,
        to,
        value,
        payload,
        limit,
        max_fee,
        tip,
    )
    return _submit(c, tx)


def _estimate(c: Call, sender: str, to: str, payload: bytes, value: int) -> int:
    """The gas of an ``eth_sendTransaction`` that gives none: the call's, as geth estimates."""
    try:
        return c.ledger.call(sender, to, payload, value, c.now).gas
    except Revert as exc:
        raise revert_error(exc) from None
    except Rejected as exc:
        raise RpcError(SERVER_ERROR, str(exc)) from None


def _fees(c: Call, request: dict[str, Any]) -> tuple[int, int, int]:
    """The type, max fee and tip of an ``eth_sendTransaction``: legacy (type 0) when it gives
    ``gasPrice``, else EIP-1559 with the suggested tip and twice the base fee plus the tip."""
    if request.get("gasPrice") is not None:
        price = quantity(request["gasPrice"], "transaction.gasPrice")
        return 0, price, price
    raw_tip = request.get("maxPriorityFeePerGas")
    tip = (
        suggested_tip(c.ledger)
        if raw_tip is None
        else quantity(raw_tip, "transaction.maxPriorityFeePerGas")
    )
    raw_fee = request.get("maxFeePerGas")
    max_fee = (
        2 * c.ledger.base_fee + tip
        if raw_fee is None
        else quantity(raw_fee, "transaction.maxFeePerGas")
    )
    return 2, max_fee, tip


@_method("eth_getTransactionByHash")
def _transaction(rpc: Host, c: Call, params: list[Any]) -> Any:
    tx_hash = hash32(arg(params, 0, "transactionHash"), "transactionHash")
    found = c.ledger.transaction(tx_hash, c.now)
    if found is None:
        return None
    tx, receipt = found
    return tx_wire(tx, receipt, c.ledger.base_fee)


@_method("eth_getTransactionReceipt")
def _receipt(rpc: Host, c: Call, params: list[Any]) -> Any:
    tx_hash = hash32(arg(params, 0, "transactionHash"), "transactionHash")
    receipt = c.ledger.receipt(tx_hash, c.now)
    return None if receipt is None else receipt_wire(receipt)


def _decode_raw(raw: bytes) -> Tx:
    """A signed raw transaction as a pool :class:`Tx` (sender recovered from the signature)."""
    if not raw:
        raise RpcError(SERVER_ERROR, "typed transaction too short")
    tx_hash = "0x" + keccak(raw).hex()
    try:
        if raw[0] <= 0x7F:
            if raw[0] not in (1, 2):
                raise RpcError(SERVER_ERROR, "transaction type not supported")
            typed = TypedTransaction.from_bytes(HexBytes(raw))
            fields = typed.as_dict()
            chain_id: int | None = fields["chainId"]
            kind = typed.transaction_type
            if kind == 2:
                max_fee, tip = fields["maxFeePerGas"], fields["maxPriorityFeePerGas"]
            else:
                max_fee = tip = fields["gasPrice"]
            access = tuple(fields.get("accessList", ()))
        else:
            fields = Transaction.from_bytes(HexBytes(raw)).as_dict()
            v = fields["v"]
            if v < 35:
                raise RpcError(
                    SERVER_ERROR, "only replay-protected (EIP-155) transactions allowed over RPC"
                )
            chain_id, kind = (v - 35) // 2, 0
            max_fee = tip = fields["gasPrice"]
            access = ()
    except RpcError:
        raise
    except Exception:
        raise RpcError(SERVER_ERROR, "rlp: the raw transaction does not decode") from None
    try:
        sender = Account.recover_transaction(raw).lower()
    except Exception:
        raise RpcError(SERVER_ERROR, "invalid sender") from None
    if fields["nonce"] > UINT64_MAX:
        raise RpcError(SERVER_ERROR, "nonce has max value")
    if max(fields["value"], max_fee, tip) > UINT256_MAX or fields["gas"] > UINT64_MAX:
        raise RpcError(SERVER_ERROR, "rlp: a quantity exceeds its type's range")
    to = bytes(fields["to"])
    return Tx(
        tx_hash,
        kind,
        chain_id,
        sender,
        fields["nonce"],
        "0x" + to.hex() if to else None,
        fields["value"],
        bytes(fields["data"]),
        fields["gas"],
        max_fee,
        tip,
        fields["v"],
        fields["r"],
        fields["s"],
        access,
    )
