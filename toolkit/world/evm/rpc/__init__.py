"""Standard Ethereum JSON-RPC 2.0 over the simulated chains: a pure dispatcher.

:class:`Rpc` takes a request (a dict) or a batch (a list) for one chain id and answers with
the response (None for a notification or a batch of them); :meth:`Rpc.handle_bytes` does the
same for raw bodies (-32700 for JSON that does not parse). Time comes from the clock given
(a :class:`toolkit.clock.OffsetClock`: ``now()`` and the ``offset`` the development namespace
moves).

Methods: ``web3_clientVersion``, ``net_version``, ``net_listening``, ``eth_chainId``,
``eth_syncing``, ``eth_accounts``, ``eth_blockNumber``, ``eth_getBlockByNumber``,
``eth_getBlockByHash``, ``eth_getBalance``, ``eth_getTransactionCount``, ``eth_getCode``,
``eth_call``, ``eth_estimateGas``, ``eth_gasPrice``, ``eth_maxPriorityFeePerGas``,
``eth_feeHistory``, ``eth_sendRawTransaction`` (legacy EIP-155, EIP-2930 and EIP-1559),
``eth_sendTransaction`` (development and impersonated accounts), ``eth_getTransactionByHash``,
``eth_getTransactionReceipt``, ``eth_getLogs``; the filters ``eth_newFilter``,
``eth_newBlockFilter``, ``eth_getFilterChanges``, ``eth_getFilterLogs``,
``eth_uninstallFilter``; the development namespace ``evm_increaseTime``,
``evm_setNextBlockTimestamp`` (``anvil_*`` aliases for both), ``evm_mine`` (anvil's and
ganache's forms: ``[]``, ``[timestamp]``, ``[{timestamp?, blocks?}]``), ``anvil_mine`` /
``hardhat_mine`` (``[blocks?, interval?]``: that many blocks; the interval moves the clock at
least ``blocks * interval`` seconds, blocks keeping to the chain's slot grid),
``evm_snapshot``, ``evm_revert``, ``anvil_setBalance``, ``anvil_dealERC20``,
``anvil_impersonateAccount``, ``anvil_stopImpersonatingAccount`` (``hardhat_*`` aliases for
the last four). ``eth_accounts`` lists the development accounts, then the chain's impersonated
ones (as anvil and ganache do).

Limits: each request's work is bounded the way production nodes bound it (batch size, answer
size, fee-history blocks, log range and results, filter-poll size, nesting depth, quantities to
their types' ranges); :mod:`.limits` lists them, each refusal names its limit. Every failure is
a JSON-RPC error (a bug is -32603 ``internal error``), never an exception out of
:meth:`Rpc.handle_bytes`.

Errors: -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid
params (the message names the parameter), -32003 response too large, -32005 a log query past
its limits, -32603 internal error, -32000 for what geth refuses (transaction
rejections with geth's messages, unknown blocks), 3 ``execution reverted`` with the revert data
for ``eth_call``/``eth_estimateGas``/``eth_sendTransaction``. An error changes nothing.

Logs: ``eth_getLogs`` and ``eth_newFilter`` take geth's filter object: ``address`` (one or a
list; an empty list matches any), ``topics`` (up to 4 positions, each None, a topic or an
OR-list; an empty OR-list matches anything), and either ``blockHash`` or ``fromBlock``/``toBlock``
(numbers or tags: ``earliest`` is block 0; ``latest``, ``safe``, ``finalized`` and ``pending``
are the latest block, as the pool has no logs). ``eth_getFilterChanges`` answers the logs of the
blocks mined since the last poll (or the installation: never older ones) within the filter's
range, a block filter the hashes of those blocks; ``eth_getFilterLogs`` answers what
``eth_getLogs`` would for the filter's criteria, ``latest`` read at the call. As in geth, a
filter's range is ``latest..latest``, ``n..latest`` or ``n..m`` with ``m >= n`` (otherwise
-32000 ``invalid from and to block combination``), an unknown filter id is -32000 ``filter not
found`` and ``eth_uninstallFilter`` answers whether a filter was removed. Filters belong to a
chain (an id from another chain's URL is not found) and live in its ledger, so ``evm_revert``
takes them back with it (:mod:`toolkit.world.evm.filters`).

State reads take a block tag; only the latest state is kept, so a block older than the latest
is refused (-32000 ``historical state is not available``). ``pending`` reads the latest state
except for nonces, which count the pool.

Time in the development namespace: ``evm_increaseTime`` and ``evm_setNextBlockTimestamp`` move
the clock's offset, i.e. every timer of the service; blocks stay on each chain's slot grid, so
the next block after ``evm_setNextBlockTimestamp(t)`` is the first slot at or after ``t``.
``evm_mine`` moves the clock to the next slot of the chain and mines the pool there. A method
that moved the clock runs the ``before`` hook again at the new time, so what the service's
filler owes at that time (fills, settlements) is sent before the answer.
``evm_snapshot`` saves every chain's ledger and what the clock's ``save`` keeps (the offset; the
embedded service adds its engine and world); ``evm_revert`` restores them.

The package, by module: :mod:`.dispatcher` (:class:`Rpc`: requests, batches, the method table),
:mod:`.state` (node and state reads, blocks), :mod:`.calls` (``eth_call``, gas estimation),
:mod:`.fees`, :mod:`.transactions` (sending, reading back, raw decoding), :mod:`.logs` (logs and
filters) and :mod:`.development` (``evm_*``/``anvil_*``); they share :mod:`.params` (quantities,
data, addresses, hashes, block tags, call objects), :mod:`.wire` (geth's wire forms, the bloom),
:mod:`.errors` (codes, :class:`RpcError`) and :mod:`.registry` (a method's context and tables).
The clock is a :class:`toolkit.clock.OffsetClock`.

>>> from toolkit.scenario import load_scenario
>>> from toolkit.clock import OffsetClock, VirtualClock
>>> from toolkit.world.evm import Chains
>>> clock = OffsetClock(VirtualClock(1_760_000_000.0))
>>> rpc = Rpc(Chains(load_scenario("single-pool"), genesis=clock.now()), clock)
>>> rpc.handle(8453, {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})
{'jsonrpc': '2.0', 'id': 1, 'result': '0x2105'}
>>> rpc.handle(8453, {"jsonrpc": "2.0", "id": 2, "method": "eth_nope"})["error"]["code"]
-32601
"""

from toolkit.world.evm.rpc.dispatcher import Rpc
from toolkit.world.evm.rpc.errors import EXECUTION_REVERTED as EXECUTION_REVERTED
from toolkit.world.evm.rpc.errors import INVALID_PARAMS as INVALID_PARAMS
from toolkit.world.evm.rpc.errors import INVALID_REQUEST as INVALID_REQUEST
from toolkit.world.evm.rpc.errors import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from toolkit.world.evm.rpc.errors import PARSE_ERROR as PARSE_ERROR
from toolkit.world.evm.rpc.errors import SERVER_ERROR as SERVER_ERROR
from toolkit.world.evm.rpc.errors import RpcError
from toolkit.world.evm.rpc.registry import Method as Method
from toolkit.world.evm.rpc.wire import bloom as bloom

__all__ = ["Rpc", "RpcError"]
