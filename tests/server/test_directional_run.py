"""The issue's served directional run, over HTTP and JSON-RPC only: 22 ExactOutput orders of
1,000 USDC from Ethereum to Base, each opened on chain and taken to settlement before the next,
against single-pool's one Base pool of 15,000 USDC (policy ``none``: nothing brings the
inputs, paid on Ethereum, back to Base).

At every step the books reconcile (``GET /sim/reconciliation``), no escrow payout runs ahead of
the outputs delivered, and each chain's USDC adds up (users, escrow, filler). The time moves in
2-second steps (Base's block time, so every block with a transaction is followed by a check)
while any chain has a pooled transaction, and in 30-second jumps while none has (those blocks
are empty: nothing on chain changes in them)."""

from __future__ import annotations

from typing import Any

from toolkit.client import NoCapacity, RetryPolicy
from toolkit.codecs import events
from toolkit.codecs.functions import encode_call
from toolkit.testing import Harness, embedded_service
from toolkit.world.evm.accounts import dev_accounts

UNIT = 1_000_000_000  # 1,000 USDC


def _balances(svc: Harness, chain: int, holders: list[str]) -> list[int]:
    """USDC balances of ``holders`` on ``chain``, read in one JSON-RPC batch."""
    token = svc.scenario.token(chain, "USDC").address
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "eth_call",
         "params": [{"to": token, "data": encode_call("erc20.balanceOf", h)}, "latest"]}
        for i, h in enumerate(holders)
    ]  # fmt: skip
    answers = sorted(svc.http.post(f"/rpc/{chain}", json=batch).json(), key=lambda a: a["id"])
    return [int(a["result"], 16) for a in answers]


def _pooled(svc: Harness) -> bool:
    return any(
        svc.rpc(chain.id, "eth_getBlockByNumber", "pending", False)["transactions"]
        for chain in svc.scenario.chains
    )


def _order_ids(svc: Harness, chain: int, address: str, event: str) -> list[str]:
    logs = svc.rpc(
        chain, "eth_getLogs",
        {"fromBlock": "0x0", "address": address, "topics": [events.EVENTS[event].topic0]},
    )  # fmt: skip
    return [entry["topics"][1] for entry in logs]


class _Books:
    """What the test checks at every step, from the chains and the reconciliation."""

    def __init__(self, svc: Harness, user: str) -> None:
        self.svc = svc
        self.eth = [user, svc.scenario.chain(1).escrow, svc.scenario.filler]
        self.base = [user, svc.scenario.filler]
        self.eth_start, self.base_start = self.read()
        self.checks = 0

    def read(self) -> tuple[list[int], list[int]]:
        return _balances(self.svc, 1, self.eth), _balances(self.svc, 8453, self.base)

    def check(self) -> None:
        eth, base = self.read()
        assert sum(eth) == sum(self.eth_start) and sum(base) == sum(self.base_start)
        paid = eth[2] - self.eth_start[2]  # what the escrow released to the filler
        delivered = base[0] - self.base_start[0]  # what the users received on Base
        assert paid <= delivered  # no payout runs ahead of a delivered output (fees are 0)
        assert self.svc.sim("GET", "reconciliation")["mismatches"] == []
        self.checks += 1


def _until_settled(svc: Harness, books: _Books, key: str) -> None:
    for _ in range(200):
        svc.advance(2 if _pooled(svc) else 30)
        books.check()
        if svc.order(key)["status"] == "Settled":
            return
    raise AssertionError(f"order {key} did not settle: {svc.order(key)}")


def test_22_orders_into_15000_usdc_are_15_settled_and_7_refused() -> None:
    with embedded_service("single-pool", retry=RetryPolicy.no_retries()) as svc:
        user = dev_accounts(svc.scenario)[0].address
        usdc_base = svc.scenario.token(8453, "USDC").address
        books = _Books(svc, user)
        granted: list[str] = []
        refused = 0
        for _ in range(22):
            try:
                quote = svc.client.rfq(
                    src_chain=1, dst_chain=8453, amount=UNIT, token=usdc_base, user=user,
                    type="ExactOutput",
                )  # fmt: skip
            except NoCapacity:
                refused += 1
                books.check()
                continue
            built = svc.client.transaction(quote)
            svc.broadcast(built)
            books.check()
            granted.append(svc.order_id(built))
            _until_settled(svc, books, granted[-1])
        assert (len(granted), refused) == (15, 7)
        eth, base = books.read()
        # users: -15,000 on Ethereum, +15,000 on Base; the escrow holds nothing; the filler
        # spent its 15,000 on Base and was paid 15,000 on Ethereum
        assert [e - s for e, s in zip(eth, books.eth_start, strict=True)] == [
            -15 * UNIT,
            0,
            15 * UNIT,
        ]
        assert [b - s for b, s in zip(base, books.base_start, strict=True)] == [
            15 * UNIT,
            -15 * UNIT,
        ]
        assert base[1] == 0
        settler = svc.scenario.chain(8453).output_settler
        escrow = svc.scenario.chain(1).escrow
        filled = _order_ids(svc, 8453, settler, "outputSettler.OutputFilled")
        finalised = _order_ids(svc, 1, escrow, "escrow.Finalised")
        assert sorted(finalised) == sorted(filled) == sorted(granted)
        pools: Any = svc.pools().row(0, named=True)
        assert (pools["balance"], pools["outstanding"], pools["available"]) == (0, 0, 0)
        assert books.checks > 22
