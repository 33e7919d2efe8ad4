"""The development namespace (anvil's, with ``hardhat_*`` aliases): time, mining, snapshots,
balances and impersonation."""

from __future__ import annotations

import math
from typing import Any, Final

from toolkit.world.evm.rpc.errors import SERVER_ERROR, RpcError, invalid
from toolkit.world.evm.rpc.limits import MAX_MINE_BLOCKS, UINT64_MAX
from toolkit.world.evm.rpc.params import address, arg, integer, quantity, to_hex
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar
from toolkit.world.evm.tokens import ERC20

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


#: The clock never moves past this: every chain's timestamps stay uint64 (anvil's type).
MAX_TIME: Final = UINT64_MAX


def _move_clock(rpc: Host, c: Call, seconds: int, name: str) -> None:
    """Move the clock ``seconds`` ahead, refusing (-32602 naming ``name``) a move that would take
    a timestamp past 2**64 - 1; nothing moves on refusal."""
    if c.now + seconds > MAX_TIME:
        raise invalid(name, "would move the clock past 2**64 - 1 (the largest block timestamp)")
    rpc.clock.offset += seconds


@_method("evm_increaseTime", "anvil_increaseTime")
def _increase_time(rpc: Host, c: Call, params: list[Any]) -> Any:
    seconds = _signed(arg(params, 0, "seconds"), "seconds")
    if seconds < 0:
        raise invalid("seconds", "must be >= 0 (time never goes back)")
    _move_clock(rpc, c, seconds, "seconds")
    return to_hex(int(rpc.clock.offset))


def _signed(value: Any, name: str) -> int:
    # anvil reads a signed number here; a negative one is refused by the caller, by name.
    if type(value) is int and value < 0:
        return value if value >= -UINT64_MAX else -UINT64_MAX
    return integer(value, name)


@_method("evm_setNextBlockTimestamp", "anvil_setNextBlockTimestamp")
def _set_next_timestamp(rpc: Host, c: Call, params: list[Any]) -> Any:
    target = integer(arg(params, 0, "timestamp"), "timestamp")
    latest = c.ledger.block_number(c.now)
    if target <= c.ledger.block_timestamp(latest) or target < c.now:
        raise RpcError(
            SERVER_ERROR,
            f"timestamp error: {target} is lower than or equal to the latest block's "
            f"timestamp or the current time",
        )
    _move_clock(rpc, c, math.ceil(target - c.now), "timestamp")
    return None


@_method("evm_mine")
def _evm_mine(rpc: Host, c: Call, params: list[Any]) -> Any:
    """anvil's and ganache's forms: ``[]``, ``[timestamp]`` or ``[{timestamp?, blocks?}]``."""
    first = params[0] if params else None
    blocks, timestamp = 1, None
    if isinstance(first, dict):
        if first.get("timestamp") is not None:
            timestamp = integer(first["timestamp"], "options.timestamp")
        if first.get("blocks") is not None:
            blocks = integer(first["blocks"], "options.blocks", MAX_MINE_BLOCKS)
    elif first is not None:
        timestamp = integer(first, "timestamp")
    _mine_blocks(rpc, c, blocks, timestamp, None)
    return "0x0"


@_method("anvil_mine", "hardhat_mine")
def _anvil_mine(rpc: Host, c: Call, params: list[Any]) -> Any:
    """``[blocks?, interval?]`` (quantities): ``blocks`` blocks (default 1)."""
    raw_blocks = arg(params, 0, "blocks", 1)
    blocks = integer(raw_blocks, "blocks", MAX_MINE_BLOCKS)
    raw_interval = arg(params, 1, "interval", None)
    interval = None if raw_interval is None else integer(raw_interval, "interval")
    _mine_blocks(rpc, c, blocks, None, interval)
    return None


def _mine_blocks(
    rpc: Host, c: Call, blocks: int, timestamp: int | None, interval: int | None
) -> None:
    """Mine ``blocks`` blocks (at least one: 0 mines one, as anvil): the pool goes into the
    first; the clock stops at the last one's slot. With ``timestamp``, the first block is the
    first slot at or after it; with ``interval`` (seconds), the clock moves at least
    ``blocks * interval`` (blocks keep to the chain's slot grid, so the latest block number
    moves by ``max(blocks, whole slots in that time)``). Checked whole before anything moves."""
    ledger = c.ledger
    blocks = max(1, blocks)
    latest = ledger.block_number(c.now)
    start = c.now if timestamp is None else max(c.now, timestamp)
    if start > MAX_TIME:
        raise invalid("timestamp", "must be at most 2**64 - 1")
    pool_txs, pool_block = ledger.pending()
    first = max(latest, ledger.slot(start)) + 1
    if pool_txs:
        first = max(first, pool_block)
    last = first + blocks - 1
    # The clock goes to the start of the last block's slot: on a chain faster than a second
    # its timestamp (the slot's start, floored) can be the current second, not yet its slot.
    due = ledger.genesis + last * ledger.block_time_s
    if interval:
        due = max(due, ledger.block_timestamp(latest) + blocks * interval)
    if due > MAX_TIME:
        raise invalid("blocks", "would move the clock past 2**64 - 1 (the largest timestamp)")
    if due > c.now:
        rpc.clock.offset += due - c.now
    ledger.mine_due(rpc.clock.now())


@_method("evm_snapshot", "anvil_snapshot")
def _snapshot(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(rpc.chains.snapshot(rpc.clock.save()))


@_method("evm_revert", "anvil_revert")
def _revert(rpc: Host, c: Call, params: list[Any]) -> Any:
    key = integer(arg(params, 0, "snapshotId"), "snapshotId")
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
