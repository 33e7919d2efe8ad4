"""Standard Ethereum JSON-RPC 2.0 over the simulated chains: a pure dispatcher.

:class:`Rpc` takes a request (a dict) or a batch (a list) for one chain id and answers with
the response (None for a notification or a batch of them); :meth:`Rpc.handle_bytes` does the
same for raw bodies (-32700 for JSON that does not parse). Time comes from the clock given
(:class:`DevClock`: ``now()`` and a writable ``offset`` that the development namespace moves).

Methods: ``web3_clientVersion``, ``net_version``, ``net_listening``, ``eth_chainId``,
``eth_syncing``, ``eth_accounts``, ``eth_blockNumber``, ``eth_getBlockByNumber``,
``eth_getBlockByHash``, ``eth_getBalance``, ``eth_getTransactionCount``, ``eth_getCode``,
``eth_call``, ``eth_estimateGas``, ``eth_gasPrice``, ``eth_maxPriorityFeePerGas``,
``eth_feeHistory``, ``eth_sendRawTransaction`` (legacy EIP-155, EIP-2930 and EIP-1559),
``eth_sendTransaction`` (development and impersonated accounts), ``eth_getTransactionByHash``,
``eth_getTransactionReceipt``, ``eth_getLogs``; the filters ``eth_newFilter``,
``eth_newBlockFilter``, ``eth_getFilterChanges``, ``eth_getFilterLogs``,
``eth_uninstallFilter``; the development namespace ``evm_increaseTime``,
``evm_setNextBlockTimestamp``, ``evm_mine``, ``evm_snapshot``, ``evm_revert``,
``anvil_setBalance``, ``anvil_dealERC20``, ``anvil_impersonateAccount``,
``anvil_stopImpersonatingAccount`` (``hardhat_*`` aliases for the last four).

Errors: -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid
params (the message names the parameter), -32000 for what geth refuses (transaction
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
takes them back with it (:mod:`toolkit.world.chain.filters`).

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

>>> from toolkit.scenario import load_scenario
>>> from toolkit.world.chain import Chains, OffsetClock
>>> clock = OffsetClock(lambda: 1_760_000_000.0)
>>> rpc = Rpc(Chains(load_scenario("single-pool", env={}), genesis=clock.now()), clock)
>>> rpc.handle(8453, {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []})
{'jsonrpc': '2.0', 'id': 1, 'result': '0x2105'}
>>> rpc.handle(8453, {"jsonrpc": "2.0", "id": 2, "method": "eth_nope"})["error"]["code"]
-32601
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

import eth_abi
from eth_account import Account
from eth_account._utils.legacy_transactions import Transaction
from eth_account.typed_transactions import TypedTransaction
from eth_utils import keccak
from hexbytes import HexBytes

from toolkit.world.chain import gas
from toolkit.world.chain.chains import Chains
from toolkit.world.chain.contracts import ERC20, ERROR_SELECTOR, ZERO, Revert
from toolkit.world.chain.filters import BlockFilter, Criteria, LogFilter
from toolkit.world.chain.ledger import Block, Ledger, Log, Receipt, Rejected, Tx

__all__ = ["DevClock", "OffsetClock", "Rpc", "RpcError"]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
SERVER_ERROR: Final = -32000
EXECUTION_REVERTED: Final = 3

_QUANTITY = re.compile(r"^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$")
_DATA = re.compile(r"^0x(?:[0-9a-fA-F]{2})*$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
_EMPTY_TRIE: Final = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
_EMPTY_UNCLES: Final = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
_ZERO_HASH: Final = "0x" + "00" * 32
_EMPTY_BLOOM: Final = "0x" + "00" * 256
_MAX_BATCH: Final = 1000
_PENDING: Final = -1


class DevClock(Protocol):
    """The time the dispatcher reads and the development namespace moves, and what
    ``evm_snapshot`` keeps beside the ledgers (``save``/``restore``: the offset at least)."""

    offset: float

    def now(self) -> float: ...

    def save(self) -> Any: ...

    def restore(self, state: Any) -> None: ...


class OffsetClock:
    """A clock plus an offset (what ``evm_increaseTime`` moves).

    >>> clock = OffsetClock(lambda: 100.0)
    >>> clock.offset += 5
    >>> clock.now()
    105.0
    """

    def __init__(self, base: Callable[[], float]) -> None:
        self._base = base
        self.offset = 0.0

    def now(self) -> float:
        return float(self._base()) + self.offset

    def save(self) -> float:
        """What a snapshot keeps of this clock: its offset."""
        return self.offset

    def restore(self, state: float) -> None:
        """Go back to a saved offset."""
        self.offset = state


class RpcError(Exception):
    """A JSON-RPC error: code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def _invalid(name: str, rule: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"invalid params: {name}: {rule}")


# -- parameter parsing ---------------------------------------------------------------------------


def _quantity(value: Any, name: str) -> int:
    if isinstance(value, str) and _QUANTITY.match(value):
        return int(value, 16)
    raise _invalid(name, "must be a hex quantity (0x-prefixed, no leading zeros)")


def _address(value: Any, name: str) -> str:
    if isinstance(value, str) and _ADDRESS.match(value):
        return value.lower()
    raise _invalid(name, "must be a 0x-prefixed 20-byte hex address")


def _data(value: Any, name: str) -> bytes:
    if isinstance(value, str) and _DATA.match(value):
        return bytes.fromhex(value[2:])
    raise _invalid(name, "must be 0x-prefixed hex data of whole bytes")


def _hash32(value: Any, name: str) -> str:
    if isinstance(value, str) and _HASH.match(value):
        return value.lower()
    raise _invalid(name, "must be a 0x-prefixed 32-byte hex hash")


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise _invalid(name, "must be true or false")


def _hex(value: int) -> str:
    return hex(value)


def _params(request: dict[str, Any]) -> list[Any]:
    params = request.get("params", [])
    if params is None:
        return []
    if not isinstance(params, list):
        raise RpcError(INVALID_PARAMS, "invalid params: params: must be an array")
    return params


def _arg(params: list[Any], index: int, name: str, default: Any = ...) -> Any:
    if index < len(params) and params[index] is not None:
        return params[index]
    if default is ...:
        raise _invalid(name, "is required")
    return default


def _revert_error(exc: Revert) -> RpcError:
    message = "execution reverted"
    if exc.data[:4] == ERROR_SELECTOR:
        try:
            (reason,) = eth_abi.decode(["string"], exc.data[4:])
            message = f"execution reverted: {reason}"
        except Exception:
            pass
    return RpcError(EXECUTION_REVERTED, message, "0x" + exc.data.hex())


def bloom(logs: Sequence[Log]) -> str:
    """The 2048-bit bloom filter of ``logs`` (addresses and topics), as in a receipt."""
    bits = 0
    for log in logs:
        for item in (bytes.fromhex(log.address[2:]), *(bytes.fromhex(t[2:]) for t in log.topics)):
            digest = keccak(item)
            for i in (0, 2, 4):
                bits |= 1 << ((int.from_bytes(digest[i : i + 2], "big")) & 2047)
    return "0x" + bits.to_bytes(256, "big").hex()


# -- wire forms ----------------------------------------------------------------------------------


def _log_wire(log: Log) -> dict[str, Any]:
    return {
        "address": log.address,
        "topics": list(log.topics),
        "data": log.data,
        "blockNumber": _hex(log.block_number),
        "blockHash": log.block_hash,
        "transactionHash": log.tx_hash,
        "transactionIndex": _hex(log.tx_index),
        "logIndex": _hex(log.log_index),
        "removed": False,
    }


def _tx_wire(tx: Tx, receipt: Receipt | None, base_fee: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "hash": tx.hash,
        "type": _hex(tx.type),
        "nonce": _hex(tx.nonce),
        "from": tx.sender,
        "to": tx.to,
        "value": _hex(tx.value),
        "gas": _hex(tx.gas),
        "gasPrice": _hex(tx.price(base_fee) if receipt is not None else tx.max_fee),
        "input": "0x" + tx.data.hex(),
        "blockHash": None if receipt is None else receipt.block_hash,
        "blockNumber": None if receipt is None else _hex(receipt.block_number),
        "transactionIndex": None if receipt is None else _hex(receipt.index),
        "v": _hex(tx.v),
        "r": _hex(tx.r),
        "s": _hex(tx.s),
    }
    if tx.chain_id is not None:
        body["chainId"] = _hex(tx.chain_id)
    if tx.type:
        body["accessList"] = list(tx.access_list)
        body["yParity"] = _hex(tx.v)
    if tx.type == 2:
        body["maxFeePerGas"] = _hex(tx.max_fee)
        body["maxPriorityFeePerGas"] = _hex(tx.max_priority_fee)
    return body


def _receipt_wire(receipt: Receipt) -> dict[str, Any]:
    tx = receipt.tx
    return {
        "transactionHash": tx.hash,
        "transactionIndex": _hex(receipt.index),
        "blockHash": receipt.block_hash,
        "blockNumber": _hex(receipt.block_number),
        "from": tx.sender,
        "to": tx.to,
        "cumulativeGasUsed": _hex(receipt.cumulative_gas_used),
        "gasUsed": _hex(receipt.gas_used),
        "effectiveGasPrice": _hex(receipt.effective_gas_price),
        "contractAddress": None,
        "logs": [_log_wire(log) for log in receipt.logs],
        "logsBloom": bloom(receipt.logs) if receipt.logs else _EMPTY_BLOOM,
        "status": _hex(receipt.status),
        "type": _hex(tx.type),
    }


# -- the dispatcher ------------------------------------------------------------------------------


class _Call:
    """One request's context: the chain, its ledger and the time."""

    __slots__ = ("chain_id", "ledger", "now")

    def __init__(self, chain_id: int, ledger: Ledger, now: float) -> None:
        self.chain_id = chain_id
        self.ledger = ledger
        self.now = now


Method = Callable[["Rpc", _Call, list[Any]], Any]
_METHODS: dict[str, Method] = {}


def _method(*names: str) -> Callable[[Method], Method]:
    def register(fn: Method) -> Method:
        for name in names:
            _METHODS[name] = fn
        return fn

    return register


class Rpc:
    """The JSON-RPC dispatcher of a scenario's chains (see the module docstring)."""

    def __init__(
        self, chains: Chains, clock: DevClock, before: Callable[[float], object] | None = None
    ) -> None:
        self.chains = chains
        self.clock = clock
        #: Called with the time before every method runs, and again after a method that moved
        #: the clock (``evm_increaseTime``, ``evm_mine``, ...) with the new time: the service's
        #: relay (chain events to the world, the filler's fills and settlements).
        self.before = before

    # -- entry points ---------------------------------------------------------------------------

    def handle_bytes(self, chain_id: int, body: bytes) -> bytes | None:
        """Answer a raw request body (None: nothing to answer, only notifications)."""
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            response: Any = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": PARSE_ERROR, "message": "parse error"},
            }
        else:
            response = self.handle(chain_id, payload)
        if response is None:
            return None
        return json.dumps(response, separators=(",", ":")).encode()

    def handle(self, chain_id: int, payload: Any) -> Any:
        """Answer a request dict or a batch list (None when nothing is to be answered)."""
        if isinstance(payload, list):
            if not payload:
                return _error_response(None, RpcError(INVALID_REQUEST, "empty batch"))
            if len(payload) > _MAX_BATCH:
                return _error_response(
                    None, RpcError(INVALID_REQUEST, f"batch too large (max {_MAX_BATCH})")
                )
            answers = [self._one(chain_id, item) for item in payload]
            kept = [a for a in answers if a is not None]
            return kept or None
        return self._one(chain_id, payload)

    def _one(self, chain_id: int, request: Any) -> dict[str, Any] | None:
        if not isinstance(request, dict):
            return _error_response(None, RpcError(INVALID_REQUEST, "invalid request"))
        ident = request.get("id")
        notification = "id" not in request
        if (
            request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
            or not (ident is None or (isinstance(ident, str | int) and not isinstance(ident, bool)))
        ):
            return _error_response(
                None if not isinstance(ident, str | int) else ident,
                RpcError(INVALID_REQUEST, "invalid request"),
            )
        try:
            result = self.call(chain_id, request["method"], _params(request))
        except RpcError as exc:
            return None if notification else _error_response(ident, exc)
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def call(self, chain_id: int, method: str, params: list[Any]) -> Any:
        """Run one method; :class:`RpcError` on failure (nothing changed)."""
        fn = _METHODS.get(method)
        if fn is None:
            raise RpcError(METHOD_NOT_FOUND, f"the method {method} does not exist/is not available")
        try:
            ledger = self.chains.ledger(chain_id)
        except KeyError:
            raise RpcError(SERVER_ERROR, f"chain {chain_id} is not in the scenario") from None
        now = self.clock.now()
        if self.before is not None:
            self.before(now)
        result = fn(self, _Call(chain_id, ledger, now), params)
        if self.before is not None:
            after = self.clock.now()
            if after != now:  # the method moved the clock: what fell due acts at once
                self.before(after)
        return result

    # -- helpers --------------------------------------------------------------------------------

    def _block_number(self, c: _Call, value: Any, name: str, *, state: bool = False) -> int:
        """A block tag or number; ``_PENDING`` for pending. With ``state`` only the latest
        state (or pending) is accepted."""
        latest = c.ledger.block_number(c.now)
        if value in ("latest", "safe", "finalized"):
            return latest
        if value == "pending":
            return _PENDING
        if value == "earliest":
            number = 0
        elif isinstance(value, dict):
            if "blockNumber" in value:
                number = _quantity(value["blockNumber"], f"{name}.blockNumber")
            elif "blockHash" in value:
                found = c.ledger.number_of(_hash32(value["blockHash"], f"{name}.blockHash"), c.now)
                if found is None:
                    raise RpcError(SERVER_ERROR, "header for hash not found")
                number = found
            else:
                raise _invalid(name, "must hold blockNumber or blockHash")
        elif isinstance(value, str) and _QUANTITY.match(value):
            number = int(value, 16)
        else:
            raise _invalid(
                name, "must be a block number or latest, earliest, pending, safe, finalized"
            )
        if state:
            if number > latest:
                raise RpcError(SERVER_ERROR, "header not found")
            if number < latest:
                raise RpcError(
                    SERVER_ERROR,
                    f"historical state is not available: block {number} "
                    f"(the simulated chain keeps the latest state only, block {latest})",
                )
        return number

    def _block_wire(self, c: _Call, number: int, full: bool) -> dict[str, Any] | None:
        ledger = c.ledger
        latest = ledger.block_number(c.now)
        pending = number == _PENDING
        if pending:
            txs, number = ledger.pending()
            if not txs:
                number = latest + 1
            block: Block | None = None
        else:
            if number > latest:
                return None
            block = ledger.block(number)
            txs = [] if block is None else [r.tx for r in block.receipts]
        receipts = {} if block is None else {r.tx.hash: r for r in block.receipts}
        logs = [log for r in receipts.values() for log in r.logs]
        tx_root = (
            _EMPTY_TRIE
            if not txs
            else "0x" + keccak(b"".join(bytes.fromhex(t.hash[2:]) for t in txs)).hex()
        )
        body: dict[str, Any] = {
            "number": _hex(number),
            "hash": None if pending else ledger.block_hash(number),
            "parentHash": _ZERO_HASH if number == 0 else ledger.block_hash(number - 1),
            "nonce": None if pending else "0x0000000000000000",
            "mixHash": _ZERO_HASH,
            "sha3Uncles": _EMPTY_UNCLES,
            "logsBloom": bloom(logs) if logs else _EMPTY_BLOOM,
            "transactionsRoot": tx_root,
            "stateRoot": "0x" + keccak(b"state" + number.to_bytes(8, "big")).hex(),
            "receiptsRoot": _EMPTY_TRIE if not txs else tx_root,
            "miner": None if pending else ledger.coinbase,
            "difficulty": "0x0",
            "totalDifficulty": "0x0",
            "extraData": "0x",
            "size": _hex(600 + 120 * len(txs)),
            "gasLimit": _hex(gas.BLOCK_GAS_LIMIT),
            "gasUsed": _hex(0 if block is None else block.gas_used),
            "timestamp": _hex(ledger.block_timestamp(number)),
            "baseFeePerGas": _hex(ledger.base_fee),
            "uncles": [],
            "withdrawals": [],
            "withdrawalsRoot": _EMPTY_TRIE,
            "transactions": [
                _tx_wire(t, receipts.get(t.hash), ledger.base_fee) if full else t.hash for t in txs
            ],
        }
        return body

    def _tip(self, ledger: Ledger) -> int:
        return max(1, ledger.base_fee // 5)

    def _call_object(self, value: Any, name: str) -> tuple[str, str | None, bytes, int, int | None]:
        if not isinstance(value, dict):
            raise _invalid(name, "must be a transaction call object")
        sender = _address(value.get("from", ZERO), f"{name}.from")
        to = None if value.get("to") is None else _address(value["to"], f"{name}.to")
        raw = value.get("input", value.get("data"))
        data = b"" if raw is None else _data(raw, f"{name}.input")
        amount = 0 if value.get("value") is None else _quantity(value["value"], f"{name}.value")
        limit = None if value.get("gas") is None else _quantity(value["gas"], f"{name}.gas")
        return sender, to, data, amount, limit

    def _simulate(self, c: _Call, params: list[Any]) -> tuple[bytes, int, int | None]:
        sender, to, data, value, limit = self._call_object(
            _arg(params, 0, "transaction"), "transaction"
        )
        self._block_number(c, _arg(params, 1, "block", "latest"), "block", state=True)
        try:
            result = c.ledger.call(sender, to, data, value, c.now)
        except Revert as exc:
            raise _revert_error(exc) from None
        except Rejected as exc:
            raise RpcError(SERVER_ERROR, str(exc)) from None
        return result.output, result.gas, limit

    def _submit(self, c: _Call, tx: Tx) -> str:
        try:
            return c.ledger.submit(tx, c.now)
        except Rejected as exc:
            raise RpcError(SERVER_ERROR, str(exc)) from None

    # -- eth ------------------------------------------------------------------------------------

    @_method("web3_clientVersion")
    def _client_version(self, c: _Call, params: list[Any]) -> Any:
        return "toolkit-simulated-chain/0.1"

    @_method("eth_chainId")
    def _chain_id(self, c: _Call, params: list[Any]) -> Any:
        return _hex(c.chain_id)

    @_method("net_version")
    def _net_version(self, c: _Call, params: list[Any]) -> Any:
        return str(c.chain_id)

    @_method("net_listening")
    def _net_listening(self, c: _Call, params: list[Any]) -> Any:
        return True

    @_method("eth_syncing")
    def _syncing(self, c: _Call, params: list[Any]) -> Any:
        return False

    @_method("eth_accounts")
    def _accounts(self, c: _Call, params: list[Any]) -> Any:
        return [a.address.lower() for a in self.chains.accounts]

    @_method("eth_blockNumber")
    def _block_number_method(self, c: _Call, params: list[Any]) -> Any:
        return _hex(c.ledger.block_number(c.now))

    @_method("eth_getBlockByNumber")
    def _block_by_number(self, c: _Call, params: list[Any]) -> Any:
        number = self._block_number(c, _arg(params, 0, "block"), "block")
        full = _bool(_arg(params, 1, "fullTransactions", False), "fullTransactions")
        return self._block_wire(c, number, full)

    @_method("eth_getBlockByHash")
    def _block_by_hash(self, c: _Call, params: list[Any]) -> Any:
        block_hash = _hash32(_arg(params, 0, "blockHash"), "blockHash")
        full = _bool(_arg(params, 1, "fullTransactions", False), "fullTransactions")
        number = c.ledger.number_of(block_hash, c.now)
        return None if number is None else self._block_wire(c, number, full)

    @_method("eth_getBalance")
    def _balance(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        self._block_number(c, _arg(params, 1, "block", "latest"), "block", state=True)
        return _hex(c.ledger.balance(address, c.now))

    @_method("eth_getTransactionCount")
    def _transaction_count(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        block = self._block_number(c, _arg(params, 1, "block", "latest"), "block", state=True)
        return _hex(c.ledger.nonce(address, c.now, pending=block == _PENDING))

    @_method("eth_getCode")
    def _code(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        self._block_number(c, _arg(params, 1, "block", "latest"), "block", state=True)
        return "0x" + c.ledger.code(address, c.now).hex()

    @_method("eth_call")
    def _eth_call(self, c: _Call, params: list[Any]) -> Any:
        output, _, _ = self._simulate(c, params)
        return "0x" + output.hex()

    @_method("eth_estimateGas")
    def _estimate(self, c: _Call, params: list[Any]) -> Any:
        _, needed, limit = self._simulate(c, params)
        if limit is not None and limit < needed:
            raise RpcError(SERVER_ERROR, f"gas required exceeds allowance ({limit})")
        return _hex(needed)

    @_method("eth_gasPrice")
    def _gas_price(self, c: _Call, params: list[Any]) -> Any:
        return _hex(c.ledger.base_fee + self._tip(c.ledger))

    @_method("eth_maxPriorityFeePerGas")
    def _priority_fee(self, c: _Call, params: list[Any]) -> Any:
        return _hex(self._tip(c.ledger))

    @_method("eth_feeHistory")
    def _fee_history(self, c: _Call, params: list[Any]) -> Any:
        raw_count = _arg(params, 0, "blockCount")
        count = raw_count if type(raw_count) is int else _quantity(raw_count, "blockCount")
        if not 1 <= count <= 1024:
            raise _invalid("blockCount", "must be between 1 and 1024")
        newest = self._block_number(c, _arg(params, 1, "newestBlock"), "newestBlock")
        latest = c.ledger.block_number(c.now)
        newest = latest if newest in (_PENDING,) or newest > latest else newest
        raw_percentiles = _arg(params, 2, "rewardPercentiles", None)
        percentiles: list[float] | None = None
        if raw_percentiles is not None:
            if not isinstance(raw_percentiles, list) or not all(
                isinstance(p, int | float) and not isinstance(p, bool) and 0 <= p <= 100
                for p in raw_percentiles
            ):
                raise _invalid("rewardPercentiles", "must be an array of numbers from 0 to 100")
            if raw_percentiles != sorted(raw_percentiles):
                raise _invalid("rewardPercentiles", "must be in ascending order")
            percentiles = [float(p) for p in raw_percentiles]
        oldest = max(0, newest - count + 1)
        base = c.ledger.base_fee
        ratios, rewards = [], []
        for number in range(oldest, newest + 1):
            block = c.ledger.block(number)
            ratios.append(0.0 if block is None else block.gas_used / gas.BLOCK_GAS_LIMIT)
            if percentiles is not None:
                tips = sorted(
                    r.effective_gas_price - base for r in (block.receipts if block else ())
                )
                rewards.append(
                    [
                        _hex(tips[min(len(tips) - 1, int(p / 100 * len(tips)))] if tips else 0)
                        for p in percentiles
                    ]
                )
        body: dict[str, Any] = {
            "oldestBlock": _hex(oldest),
            "baseFeePerGas": [_hex(base)] * (newest - oldest + 2),
            "gasUsedRatio": ratios,
        }
        if percentiles is not None:
            body["reward"] = rewards
        return body

    @_method("eth_sendRawTransaction")
    def _send_raw(self, c: _Call, params: list[Any]) -> Any:
        raw = _data(_arg(params, 0, "data"), "data")
        return self._submit(c, _decode_raw(raw))

    @_method("eth_sendTransaction")
    def _send(self, c: _Call, params: list[Any]) -> Any:
        request = _arg(params, 0, "transaction")
        sender, to, data, value, limit = self._call_object(request, "transaction")
        if "from" not in request:
            raise _invalid("transaction.from", "is required")
        if not self.chains.can_send(c.chain_id, sender):
            raise RpcError(SERVER_ERROR, "unknown account")
        if to is None:
            raise RpcError(
                SERVER_ERROR, "contract creation is not supported by the simulated chain"
            )
        ledger = c.ledger
        nonce = (
            ledger.nonce(sender, c.now, pending=True)
            if request.get("nonce") is None
            else _quantity(request["nonce"], "transaction.nonce")
        )
        if limit is None:
            try:
                limit = ledger.call(sender, to, data, value, c.now).gas
            except Revert as exc:
                raise _revert_error(exc) from None
            except Rejected as exc:
                raise RpcError(SERVER_ERROR, str(exc)) from None
        if request.get("gasPrice") is not None:
            kind = 0
            max_fee = tip = _quantity(request["gasPrice"], "transaction.gasPrice")
        else:
            kind = 2
            raw_tip = request.get("maxPriorityFeePerGas")
            tip = (
                self._tip(ledger)
                if raw_tip is None
                else _quantity(raw_tip, "transaction.maxPriorityFeePerGas")
            )
            raw_fee = request.get("maxFeePerGas")
            max_fee = (
                2 * ledger.base_fee + tip
                if raw_fee is None
                else _quantity(raw_fee, "transaction.maxFeePerGas")
            )
        digest = keccak(
            b"toolkit unsigned tx"
            + c.chain_id.to_bytes(8, "big")
            + bytes.fromhex(sender[2:])
            + nonce.to_bytes(32, "big")
            + bytes.fromhex(to[2:])
            + data
        )
        tx = Tx(
            "0x" + digest.hex(),
            kind,
            c.chain_id,
            sender,
            nonce,
            to,
            value,
            data,
            limit,
            max_fee,
            tip,
        )
        return self._submit(c, tx)

    @_method("eth_getTransactionByHash")
    def _transaction(self, c: _Call, params: list[Any]) -> Any:
        tx_hash = _hash32(_arg(params, 0, "transactionHash"), "transactionHash")
        found = c.ledger.transaction(tx_hash, c.now)
        if found is None:
            return None
        tx, receipt = found
        return _tx_wire(tx, receipt, c.ledger.base_fee)

    @_method("eth_getTransactionReceipt")
    def _receipt(self, c: _Call, params: list[Any]) -> Any:
        tx_hash = _hash32(_arg(params, 0, "transactionHash"), "transactionHash")
        receipt = c.ledger.receipt(tx_hash, c.now)
        return None if receipt is None else _receipt_wire(receipt)

    @_method("eth_getLogs")
    def _logs(self, c: _Call, params: list[Any]) -> Any:
        query = _arg(params, 0, "filter")
        if not isinstance(query, dict):
            raise _invalid("filter", "must be a filter object")
        criteria = _criteria(query)
        ledger = c.ledger
        latest = ledger.block_number(c.now)
        if query.get("blockHash") is not None:
            first = last = self._filter_block_hash(c, query)
        else:
            first = self._block_number(c, query.get("fromBlock") or "latest", "filter.fromBlock")
            last = self._block_number(c, query.get("toBlock") or "latest", "filter.toBlock")
            first = latest if first == _PENDING else first
            last = latest if last == _PENDING else min(last, latest)
            if first > last and first <= latest:
                raise RpcError(SERVER_ERROR, "invalid block range params")
        return [_log_wire(log) for log in ledger.logs(first, last) if criteria.matches(log)]

    def _filter_block_hash(self, c: _Call, query: dict[str, Any]) -> int:
        if query.get("fromBlock") is not None or query.get("toBlock") is not None:
            raise RpcError(SERVER_ERROR, "can't specify fromBlock/toBlock with blockHash")
        number = c.ledger.number_of(_hash32(query["blockHash"], "filter.blockHash"), c.now)
        if number is None:
            raise RpcError(SERVER_ERROR, "unknown block")
        return number

    # -- filters --------------------------------------------------------------------------------

    def _filter_bound(self, value: Any, name: str) -> int | None:
        """A filter's fromBlock/toBlock: None for latest (and pending, safe, finalized)."""
        if value is None or value in ("latest", "pending", "safe", "finalized"):
            return None
        if value == "earliest":
            return 0
        if isinstance(value, str) and _QUANTITY.match(value):
            return int(value, 16)
        raise _invalid(name, "must be a block number or latest, earliest, pending, safe, finalized")

    @_method("eth_newFilter")
    def _new_filter(self, c: _Call, params: list[Any]) -> Any:
        query = _arg(params, 0, "filter")
        if not isinstance(query, dict):
            raise _invalid("filter", "must be a filter object")
        criteria = _criteria(query)
        if query.get("blockHash") is not None:
            block = self._filter_block_hash(c, query)
            return c.ledger.install_filter(LogFilter(criteria, block, block, block), c.now)
        first = self._filter_bound(query.get("fromBlock"), "filter.fromBlock")
        last = self._filter_bound(query.get("toBlock"), "filter.toBlock")
        # geth's combinations: latest..latest, n..latest and n..m with m >= n
        if last is not None and (first is None or last < first):
            raise RpcError(SERVER_ERROR, "invalid from and to block combination")
        return c.ledger.install_filter(LogFilter(criteria, first, last), c.now)

    @_method("eth_newBlockFilter")
    def _new_block_filter(self, c: _Call, params: list[Any]) -> Any:
        return c.ledger.install_filter(BlockFilter(0), c.now)

    @_method("eth_getFilterChanges")
    def _filter_changes(self, c: _Call, params: list[Any]) -> Any:
        changes = c.ledger.filter_changes(_filter_id(params), c.now)
        if changes is None:
            raise RpcError(SERVER_ERROR, "filter not found")
        return [item if isinstance(item, str) else _log_wire(item) for item in changes]

    @_method("eth_getFilterLogs")
    def _filter_logs(self, c: _Call, params: list[Any]) -> Any:
        logs = c.ledger.filter_logs(_filter_id(params), c.now)
        if logs is None:
            raise RpcError(SERVER_ERROR, "filter not found")
        return [_log_wire(log) for log in logs]

    @_method("eth_uninstallFilter")
    def _uninstall_filter(self, c: _Call, params: list[Any]) -> Any:
        return c.ledger.filters.uninstall(_filter_id(params))

    # -- the development namespace --------------------------------------------------------------

    @_method("evm_increaseTime")
    def _increase_time(self, c: _Call, params: list[Any]) -> Any:
        raw = _arg(params, 0, "seconds")
        seconds = raw if type(raw) is int else _quantity(raw, "seconds")
        if seconds < 0:
            raise _invalid("seconds", "must be >= 0 (time never goes back)")
        self.clock.offset += seconds
        return _hex(int(self.clock.offset))

    @_method("evm_setNextBlockTimestamp")
    def _set_next_timestamp(self, c: _Call, params: list[Any]) -> Any:
        raw = _arg(params, 0, "timestamp")
        target = raw if type(raw) is int else _quantity(raw, "timestamp")
        latest = c.ledger.block_number(c.now)
        if target <= c.ledger.block_timestamp(latest) or target < c.now:
            raise RpcError(
                SERVER_ERROR,
                f"timestamp error: {target} is lower than or equal to the latest block's "
                f"timestamp or the current time",
            )
        self.clock.offset += target - c.now
        return None

    @_method("evm_mine", "anvil_mine")
    def _mine(self, c: _Call, params: list[Any]) -> Any:
        if params and params[0] is not None and not isinstance(params[0], dict):
            raw = params[0]
            target = raw if type(raw) is int else _quantity(raw, "timestamp")
            if target > c.now:
                self.clock.offset += target - c.now
                c = _Call(c.chain_id, c.ledger, self.clock.now())
        ledger = c.ledger
        _, pool_block = ledger.pending()
        due = ledger.next_slot_time(c.now)
        if ledger.pending()[0]:
            due = max(due, ledger.block_timestamp(pool_block))
        if due > c.now:
            self.clock.offset += due - c.now
        ledger.mine_due(self.clock.now())
        return "0x0"

    @_method("evm_snapshot", "anvil_snapshot")
    def _snapshot(self, c: _Call, params: list[Any]) -> Any:
        return _hex(self.chains.snapshot(self.clock.save()))

    @_method("evm_revert", "anvil_revert")
    def _revert(self, c: _Call, params: list[Any]) -> Any:
        key = _quantity(_arg(params, 0, "snapshotId"), "snapshotId")
        done, state = self.chains.revert(key)
        if done:
            self.clock.restore(state)
        return done

    @_method("anvil_setBalance", "hardhat_setBalance")
    def _set_balance(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        amount = _quantity(_arg(params, 1, "balance"), "balance")
        c.ledger.set_balance(address, amount, c.now)
        return None

    @_method("anvil_dealERC20")
    def _deal(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        token = _address(_arg(params, 1, "token"), "token")
        amount = _quantity(_arg(params, 2, "balance"), "balance")
        contract = c.ledger.contract(token)
        if not isinstance(contract, ERC20):
            raise _invalid("token", f"no ERC-20 token at {token} on chain {c.chain_id}")
        run = c.ledger.direct(c.now)
        have = contract.balances.get(address, 0)
        if amount >= have:
            contract.mint(run, address, amount - have)
        else:
            contract.mint(run, address, 0)
            run.write(contract.balances, address, amount)
            run.write(contract.supply, "total", contract.supply["total"] - (have - amount))
        return None

    @_method("anvil_impersonateAccount", "hardhat_impersonateAccount")
    def _impersonate(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        self.chains.impersonated[c.chain_id].add(address)
        return None

    @_method("anvil_stopImpersonatingAccount", "hardhat_stopImpersonatingAccount")
    def _stop_impersonating(self, c: _Call, params: list[Any]) -> Any:
        address = _address(_arg(params, 0, "address"), "address")
        self.chains.impersonated[c.chain_id].discard(address)
        return None


def _error_response(ident: Any, exc: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": exc.body()}


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


def _filter_id(params: list[Any]) -> str:
    value = _arg(params, 0, "filterId")
    if not isinstance(value, str):
        raise _invalid("filterId", "must be a filter id (a 0x-prefixed hex string)")
    return value.lower()


def _criteria(query: dict[str, Any]) -> Criteria:
    """The address and topic rules of a filter object (geth's semantics, see :class:`Criteria`)."""
    return Criteria(_address_filter(query.get("address")), _topic_filter(query.get("topics")))


def _address_filter(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return frozenset(_address(a, f"filter.address[{i}]") for i, a in enumerate(value))
    return frozenset((_address(value, "filter.address"),))


def _topic_filter(value: Any) -> tuple[frozenset[str] | None, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > 4:
        raise _invalid("filter.topics", "must be an array of at most 4 positions")
    positions: list[frozenset[str] | None] = []
    for i, position in enumerate(value):
        if position is None:
            positions.append(None)
        elif isinstance(position, list):
            if not position:
                positions.append(None)  # an empty OR-list matches anything, as in geth
            else:
                positions.append(frozenset(_hash32(t, f"filter.topics[{i}]") for t in position))
        else:
            positions.append(frozenset((_hash32(position, f"filter.topics[{i}]"),)))
    return tuple(positions)
