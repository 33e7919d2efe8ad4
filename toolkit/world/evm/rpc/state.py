"""The node and state reads: client, chain and network ids, accounts, blocks, balances,
nonces and code."""

from __future__ import annotations

from typing import Any

from toolkit.world.evm.rpc.params import (
    PENDING,
    address,
    arg,
    block_number,
    boolean,
    hash32,
    to_hex,
)
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar
from toolkit.world.evm.rpc.wire import block_wire

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


@_method("web3_clientVersion")
def _client_version(rpc: Host, c: Call, params: list[Any]) -> Any:
    return "toolkit-simulated-chain/0.1"


@_method("eth_chainId")
def _chain_id(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(c.chain_id)


@_method("net_version")
def _net_version(rpc: Host, c: Call, params: list[Any]) -> Any:
    return str(c.chain_id)


@_method("net_listening")
def _net_listening(rpc: Host, c: Call, params: list[Any]) -> Any:
    return True


@_method("eth_syncing")
def _syncing(rpc: Host, c: Call, params: list[Any]) -> Any:
    return False


@_method("eth_accounts")
def _accounts(rpc: Host, c: Call, params: list[Any]) -> Any:
    # As anvil and ganache: the development accounts, then the impersonated ones (ethers'
    # ``provider.getSigner(address)`` looks the address up here).
    listed = [a.address.lower() for a in rpc.chains.accounts]
    known = set(listed)
    return listed + sorted(a for a in rpc.chains.impersonated[c.chain_id] if a not in known)


@_method("eth_blockNumber")
def _block_number_method(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(c.ledger.block_number(c.now))


@_method("eth_getBlockByNumber")
def _block_by_number(rpc: Host, c: Call, params: list[Any]) -> Any:
    number = block_number(c, arg(params, 0, "block"), "block")
    full = boolean(arg(params, 1, "fullTransactions", False), "fullTransactions")
    return block_wire(c, number, full)


@_method("eth_getBlockByHash")
def _block_by_hash(rpc: Host, c: Call, params: list[Any]) -> Any:
    block_hash = hash32(arg(params, 0, "blockHash"), "blockHash")
    full = boolean(arg(params, 1, "fullTransactions", False), "fullTransactions")
    number = c.ledger.number_of(block_hash, c.now)
    return None if number is None else block_wire(c, number, full)


@_method("eth_getBalance")
def _balance(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    block_number(c, arg(params, 1, "block", "latest"), "block", state=True)
    return to_hex(c.ledger.balance(account, c.now))


@_method("eth_getTransactionCount")
def _transaction_count(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    block = block_number(c, arg(params, 1, "block", "latest"), "block", state=True)
    return to_hex(c.ledger.nonce(account, c.now, pending=block == PENDING))


@_method("eth_getCode")
def _code(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    block_number(c, arg(params, 1, "block", "latest"), "block", state=True)
    return "0x" + c.ledger.code(account, c.now).hex()
