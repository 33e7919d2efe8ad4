"""Simulated EVM chains behind standard Ethereum JSON-RPC (pure: time is passed in).

- :mod:`.ledger`: :class:`Ledger`, one chain's accounts, contracts, pool and lazily produced
  blocks on the chain's slot grid (block time per scenario chain); :mod:`.records` its
  transactions, logs, receipts and blocks; :mod:`.genesis` a seeded genesis's transactions
  mined into blocks before the chain's start.
- :mod:`.contracts`: contracts as Python objects dispatched by selector through the ABI table
  (:class:`ERC20`, :class:`WETH`); :func:`register` is the seam for more contract classes.
- :mod:`.credit`: the credit product (hub, collateral escrow, operator, earn vault, tokens).
- :mod:`.settlers`: the partner-escrow :class:`InputSettlerEscrow` and :class:`OutputSettler`;
  :mod:`.input_oracle` the :class:`InputOracle` the escrow asks for proofs of fills.
- :mod:`.bridge`: the rebalancing :class:`Bridge` (burn on send, mint on delivery).
- :mod:`.filters`: the installed log and block filters of a chain (``eth_newFilter``, ...).
- :mod:`.pools`: the service's liquidity pools as read-only :class:`LiquidityPool` contracts
  whose views answer the engine's figures.
- :mod:`.amm` and :mod:`.markets`: Uniswap V2 pairs, V3 pools and the Universal Router on
  Ethereum and Base, with the tokens they trade; :mod:`.flow`: a reference price path and
  background traders that move those pools for backtests.
- :mod:`.gas`: the gas model (one table of execution gas per function) and EIP-1559 fees.
- :mod:`.chains`: :class:`Chains`, every scenario chain with funded development accounts
  (:mod:`.accounts`), impersonation and snapshots.
- :mod:`.rpc`: :class:`Rpc`, the JSON-RPC 2.0 dispatcher (eth, net, web3 and the
  anvil/hardhat development namespace).

>>> from toolkit.clock import OffsetClock, VirtualClock
>>> from toolkit.scenario import load_scenario
>>> clock = OffsetClock(VirtualClock(1_760_000_000.0))
>>> rpc = Rpc(Chains(load_scenario("default"), genesis=clock.now()), clock)
>>> rpc.handle(1, {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber"})["result"]
'0x0'
"""

from toolkit.world.evm.accounts import DevAccount, dev_accounts
from toolkit.world.evm.admission import Rejected
from toolkit.world.evm.amm import V2PairContract, V3PoolContract
from toolkit.world.evm.bridge import Bridge
from toolkit.world.evm.chains import Chains
from toolkit.world.evm.contracts import (
    CONTRACT_CLASSES,
    Contract,
    Execution,
    Message,
    Revert,
    register,
)
from toolkit.world.evm.credit import (
    AsyncVault,
    CollateralEscrow,
    CreditHub,
    CreditOperator,
    CreditToken,
    EarnVault,
    RemoteEscrow,
)
from toolkit.world.evm.filters import BlockFilter, Criteria, LogFilter
from toolkit.world.evm.input_oracle import InputOracle
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.pools import LiquidityPool, PoolLink
from toolkit.world.evm.records import Block, Log, Receipt, Tx
from toolkit.world.evm.router import UniversalRouter
from toolkit.world.evm.rpc import Rpc, RpcError
from toolkit.world.evm.settlers import InputSettlerEscrow, OutputSettler
from toolkit.world.evm.tokens import ERC20, WETH

__all__ = [
    "CONTRACT_CLASSES",
    "ERC20",
    "WETH",
    "AsyncVault",
    "Block",
    "BlockFilter",
    "Bridge",
    "Chains",
    "CollateralEscrow",
    "Contract",
    "CreditHub",
    "CreditOperator",
    "CreditToken",
    "Criteria",
    "DevAccount",
    "EarnVault",
    "Execution",
    "InputOracle",
    "InputSettlerEscrow",
    "Ledger",
    "LiquidityPool",
    "Log",
    "LogFilter",
    "Message",
    "OutputSettler",
    "PoolLink",
    "Receipt",
    "Rejected",
    "RemoteEscrow",
    "Revert",
    "Rpc",
    "RpcError",
    "Tx",
    "UniversalRouter",
    "V2PairContract",
    "V3PoolContract",
    "dev_accounts",
    "register",
]
