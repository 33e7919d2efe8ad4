"""Logs and filters: ``eth_getLogs``, the log and block filters, and geth's filter object
(addresses, topics, block range or hash)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolkit.world.evm.filters import BlockFilter, Criteria, LogFilter
from toolkit.world.evm.records import Log
from toolkit.world.evm.rpc.errors import SERVER_ERROR, RpcError, invalid
from toolkit.world.evm.rpc.limits import (
    LIMIT_EXCEEDED,
    MAX_FILTER_CHANGES,
    MAX_LOG_RANGE,
    MAX_LOG_RESULTS,
)
from toolkit.world.evm.rpc.params import PENDING, QUANTITY, address, arg, block_number, hash32
from toolkit.world.evm.rpc.registry import Call, Host, Method, registrar
from toolkit.world.evm.rpc.wire import log_wire

METHODS: dict[str, Method] = {}
_method = registrar(METHODS)


@_method("eth_getLogs")
def _logs(rpc: Host, c: Call, params: list[Any]) -> Any:
    query = arg(params, 0, "filter")
    if not isinstance(query, dict):
        raise invalid("filter", "must be a filter object")
    criteria = _criteria(query)
    ledger = c.ledger
    latest = ledger.block_number(c.now)
    if query.get("blockHash") is not None:
        first = last = _filter_block_hash(c, query)
    else:
        first = block_number(c, query.get("fromBlock") or "latest", "filter.fromBlock")
        last = block_number(c, query.get("toBlock") or "latest", "filter.toBlock")
        first = latest if first == PENDING else first
        last = latest if last == PENDING else min(last, latest)
        if first > last and first <= latest:
            raise RpcError(SERVER_ERROR, "invalid block range params")
    return _bounded_logs(ledger.logs(first, last), criteria, first, last)


def _bounded_logs(found: Iterable[Log], criteria: Criteria, first: int, last: int) -> list[Any]:
    """The wire form of the logs ``criteria`` match, within the range and result limits."""
    if last - first + 1 > MAX_LOG_RANGE:
        raise RpcError(
            LIMIT_EXCEEDED,
            f"block range too large: {last - first + 1} blocks, the limit is {MAX_LOG_RANGE} "
            "(split fromBlock..toBlock)",
        )
    answer: list[dict[str, Any]] = []
    for log in found:
        if criteria.matches(log):
            if len(answer) == MAX_LOG_RESULTS:
                raise RpcError(
                    LIMIT_EXCEEDED,
                    f"query returned more than {MAX_LOG_RESULTS} results (the limit): "
                    "narrow the block range or the filter",
                )
            answer.append(log_wire(log))
    return answer


def _filter_block_hash(c: Call, query: dict[str, Any]) -> int:
    if query.get("fromBlock") is not None or query.get("toBlock") is not None:
        raise RpcError(SERVER_ERROR, "can't specify fromBlock/toBlock with blockHash")
    number = c.ledger.number_of(hash32(query["blockHash"], "filter.blockHash"), c.now)
    if number is None:
        raise RpcError(SERVER_ERROR, "unknown block")
    return number


# -- filters --------------------------------------------------------------------------------------


def _filter_bound(value: Any, name: str) -> int | None:
    """A filter's fromBlock/toBlock: None for latest (and pending, safe, finalized)."""
    if value is None or value in ("latest", "pending", "safe", "finalized"):
        return None
    if value == "earliest":
        return 0
    if isinstance(value, str) and QUANTITY.match(value):
        return int(value, 16)
    raise invalid(name, "must be a block number or latest, earliest, pending, safe, finalized")


@_method("eth_newFilter")
def _new_filter(rpc: Host, c: Call, params: list[Any]) -> Any:
    query = arg(params, 0, "filter")
    if not isinstance(query, dict):
        raise invalid("filter", "must be a filter object")
    criteria = _criteria(query)
    if query.get("blockHash") is not None:
        block = _filter_block_hash(c, query)
        return c.ledger.install_filter(LogFilter(criteria, block, block, block), c.now)
    first = _filter_bound(query.get("fromBlock"), "filter.fromBlock")
    last = _filter_bound(query.get("toBlock"), "filter.toBlock")
    # geth's combinations: latest..latest, n..latest and n..m with m >= n
    if last is not None and (first is None or last < first):
        raise RpcError(SERVER_ERROR, "invalid from and to block combination")
    return c.ledger.install_filter(LogFilter(criteria, first, last), c.now)


@_method("eth_newBlockFilter")
def _new_block_filter(rpc: Host, c: Call, params: list[Any]) -> Any:
    return c.ledger.install_filter(BlockFilter(0), c.now)


@_method("eth_getFilterChanges")
def _filter_changes(rpc: Host, c: Call, params: list[Any]) -> Any:
    changes = c.ledger.filter_changes(_filter_id(params), c.now, MAX_FILTER_CHANGES)
    if changes is None:
        raise RpcError(SERVER_ERROR, "filter not found")
    return [item if isinstance(item, str) else log_wire(item) for item in changes]


@_method("eth_getFilterLogs")
def _filter_logs(rpc: Host, c: Call, params: list[Any]) -> Any:
    # What eth_getLogs would answer for the filter's criteria, ``latest`` read now.
    flt = c.ledger.filters.get(_filter_id(params))
    if not isinstance(flt, LogFilter):
        raise RpcError(SERVER_ERROR, "filter not found")
    latest = c.ledger.block_number(c.now)
    if flt.block is not None:
        first = last = flt.block
    else:
        first = latest if flt.first is None else flt.first
        last = latest if flt.last is None else min(latest, flt.last)
    return _bounded_logs(c.ledger.logs(first, last), flt.criteria, first, last)


@_method("eth_uninstallFilter")
def _uninstall_filter(rpc: Host, c: Call, params: list[Any]) -> Any:
    return c.ledger.filters.uninstall(_filter_id(params))


def _filter_id(params: list[Any]) -> str:
    value = arg(params, 0, "filterId")
    if not isinstance(value, str):
        raise invalid("filterId", "must be a filter id (a 0x-prefixed hex string)")
    return value.lower()


def _criteria(query: dict[str, Any]) -> Criteria:
    """The address and topic rules of a filter object (geth's semantics, see :class:`Criteria`)."""
    return Criteria(_address_filter(query.get("address")), _topic_filter(query.get("topics")))


def _address_filter(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return frozenset(address(a, f"filter.address[{i}]") for i, a in enumerate(value))
    return frozenset((address(value, "filter.address"),))


def _topic_filter(value: Any) -> tuple[frozenset[str] | None, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > 4:
        raise invalid("filter.topics", "must be an array of at most 4 positions")
    positions: list[frozenset[str] | None] = []
    for i, position in enumerate(value):
        if position is None:
            positions.append(None)
        elif isinstance(position, list):
            if not position:
                positions.append(None)  # an empty OR-list matches anything, as in geth
            else:
                positions.append(frozenset(hash32(t, f"filter.topics[{i}]") for t in position))
        else:
            positions.append(frozenset((hash32(position, f"filter.topics[{i}]"),)))
    return tuple(positions)
