"""The engine's rebalancing transfers on the simulated chains
(:class:`toolkit.world.bridging.TransferMirror`), driven through the relay without a server."""

from __future__ import annotations

import dataclasses

from toolkit.backtest import apply_overrides
from toolkit.codecs.functions import encode_call
from toolkit.engine import EXACT_OUTPUT, Engine
from toolkit.scenario import load_scenario
from toolkit.world import World
from toolkit.world.evm import Chains
from toolkit.world.relay import Relay
from toolkit.world.sender import send


def test_a_transfer_sent_and_landed_in_one_clock_move_is_delivered() -> None:
    # Half of Base's USDC lent and repaid on Arbitrum; the periodic policy's tick at 600 s sends
    # Arbitrum's excess to Base. One sync at 2,000 s passes both the tick and the arrival
    # (~20 s later): the mirror sees the arrival before it sent the out leg, and still delivers.
    base = load_scenario("default")
    assert base.credit is not None
    s = dataclasses.replace(base, credit=dataclasses.replace(base.credit, book_accounts=0))
    s = apply_overrides(s, {"pool_scale": 0.002, "rebalancing.policy": "periodic",
                            "rebalancing.period_s": 600})  # fmt: skip
    relay = Relay(World(s, Engine(s)), Chains(s, genesis=0.0, accounts=1))
    relay.fund(0.0)
    engine, borrower = relay.world.engine, relay.chains.accounts[0].address.lower()
    usdc = s.token(8453, "USDC").address
    for pool in s.pools_for(8453, "USDC"):
        state = engine.pool(pool.id, 1.0)
        quote = engine.borrow_quote(10, 8453, usdc, state.available // 2, 1.0,
                                    kind=EXACT_OUTPUT, pool=state.address)  # fmt: skip
        relay.lend(engine.authorize(quote.quote_id, 1.0), borrower, 42161, 1.0)
    owed = sum(loan.owed for loan in relay.loans.outstanding())
    data = encode_call("erc20.transfer", s.filler, owed)
    send(relay.chains.ledger(42161), borrower, s.token(42161, "USDC").address, data, 2.0,
         gas=100_000, label=b"test borrower")  # fmt: skip
    relay.sync(5.0)
    assert relay.loans.outstanding() == [] and engine.transfers(5.0) == []
    assert relay.reconcile(2_000.0) == []
    (transfer,) = engine.transfers(2_000.0)
    assert (transfer.src_chain, transfer.dst_chain, transfer.arrived) == (42161, 8453, True)
    for now in (2_010.0, 2_020.0):
        assert relay.reconcile(now) == []
    assert [step.kind for step in relay.steps][-2:] == ["transfer_sent", "transfer_delivered"]
