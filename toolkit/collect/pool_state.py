"""Uniswap pool state at one block, read in as few JSON-RPC requests as the node allows.

For every pool, all at the same block: a V2 pair's ``getReserves``; a V3 pool's ``slot0``,
``liquidity``, ``fee``, ``tickSpacing`` and ``feeGrowthGlobal{0,1}X128``, then the
``tickBitmap`` words that cover ``depth_ticks`` either side of the current tick, then
``ticks(t)`` (``liquidityGross``, ``liquidityNet``, ``feeGrowthOutside{0,1}X128``) of every
tick set in those words. That is three rounds whatever the number of pools.

Each round goes out as ``eth_call``s through Multicall3's ``aggregate3`` when the chain has it
at its canonical address (:data:`MULTICALL3`; up to :data:`CALLS_PER_MULTICALL` calls in one
``eth_call``), else as plain ``eth_call``s; either way in JSON-RPC batches of up to
``batch_size`` requests. :class:`StateReader` counts the HTTP requests and JSON-RPC calls it
sent (the benchmark's figures).

The depth is recorded with each snapshot as ``depth_ticks`` and the tick range whose bitmap
words were read whole (``min_tick``..``max_tick``): inside it the snapshot holds every
initialised tick, so a pool rebuilt from it (:func:`toolkit.amm.snapshot.pool_from_snapshot`)
quotes what the chain executes as long as the price stays inside.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from eth_abi import decode, encode
from eth_utils import function_signature_to_4byte_selector, to_checksum_address
from web3 import Web3
from web3.types import RPCEndpoint

from toolkit.amm.v3.tick_math import MAX_TICK, MIN_TICK
from toolkit.collect.rpc import RpcFailure, rpc_result

__all__ = [
    "CALLS_PER_MULTICALL",
    "DEFAULT_DEPTH_TICKS",
    "MULTICALL3",
    "PoolRef",
    "StateReader",
    "read_pool_states",
    "tick_rows",
    "word_range",
]

MULTICALL3: Final = "0xcA11bde05977b3631167028862bE2a173976CA11"
#: Sub-calls per ``aggregate3``: ~12k gas each for ``ticks()``, well under a node's call cap.
CALLS_PER_MULTICALL: Final = 500
#: Ticks either side of the price a snapshot covers by default (1.0001^4000: ±49 % in price).
DEFAULT_DEPTH_TICKS: Final = 4000
#: About the most call data (hex characters) one HTTP request carries.
BATCH_BYTES: Final = 400_000
_CALL = RPCEndpoint("eth_call")
#: EIP-1474's code for a reverted call (geth, anvil); other nodes answer -32000 and say so in
#: the message, which is then the only sign on the wire.
_EXECUTION_REVERTED = 3


def _selector(signature: str) -> bytes:
    return function_signature_to_4byte_selector(signature)


_SLOT0 = _selector("slot0()")
_LIQUIDITY = _selector("liquidity()")
_FEE = _selector("fee()")
_SPACING = _selector("tickSpacing()")
_GROWTH0 = _selector("feeGrowthGlobal0X128()")
_GROWTH1 = _selector("feeGrowthGlobal1X128()")
_RESERVES = _selector("getReserves()")
_BITMAP = _selector("tickBitmap(int16)")
_TICKS = _selector("ticks(int24)")
_AGGREGATE3 = _selector("aggregate3((address,bool,bytes)[])")


@dataclass(frozen=True)
class PoolRef:
    """A pool to read: its address, ``kind`` (``v2``/``v3``) and tokens (as discovered)."""

    address: str
    kind: str
    token0: str
    token1: str
    fee: int
    tick_spacing: int | None = None


def word_range(tick: int, tick_spacing: int, depth_ticks: int) -> tuple[int, int]:
    """The bitmap words (``int16`` positions) covering ``depth_ticks`` either side of ``tick``.

    >>> word_range(0, 60, 4000), word_range(-1, 1, 10)
    ((-1, 0), (-1, 0))
    """
    low = max(MIN_TICK, tick - depth_ticks) // tick_spacing >> 8
    high = min(MAX_TICK, tick + depth_ticks) // tick_spacing >> 8
    return low, high


class StateReader:
    """``eth_call``s at one block, through Multicall3 (``multicall``: its address, or None for
    plain calls) in JSON-RPC batches of ``batch_size``; :attr:`requests` and :attr:`calls`
    count what was sent."""

    def __init__(
        self, w3: Web3, block: int, *, multicall: str | None = None, batch_size: int = 500
    ) -> None:
        self.w3 = w3
        self.block = block
        self.multicall = multicall
        self.batch_size = batch_size
        self.requests = 0
        self.calls = 0

    @classmethod
    def detect(cls, w3: Web3, block: int, *, batch_size: int = 500) -> StateReader:
        """A reader that uses Multicall3 when the chain has code at :data:`MULTICALL3`."""
        code = w3.eth.get_code(to_checksum_address(MULTICALL3), block_identifier=block)
        return cls(w3, block, multicall=MULTICALL3 if code else None, batch_size=batch_size)

    def _parts(
        self, requests: list[tuple[RPCEndpoint, list[Any]]]
    ) -> list[list[tuple[RPCEndpoint, list[Any]]]]:
        """``requests`` in batches of at most ``batch_size`` requests and about
        :data:`BATCH_BYTES` of call data (nodes refuse larger bodies: anvil answers "Invalid
        request")."""
        parts: list[list[tuple[RPCEndpoint, list[Any]]]] = [[]]
        size = 0
        for request in requests:
            length = len(request[1][0]["data"])
            if parts[-1] and (len(parts[-1]) >= self.batch_size or size + length > BATCH_BYTES):
                parts.append([])
                size = 0
            parts[-1].append(request)
            size += length
        return [part for part in parts if part]

    def _send(self, requests: list[tuple[RPCEndpoint, list[Any]]]) -> list[Any]:
        results: list[Any] = []
        provider = self.w3.provider
        for part in self._parts(requests):
            self.requests += 1
            self.calls += len(part)
            if len(part) == 1:
                answers: Any = [provider.make_request(*part[0])]
            else:
                answers = provider.make_batch_request(part)  # type: ignore[attr-defined]
            if not isinstance(answers, list):
                rpc_result("eth_call", answers)
                raise RpcFailure("eth_call", None, "batch answered by one object")
            results += [rpc_result("eth_call", answer) for answer in answers]
        return results

    def call_many(self, calls: Sequence[tuple[str, bytes]]) -> list[bytes | None]:
        """The return data of each ``(to, data)`` call, None where it reverted."""
        block = hex(self.block)
        if self.multicall is None:
            requests = [
                (_CALL, [{"to": to, "data": "0x" + data.hex()}, block]) for to, data in calls
            ]
            try:
                return [bytes.fromhex(r[2:]) for r in self._send(requests)]
            except RpcFailure:  # one call reverted: ask again one at a time
                return [self._one(to, data, block) for to, data in calls]
        requests = []
        for i in range(0, len(calls), CALLS_PER_MULTICALL):
            part = [(to, True, data) for to, data in calls[i : i + CALLS_PER_MULTICALL]]
            payload = _AGGREGATE3 + encode(["(address,bool,bytes)[]"], [part])
            requests.append((_CALL, [{"to": self.multicall, "data": "0x" + payload.hex()}, block]))
        out: list[bytes | None] = []
        for answer in self._send(requests):
            (results,) = decode(["(bool,bytes)[]"], bytes.fromhex(answer[2:]))
            out += [data if ok else None for ok, data in results]
        return out

    def _one(self, to: str, data: bytes, block: str) -> bytes | None:
        try:
            (answer,) = self._send([(_CALL, [{"to": to, "data": "0x" + data.hex()}, block])])
        except RpcFailure as exc:
            if exc.code == _EXECUTION_REVERTED or "revert" in exc.message:
                return None
            raise  # not the call's answer: a node refusing the block, a limit, …
        return bytes.fromhex(answer[2:])


def _need(value: bytes | None, pool: str, what: str) -> bytes:
    if not value:
        raise RpcFailure("eth_call", None, f"pool {pool}: {what} reverted or returned nothing")
    return value


def _v3_state(reader: StateReader, pools: Sequence[PoolRef]) -> list[dict[str, Any]]:
    getters = (_SLOT0, _LIQUIDITY, _FEE, _SPACING, _GROWTH0, _GROWTH1)
    answers = reader.call_many([(p.address, g) for p in pools for g in getters])
    states = []
    for i, pool in enumerate(pools):
        slot0, liquidity, fee, spacing, growth0, growth1 = (
            _need(a, pool.address, "a getter") for a in answers[i * 6 : i * 6 + 6]
        )
        sqrt_price, tick = decode(["uint160", "int24"], slot0[:64])
        states.append(
            {
                "sqrt_price_x96": sqrt_price,
                "tick": tick,
                "liquidity": decode(["uint128"], liquidity)[0],
                "fee": decode(["uint24"], fee)[0],
                "tick_spacing": decode(["int24"], spacing)[0],
                "fee_growth_global0_x128": decode(["uint256"], growth0)[0],
                "fee_growth_global1_x128": decode(["uint256"], growth1)[0],
            }
        )
    return states


def _set_ticks(word: int, bits: int, tick_spacing: int) -> list[int]:
    found = []
    while bits:
        low = bits & -bits
        found.append(((word << 8) + low.bit_length() - 1) * tick_spacing)
        bits ^= low
    return found


def _ticks(
    reader: StateReader, pools: Sequence[PoolRef], states: list[dict[str, Any]], depth: int
) -> list[list[tuple[int, ...]]]:
    words: list[tuple[int, int]] = []  # (pool index, word)
    for i, state in enumerate(states):
        low, high = word_range(state["tick"], state["tick_spacing"], depth)
        words += [(i, w) for w in range(low, high + 1)]
    answers = reader.call_many(
        [(pools[i].address, _BITMAP + encode(["int16"], [w])) for i, w in words]
    )
    wanted: list[tuple[int, int]] = []  # (pool index, tick)
    for (i, word), answer in zip(words, answers, strict=True):
        bits = decode(["uint256"], _need(answer, pools[i].address, "tickBitmap"))[0]
        wanted += [(i, t) for t in _set_ticks(word, bits, states[i]["tick_spacing"])]
    answers = reader.call_many(
        [(pools[i].address, _TICKS + encode(["int24"], [t])) for i, t in wanted]
    )
    found: list[list[tuple[int, ...]]] = [[] for _ in pools]
    for (i, tick), answer in zip(wanted, answers, strict=True):
        data = _need(answer, pools[i].address, "ticks")
        gross, net, outside0, outside1 = decode(
            ["uint128", "int128", "uint256", "uint256"], data[:128]
        )
        found[i].append((tick, net, gross, outside0, outside1))
    return found


def read_pool_states(
    reader: StateReader,
    pools: Sequence[PoolRef],
    *,
    depth_ticks: int = DEFAULT_DEPTH_TICKS,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, list[tuple[int, ...]]]]:
    """Every pool's state at ``reader.block``: one row per pool (the columns of
    ``amm_pool_snapshots`` but the snapshot's id, chain and time) and, by pool, its ticks as
    ``(tick, liquidity_net, liquidity_gross, fee_growth_outside0_x128,
    fee_growth_outside1_x128)``."""
    v2 = [p for p in pools if p.kind == "v2"]
    v3 = [p for p in pools if p.kind == "v3"]
    rows: list[dict[str, Any]] = []
    ticks: dict[str, list[tuple[int, ...]]] = {}
    common = {"block_number": reader.block, "depth_ticks": depth_ticks}
    reserves = reader.call_many([(p.address, _RESERVES) for p in v2])
    for pool, answer in zip(v2, reserves, strict=True):
        r0, r1 = decode(["uint112", "uint112"], _need(answer, pool.address, "getReserves")[:64])
        rows.append(_base(pool) | common | {"fee": pool.fee, "reserve0": r0, "reserve1": r1})
    if v3:
        states = _v3_state(reader, v3)
        for pool, state, found in zip(
            v3, states, _ticks(reader, v3, states, depth_ticks), strict=True
        ):
            low, high = word_range(state["tick"], state["tick_spacing"], depth_ticks)
            spacing = state["tick_spacing"]
            rows.append(
                _base(pool)
                | common
                | state
                | {
                    "sqrt_price_x96": str(state["sqrt_price_x96"]),
                    "liquidity": str(state["liquidity"]),
                    "fee_growth_global0_x128": str(state["fee_growth_global0_x128"]),
                    "fee_growth_global1_x128": str(state["fee_growth_global1_x128"]),
                    "min_tick": _edge(low, spacing, lowest=True),
                    "max_tick": _edge(high, spacing, lowest=False),
                    "tick_count": len(found),
                }
            )
            ticks[pool.address] = sorted(found)
    if on_progress is not None:
        on_progress(len(pools))
    return rows, ticks


def _edge(word: int, spacing: int, *, lowest: bool) -> int:
    """The lowest (highest) tick the price can reach knowing the bitmap down to (up to)
    ``word``: past the word holding MIN_TICK (MAX_TICK) there is nothing to know, so the
    bound is the end of the price range (a swap down to it ends on MIN_TICK - 1)."""
    if lowest:
        return MIN_TICK - 1 if word <= MIN_TICK // spacing >> 8 else (word << 8) * spacing
    return MAX_TICK if word >= MAX_TICK // spacing >> 8 else ((word << 8) + 256) * spacing - 1


def _base(pool: PoolRef) -> dict[str, Any]:
    return {"pool": pool.address, "kind": pool.kind, "token0": pool.token0, "token1": pool.token1}


def tick_rows(
    snapshot_id: str, chain: int, ticks: Mapping[str, Sequence[tuple[int, ...]]]
) -> list[dict[str, Any]]:
    """``amm_pool_ticks`` rows of :func:`read_pool_states`' ticks."""
    return [
        {
            "snapshot_id": snapshot_id,
            "chain": chain,
            "pool": pool,
            "tick": tick,
            "liquidity_net": net,
            "liquidity_gross": gross,
            "fee_growth_outside0_x128": str(outside0),
            "fee_growth_outside1_x128": str(outside1),
        }
        for pool, found in ticks.items()
        for tick, net, gross, outside0, outside1 in found
    ]
