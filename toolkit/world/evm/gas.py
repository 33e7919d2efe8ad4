"""The gas model of the simulated chains: one table of execution gas per contract function.

A transaction's gas is ``TRANSACTION`` (21,000) plus its calldata (4 per zero byte, 16 per other
byte, as EIP-2028 prices it) plus the execution gas of the function it calls, from
:data:`EXECUTION`. The figures are those of the real contracts with warm storage (an OpenZeppelin
ERC-20 ``transfer`` between two holders costs about 34,500 gas in all); they do not depend on the
state (a first deposit into an empty slot costs the same as the next). A call of an unknown
function or a revert before any work costs :data:`REVERT`. A native transfer to an account
without code costs nothing beyond the base.

The fee of a transaction is ``gas_used × effective_gas_price`` (EIP-1559: ``base_fee +
min(max_priority_fee, max_fee − base_fee)``; a legacy transaction pays its ``gasPrice``), taken
from the sender's native balance; the base fee is burnt and the tip goes to the block's miner.

>>> intrinsic(bytes.fromhex("a9059cbb" + "00" * 12 + "11" * 20 + "00" * 31 + "05"))
21572
>>> execution("erc20.transfer")
12900
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "BLOCK_GAS_LIMIT",
    "CALLDATA_NONZERO",
    "CALLDATA_ZERO",
    "EXECUTION",
    "REVERT",
    "TRANSACTION",
    "execution",
    "intrinsic",
]

#: The base cost of every transaction.
TRANSACTION: Final = 21_000
#: Calldata gas per zero byte and per other byte (EIP-2028).
CALLDATA_ZERO: Final = 4
CALLDATA_NONZERO: Final = 16
#: The largest gas limit a transaction may ask for (a block's limit).
BLOCK_GAS_LIMIT: Final = 30_000_000
#: Execution gas of a call that reverts at once (unknown selector, value sent to a
#: non-payable function, malformed arguments).
REVERT: Final = 2_000

#: Execution gas by function key (:data:`toolkit.codecs.function_table.FUNCTIONS`); ``native``
#: is a plain value transfer and ``weth.receive`` value sent to WETH without calldata.
EXECUTION: Mapping[str, int] = MappingProxyType(
    {
        "native": 0,
        "erc20.transfer": 12_900,
        "erc20.transferFrom": 16_200,
        "erc20.approve": 24_300,
        "erc20.balanceOf": 2_600,
        "erc20.allowance": 2_800,
        "erc20.totalSupply": 2_400,
        "erc20.decimals": 2_300,
        "erc20.symbol": 3_200,
        "erc20.name": 3_200,
        "weth.deposit": 6_900,
        "weth.receive": 6_900,
        "weth.withdraw": 14_100,
        # The partner-escrow settlers (estimates: OIF's with one input, one output).
        "escrow.open": 95_000,
        "escrow.refund": 40_000,
        "escrow.finalise": 60_000,
        "escrow.orderStatus": 2_600,
        "outputSettler.fill": 70_000,
        # The input oracle (estimates): views of one slot per proof; an attestation writes one
        # new slot (22,100) and an event, without the proof verification a real oracle pays.
        "inputOracle.isProven": 2_600,
        "inputOracle.efficientRequireProven": 5_200,
        "inputOracle.receiveMessage": 45_000,
        # The rebalancing bridge (estimates of a CCTP-style burn and mint: a transferFrom, a burn
        # and an event; a mint to two accounts, a delivered flag and an event).
        "bridge.send": 75_000,
        "bridge.deliver": 90_000,
        "bridge.sentTotal": 2_600,
        "bridge.deliveredTotal": 2_600,
        # The service's pools: views of one mapping slot each.
        "pool.balance": 2_600,
        "pool.reserved": 2_600,
        "pool.outstanding": 2_600,
        "pool.available": 2_600,
        # AMM pool getters (a cold storage read each) and the Universal Router's fixed part:
        # :class:`toolkit.world.evm.router.UniversalRouter` adds its commands' gas to it.
        "amm.token0": 2_400,
        "amm.token1": 2_400,
        "v2pair.getReserves": 2_500,
        "v3pool.slot0": 2_700,
        "v3pool.liquidity": 2_400,
        "v3pool.fee": 2_300,
        "v3pool.tickSpacing": 2_300,
        "v3pool.ticks": 4_800,
        "v3pool.tickBitmap": 2_400,
        "v3pool.feeGrowthGlobal0X128": 2_400,
        "v3pool.feeGrowthGlobal1X128": 2_400,
        "universalRouter.execute": 24_000,
        # The credit ledger (estimates of the real hub, escrow, operator and ERC-4626 vault).
        "creditHub.drawCredit": 120_000,
        "creditHub.repay": 80_000,
        "creditHub.setOperator": 30_000,
        "creditHub.liquidate": 180_000,
        "creditHub.collateralOf": 2_600,
        # An AggregatorV3 read through its proxy (the proxy's call to the aggregator included).
        "priceFeed.latestRoundData": 9_600,
        "priceFeed.description": 3_200,
        "creditHub.addCreditReceiver": 28_000,
        "creditHub.removeCreditReceiver": 8_000,
        "collateralEscrow.deposit": 90_000,
        "collateralEscrow.withdraw": 110_000,
        "operator.openCreditLine": 140_000,
        "operator.revoke": 26_000,
        "operator.finalizeRevoke": 12_000,
        "vault.deposit": 95_000,
        "vault.redeem": 85_000,
        "vault.requestRedeem": 110_000,
    }
)


def intrinsic(data: bytes) -> int:
    """The gas a transaction costs before it runs: the base plus its calldata."""
    zeros = data.count(0)
    return TRANSACTION + CALLDATA_ZERO * zeros + CALLDATA_NONZERO * (len(data) - zeros)


def execution(function: str) -> int:
    """Execution gas of ``function`` (a key of :data:`EXECUTION`); :data:`REVERT` if unknown."""
    return EXECUTION.get(function, REVERT)
