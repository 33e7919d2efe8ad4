"""The development namespace (anvil's, with ``hardhat_*`` aliases): time, mining, snapshots,
balances and impersonation."""

from __future__ import annotations

from typing import Any

from toolkit.world.chain.contracts import ERC20
from toolkit.world.chain.rpc.errors import SERVER_ERROR, RpcError, invalid
from toolkit.world.chain.rpc.params import address, arg, quantity, to_hex
from toolkit.world.chain.rpc.registry import Call, Host, Method, registrar

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


@_method("evm_increaseTime")
def _increase_time(rpc: Host, c: Call, params: list[Any]) -> Any:
    raw = arg(params, 0, "seconds")
    seconds = raw if type(raw) is int else quantity(raw, "seconds")
    if seconds < 0:
        raise invalid("seconds", "must be >= 0 (time never goes back)")
    rpc.clock.offset += seconds
    return to_hex(int(rpc.clock.offset))


@_method("evm_setNextBlockTimestamp")
def _set_next_timestamp(rpc: Host, c: Call, params: list[Any]) -> Any:
    raw = arg(params, 0, "timestamp")
    target = raw if type(raw) is int else quantity(raw, "timestamp")
    latest = c.ledger.block_number(c.now)
    if target <= c.ledger.block_timestamp(latest) or target < c.now:
        raise RpcError(
            SERVER_ERROR,
            f"timestamp error: {target} is lower than or equal to the latest block's "
            f"timestamp or the current time",
        )
    rpc.clock.offset += target - c.now
    return None


@_method("evm_mine", "anvil_mine")
def _mine(rpc: Host, c: Call, params: list[Any]) -> Any:
    if params and params[0] is not None and not isinstance(params[0], dict):
        raw = params[0]
        target = raw if type(raw) is int else quantity(raw, "timestamp")
        if target > c.now:
            rpc.clock.offset += target - c.now
            c = Call(c.chain_id, c.ledger, rpc.clock.now())
    ledger = c.ledger
    _, pool_block = ledger.pending()
    due = ledger.next_slot_time(c.now)
    if ledger.pending()[0]:
        due = max(due, ledger.block_timestamp(pool_block))
    if due > c.now:
        rpc.clock.offset += due - c.now
    ledger.mine_due(rpc.clock.now())
    return "0x0"


@_method("evm_snapshot", "anvil_snapshot")
def _snapshot(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(rpc.chains.snapshot(rpc.clock.save()))


@_method("evm_revert", "anvil_revert")
def _revert(rpc: Host, c: Call, params: list[Any]) -> Any:
    key = quantity(arg(params, 0, "snapshotId"), "snapshotId")
    done, state = rpc.chains.revert(key)
    if done:
        rpc.clock.restore(state)
    return done


@_method("anvil_setBalance", "hardhat_setBalance")
def _set_balance(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    amount = quantity(arg(params, 1, "balance"), "balance")
    c.ledger.set_balance(account, amount, c.now)
    return None


@_method("anvil_dealERC20")
def _deal(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    token = address(arg(params, 1, "token"), "token")
    amount = quantity(arg(params, 2, "balance"), "balance")
    contract = c.ledger.contract(token)
    if not isinstance(contract, ERC20):
        raise invalid("token", f"no ERC-20 token at {token} on chain {c.chain_id}")
    run = c.ledger.direct(c.now)
    have = contract.balances.get(account, 0)
    if amount >= have:
        contract.mint(run, account, amount - have)
    else:
        contract.mint(run, account, 0)
        run.write(contract.balances, account, amount)
        run.write(contract.supply, "total", contract.supply["total"] - (have - amount))
    return None


@_method("anvil_impersonateAccount", "hardhat_impersonateAccount")
def _impersonate(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    rpc.chains.impersonated[c.chain_id].add(account)
    return None


@_method("anvil_stopImpersonatingAccount", "hardhat_stopImpersonatingAccount")
def _stop_impersonating(rpc: Host, c: Call, params: list[Any]) -> Any:
    account = address(arg(params, 0, "address"), "address")
    rpc.chains.impersonated[c.chain_id].discard(account)
    return None
