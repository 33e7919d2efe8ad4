"""Fee reads: ``eth_gasPrice``, ``eth_maxPriorityFeePerGas`` and ``eth_feeHistory``."""

from __future__ import annotations

from typing import Any

from toolkit.world.evm import gas
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.rpc.errors import invalid
from toolkit.world.evm.rpc.limits import MAX_FEE_HISTORY_BLOCKS
from toolkit.world.evm.rpc.params import PENDING, arg, block_number, integer, to_hex
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


def suggested_tip(ledger: Ledger) -> int:
    """The priority fee the chain suggests (and ``eth_sendTransaction`` pays by default)."""
    return max(1, ledger.base_fee // 5)


@_method("eth_gasPrice")
def _gas_price(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(c.ledger.base_fee + suggested_tip(c.ledger))


@_method("eth_maxPriorityFeePerGas")
def _priority_fee(rpc: Host, c: Call, params: list[Any]) -> Any:
    return to_hex(suggested_tip(c.ledger))


@_method("eth_feeHistory")
def _fee_history(rpc: Host, c: Call, params: list[Any]) -> Any:
    count = integer(arg(params, 0, "blockCount"), "blockCount")
    if not 1 <= count <= MAX_FEE_HISTORY_BLOCKS:
        raise invalid(
            "blockCount", f"must be between 1 and {MAX_FEE_HISTORY_BLOCKS} (the limit, as in geth)"
        )
    newest = block_number(c, arg(params, 1, "newestBlock"), "newestBlock")
    latest = c.ledger.block_number(c.now)
    newest = latest if newest in (PENDING,) or newest > latest else newest
    raw_percentiles = arg(params, 2, "rewardPercentiles", None)
    percentiles: list[float] | None = None
    if raw_percentiles is not None:
        if not isinstance(raw_percentiles, list) or not all(
            isinstance(p, int | float) and not isinstance(p, bool) and 0 <= p <= 100
            for p in raw_percentiles
        ):
            raise invalid("rewardPercentiles", "must be an array of numbers from 0 to 100")
        if raw_percentiles != sorted(raw_percentiles):
            raise invalid("rewardPercentiles", "must be in ascending order")
        percentiles = [float(p) for p in raw_percentiles]
    oldest = max(0, newest - count + 1)
    base = c.ledger.base_fee
    ratios, rewards = [], []
    for number in range(oldest, newest + 1):
        block = c.ledger.block(number)
        ratios.append(0.0 if block is None else block.gas_used / gas.BLOCK_GAS_LIMIT)
        if percentiles is not None:
            tips = sorted(r.effective_gas_price - base for r in (block.receipts if block else ()))
            rewards.append(
                [
                    to_hex(tips[min(len(tips) - 1, int(p / 100 * len(tips)))] if tips else 0)
                    for p in percentiles
                ]
            )
    body: dict[str, Any] = {
        "oldestBlock": to_hex(oldest),
        "baseFeePerGas": [to_hex(base)] * (newest - oldest + 2),
        "gasUsedRatio": ratios,
    }
    if percentiles is not None:
        body["reward"] = rewards
    return body
