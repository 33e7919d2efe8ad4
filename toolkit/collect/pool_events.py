"""Rows of Uniswap pool logs and ERC-721 transfers, for the chain collector.

The events of :data:`toolkit.codecs.events.EVENTS` families ``v2pair`` and ``v3pool`` go to
their own tables, keyed by their place on the chain like every log table:

- ``pool_swaps``: V2 and V3 ``Swap``; ``amount0``/``amount1`` signed as V3 reports them
  (positive: paid into the pool; a V2 swap's ``amountIn - amountOut``), the V3 price,
  liquidity and tick after it;
- ``pool_liquidity``: V2 ``Mint``/``Burn`` and V3 ``Mint``/``Burn``/``Collect`` (``event``),
  with the V3 range and liquidity;
- ``pool_syncs``: V2 ``Sync`` (the reserves after every change);
- ``pool_flashes``: V3 ``Flash``.

A ``Transfer`` with the tokenId indexed (four topics: ERC-721, e.g. a position NFT) is not an
ERC-20 transfer: it goes to ``nft_transfers``. Values beyond HUGEINT (never a real amount) are
stored as null, and ``liquidity`` / ``sqrt_price_x96`` (uint128 / uint160) as decimal text.

>>> place = {"chain": 1, "block_number": 5, "log_index": 0, "tx_hash": "0x", "run_id": "r"}
>>> table, row = pool_event_row("v2pair.Sync", {"reserve0": 3, "reserve1": 4}, "0xp", place)
>>> table, row["pool"], row["reserve0"], row["reserve1"]
('pool_syncs', '0xp', 3, 4)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["POOL_TABLES", "nft_transfer_row", "pool_event_row"]

POOL_TABLES = ("pool_swaps", "pool_liquidity", "pool_syncs", "pool_flashes", "nft_transfers")
_HUGEINT_MAX = 2**127 - 1


def _huge(value: int) -> int | None:
    return value if -_HUGEINT_MAX - 1 <= value <= _HUGEINT_MAX else None


def pool_event_row(
    key: str, args: Mapping[str, Any], address: str, place: Mapping[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """``(table, row)`` of one decoded pool log, or None for another event."""
    row: dict[str, Any] = {**place, "pool": address}
    if key == "v3pool.Swap":
        row |= {"kind": "v3", "sender": args["sender"], "recipient": args["recipient"],
                "amount0": _huge(args["amount0"]), "amount1": _huge(args["amount1"]),
                "sqrt_price_x96": str(args["sqrtPriceX96"]), "liquidity": str(args["liquidity"]),
                "tick": args["tick"]}  # fmt: skip
        return "pool_swaps", row
    if key == "v2pair.Swap":
        row |= {"kind": "v2", "sender": args["sender"], "recipient": args["to"],
                "amount0": _huge(args["amount0In"] - args["amount0Out"]),
                "amount1": _huge(args["amount1In"] - args["amount1Out"])}  # fmt: skip
        return "pool_swaps", row
    if key == "v2pair.Sync":
        return "pool_syncs", row | {"reserve0": args["reserve0"], "reserve1": args["reserve1"]}
    if key == "v3pool.Flash":
        row |= {"sender": args["sender"], "recipient": args["recipient"]}
        row |= {k: _huge(args[k]) for k in ("amount0", "amount1", "paid0", "paid1")}
        return "pool_flashes", row
    family, _, name = key.partition(".")
    if family not in ("v2pair", "v3pool") or name not in ("Mint", "Burn", "Collect"):
        return None
    row |= {
        "kind": "v2" if family == "v2pair" else "v3",
        "event": name.lower(),
        "owner": args.get("owner", args.get("sender")),
        "counterparty": args.get("to", args.get("recipient", args.get("sender"))),
        "tick_lower": args.get("tickLower"),
        "tick_upper": args.get("tickUpper"),
        "liquidity": None if "amount" not in args else str(args["amount"]),
        "amount0": _huge(args["amount0"]),
        "amount1": _huge(args["amount1"]),
    }
    return "pool_liquidity", row


def nft_transfer_row(topics: list[str], place: Mapping[str, Any], token: str) -> dict[str, Any]:
    """The ``nft_transfers`` row of an ERC-721 ``Transfer`` (from, to and tokenId indexed)."""
    return {
        **place,
        "token": token,
        "from_address": "0x" + topics[1][-40:],
        "to_address": "0x" + topics[2][-40:],
        "token_id": str(int(topics[3], 16)),
    }
