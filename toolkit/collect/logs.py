"""``eth_getLogs`` answers as the rows of the chain tables (:func:`log_rows`: tokens here, pools
in :mod:`~toolkit.collect.pool_events`, settlers' orders in
:mod:`~toolkit.collect.order_events`), blocks as ``chain_blocks`` rows: addresses lowercase,
amounts exact (``amount_text`` always, ``amount`` HUGEINT unless it exceeds it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.events import EVENTS, decode_log
from toolkit.collect.order_events import ORDER_TABLES, order_event_rows
from toolkit.collect.pool_events import POOL_TABLES, nft_transfer_row, pool_event_row
from toolkit.collect.rpc import hex_int, hex_text

__all__ = ["block_row", "log_rows"]

_HUGEINT_MAX = 2**127 - 1
_TRANSFER = EVENTS["erc20.Transfer"].topic0


def _amount(value: int) -> int | None:
    return value if value <= _HUGEINT_MAX else None


# Every event of the table has static parameters (address, uint256): they are read straight
# from the words of topics and data. Anything else goes through ``decode_log``.
_STATIC = {"address", "uint256"}
_FAST = {
    event.topic0: (
        event.key,
        event.params,
        sum(1 for p in event.params if p[2]),  # indexed: read from the topics
        sum(1 for p in event.params if not p[2]),  # the rest: one data word each
    )
    for event in EVENTS.values()
    if all(t in _STATIC for t, _, _ in event.params)
}


def _decode(topics: Sequence[str], data: str) -> tuple[str, dict[str, Any]] | None:
    fast = _FAST.get(topics[0]) if topics else None
    if fast is None:
        try:
            decoded = decode_log(topics, data)
        except InvalidValue:
            return None
        args = {k: v.lower() if isinstance(v, str) else v for k, v in decoded.args.items()}
        return decoded.event, args
    key, params, indexed, plain = fast
    if len(topics) != 1 + indexed or len(data) != 2 + 64 * plain:
        return None
    values: dict[str, Any] = {}
    t, d = 1, 2
    for type_, name, is_indexed in params:
        if is_indexed:
            word = topics[t]
            t += 1
        else:
            word = data[d : d + 64]
            d += 64
        if type_ == "address":
            if int(word[-64:-40] or "0", 16):
                return None
            values[name] = "0x" + word[-40:].lower()
        else:
            values[name] = int(word[-64:], 16)
    return key, values


def log_rows(
    chain: int, logs: Iterable[Mapping[str, Any]], run_id: str
) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``logs`` (``eth_getLogs`` answers) for every chain table, by table.

    >>> from toolkit.codecs.events import encode_log
    >>> topics, data = encode_log("erc20.Transfer", "0x" + "11" * 20, "0x" + "22" * 20, 5)
    >>> log = {"address": "0x" + "aa" * 20, "topics": list(topics), "data": data,
    ...        "blockNumber": "0x7", "logIndex": "0x0", "transactionHash": "0x" + "ee" * 32}
    >>> rows = log_rows(8453, [log], "r1")
    >>> rows["token_transfers"][0]["amount"], rows["chain_logs"][0]["block_number"]
    (5, 7)
    """
    tables: dict[str, list[dict[str, Any]]] = {
        table: [] for table in ("chain_logs", *_TOKEN_TABLES, *POOL_TABLES, *ORDER_TABLES)
    }
    for log in logs:
        topics = [hex_text(t) for t in log["topics"]]
        data = hex_text(log["data"])
        address = hex_text(log["address"])
        raw = _raw_row(chain, log, topics, data, address, run_id)
        tables["chain_logs"].append(raw)
        where = {key: raw[key] for key in ("chain", "block_number", "log_index", "tx_hash")}
        where["run_id"] = run_id
        if len(topics) == 4 and topics[0] == _TRANSFER:  # ERC-721: the tokenId indexed too
            tables["nft_transfers"].append(nft_transfer_row(topics, where, address))
            continue
        decoded = _decode(topics, data)
        if decoded is None:
            continue
        key, args = decoded
        orders = order_event_rows(key, args, address, where)
        if orders:
            for table, order_row in orders:
                tables[table].append(order_row)
            continue
        row = pool_event_row(key, args, address, where) or _token_row(key, args, where, address)
        if row is not None:
            tables[row[0]].append(row[1])
    return tables


#: The token tables :func:`log_rows` fills besides the pool tables.
_TOKEN_TABLES: Final = ("token_transfers", "token_approvals", "weth_flows")


def _raw_row(
    chain: int, log: Mapping[str, Any], topics: list[str], data: str, address: str, run_id: str
) -> dict[str, Any]:
    tx_index = log.get("transactionIndex")
    block_hash = log.get("blockHash")
    padded = topics + [None] * (4 - len(topics))
    return {
        "chain": chain,
        "block_number": hex_int(log["blockNumber"]),
        "log_index": hex_int(log["logIndex"]),
        "tx_hash": hex_text(log["transactionHash"]),
        "tx_index": None if tx_index is None else hex_int(tx_index),
        "block_hash": None if block_hash is None else hex_text(block_hash),
        "address": address,
        "topic0": padded[0],
        "topic1": padded[1],
        "topic2": padded[2],
        "topic3": padded[3],
        "data": data,
        "run_id": run_id,
    }


def _token_row(
    key: str, args: Mapping[str, Any], where: dict[str, Any], address: str
) -> tuple[str, dict[str, Any]] | None:
    """The (table, row) of an ERC-20 transfer or approval or a WETH deposit or withdrawal."""
    place = where | {"token": address}
    if key == "erc20.Transfer":
        value = args["value"]
        parties = {"from_address": args["from"], "to_address": args["to"]}
        table = "token_transfers"
    elif key == "erc20.Approval":
        value = args["value"]
        parties = {"owner": args["owner"], "spender": args["spender"]}
        table = "token_approvals"
    elif key in ("weth.Deposit", "weth.Withdrawal"):
        value = args["wad"]
        deposit = key == "weth.Deposit"
        parties = {
            "kind": "deposit" if deposit else "withdrawal",
            "account": args["dst" if deposit else "src"],
        }
        table = "weth_flows"
    else:
        return None
    return table, place | parties | {"amount": _amount(value), "amount_text": str(value)}


def block_row(chain: int, block: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """The ``chain_blocks`` row of an ``eth_getBlockByNumber`` answer."""
    base_fee = block.get("baseFeePerGas")
    return {
        "chain": chain,
        "number": hex_int(block["number"]),
        "hash": hex_text(block["hash"]),
        "parent_hash": hex_text(block["parentHash"]) if block.get("parentHash") else None,
        "timestamp": hex_int(block["timestamp"]),
        "base_fee": None if base_fee is None else hex_int(base_fee),
        "gas_used": hex_int(block["gasUsed"]) if block.get("gasUsed") is not None else None,
        "gas_limit": hex_int(block["gasLimit"]) if block.get("gasLimit") is not None else None,
        "tx_count": len(block.get("transactions") or ()),
        "run_id": run_id,
    }
