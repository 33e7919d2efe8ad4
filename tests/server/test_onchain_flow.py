"""The partner-intents flow on the simulated chains, over web3.py in process: RFQ, transaction
endpoint, approve and open() by the user, the escrow's Open event reaching the engine, the
filler's fill on the destination chain, settlement on the origin chain, the reservation
released; and the same flow through the world alone (the backtests' path) for comparison."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eth_account import Account
from web3 import Web3

from toolkit.client import chain_provider
from toolkit.codecs import events, functions
from toolkit.codecs.escrow import decode_open
from toolkit.engine import Engine
from toolkit.testing import Harness, embedded_service
from toolkit.world import World
from toolkit.world.escrow import escrow_order
from toolkit.world.evm.accounts import dev_accounts

USDC_ETH = Web3.to_checksum_address("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
USDC_BASE = Web3.to_checksum_address("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
ABI = functions.json_abi("erc20")
UNIT = 1_000_000_000


def _send(w3: Web3, key: Any, tx: Mapping[str, Any]) -> Any:
    signed = Account.sign_transaction(tx, key)
    return w3.eth.send_raw_transaction(signed.raw_transaction)


def _logs(w3: Web3, address: str, event: str) -> list[Any]:
    found = w3.eth.get_logs(
        {
            "fromBlock": 0,
            "address": Web3.to_checksum_address(address),
            "topics": [events.EVENTS[event].topic0],
        }
    )
    return [
        events.decode_log([t.to_0x_hex() for t in e["topics"]], bytes(e["data"])) for e in found
    ]


def _open_on_chain(svc: Harness, w3: Web3) -> tuple[Any, str, Any]:
    """RFQ and transaction for a dev account; approve and send open(); the built quote."""
    dev = dev_accounts(svc.scenario)[0]
    key = dev.key.reveal()
    quote = svc.client.rfq(
        src_chain=1,
        dst_chain=8453,
        amount=UNIT,
        token=USDC_BASE,
        user=dev.address,
        type="ExactOutput",
    )
    built = svc.client.transaction(quote)
    request = built.transaction_request
    assert request is not None
    usdc = w3.eth.contract(address=USDC_ETH, abi=ABI)
    nonce = w3.eth.get_transaction_count(Web3.to_checksum_address(dev.address))
    approve = usdc.functions.approve(request.to, 2**256 - 1).build_transaction(
        {"from": dev.address, "nonce": nonce}
    )
    _send(w3, key, approve)
    tx = {
        "from": dev.address,
        "to": Web3.to_checksum_address(request.to),
        "data": request.data,
        "value": 0,
        "chainId": 1,
        "nonce": nonce + 1,
        "gas": 400_000,
        "maxFeePerGas": w3.eth.gas_price * 2,
        "maxPriorityFeePerGas": 0,
    }
    tx_hash = _send(w3, key, tx)
    return built, dev.address, tx_hash


def test_the_flow_runs_on_chain_from_open_to_settlement() -> None:
    with embedded_service("single-pool") as svc:
        service = svc.app.state.service  # type: ignore[attr-defined]
        origin = Web3(chain_provider(svc.embedded, 1))
        dest = Web3(chain_provider(svc.embedded, 8453))
        start_pool = svc.pools().row(0, named=True)
        built, user, tx_hash = _open_on_chain(svc, origin)
        key = svc.order_id(built)
        escrow = Web3.to_checksum_address(built.transaction_request.to)
        input_amount = decode_open(built.transaction_request.data).inputs[0][1]
        usdc_eth = origin.eth.contract(address=USDC_ETH, abi=ABI)
        before = usdc_eth.functions.balanceOf(user).call()

        svc.clock.advance(12)  # Ethereum's next slot: approve and open() are mined
        receipt = origin.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)
        assert receipt["status"] == 1
        (opened,) = _logs(origin, escrow, "escrow.Open")
        assert "0x" + opened.args["orderId"].hex() == key
        assert usdc_eth.functions.balanceOf(escrow).call() == input_amount
        assert usdc_eth.functions.balanceOf(user).call() == before - input_amount
        assert service.world.order(key).status.value == "Deposited"
        assert [s.kind for s in service.relay.steps] == ["opened"]
        assert service.relay.reconcile(service.now()) == []

        # The quote's eta (source confirmations, destination fill) passes: the filler fills.
        settler = Web3.to_checksum_address(svc.scenario.chain(8453).output_settler)
        for _ in range(120):
            svc.clock.advance(1)
            if _logs(dest, settler, "outputSettler.OutputFilled"):
                break
        (filled,) = _logs(dest, settler, "outputSettler.OutputFilled")
        assert "0x" + filled.args["orderId"].hex() == key
        assert filled.args["finalAmount"] == UNIT
        usdc_base = dest.eth.contract(address=USDC_BASE, abi=ABI)
        assert usdc_base.functions.balanceOf(user).call() == 10**6 * 10**6 + UNIT
        assert service.world.order(key).status.value == "Filled"
        assert service.relay.reconcile(service.now()) == []

        # The settlement delay passes: the messenger attests the fill on the origin chain's
        # input oracle, then the filler finalises there.
        oracle = Web3.to_checksum_address(svc.scenario.chain(1).oracle)
        delay = svc.scenario.windows.settlement_delay_s
        svc.clock.advance(delay - 1)
        origin.eth.block_number  # noqa: B018 - any request runs the relay
        assert not _logs(origin, oracle, "inputOracle.OutputProven")  # not yet due
        svc.clock.advance(1)
        origin.eth.block_number  # noqa: B018 - due: the attestation is sent
        svc.clock.advance(12)
        origin.eth.block_number  # noqa: B018 - the attestation is mined: finalise is sent
        (proven,) = _logs(origin, oracle, "inputOracle.OutputProven")
        assert proven.args["application"] == bytes(12) + bytes.fromhex(settler[2:])
        assert not _logs(origin, escrow, "escrow.Finalised")
        svc.clock.advance(12)
        (finalised,) = _logs(origin, escrow, "escrow.Finalised")
        assert "0x" + finalised.args["orderId"].hex() == key
        filler = Web3.to_checksum_address(svc.scenario.filler)
        assert usdc_eth.functions.balanceOf(filler).call() == input_amount
        assert usdc_eth.functions.balanceOf(escrow).call() == 0
        assert service.world.order(key).status.value == "Settled"
        assert [s.kind for s in service.relay.steps] == [
            "opened", "fill_sent", "filled", "attested", "finalise_sent", "settled"
        ]  # fmt: skip
        assert service.relay.reconcile(service.now()) == []

        pool = svc.pools().row(0, named=True)
        assert pool["reserved"] == 0 and pool["outstanding"] == 0
        # The Base pool paid the output; the input was paid on Ethereum (single-pool's policy
        # is none: no pool there, so the engine holds it unallocated, as the filler holds it).
        assert pool["balance"] == start_pool["balance"] - UNIT
        held = {h.chain: h for h in service.engine.inventory(service.now())}
        assert (held[1].unallocated, held[8453].on_chain) == (input_amount, pool["balance"])
        chain_outcome = service.world.order(key)
        chain_pool = pool

    # The same small flow through the world alone (the backtests' path, no chains).
    with embedded_service("single-pool") as svc:
        built = _built_only(svc)
        request = built.transaction_request
        service = svc.app.state.service  # type: ignore[attr-defined]
        now = service.now()
        world: World = service.world
        key = world.deposit(escrow_order(svc.scenario, 1, decode_open(request.data)), now)
        progress = world.advance(now + 200)
        assert progress.filled == (key,)
        settle_at = now + 200 + svc.scenario.windows.settlement_delay_s
        assert world.advance(settle_at).settled == (key,)
        fast = world.order(key)
        pool = svc.pools().row(0, named=True)
    assert fast.status == chain_outcome.status
    assert fast.fill is not None and chain_outcome.fill is not None
    assert (fast.fill.amount, fast.fill.earned) == (
        chain_outcome.fill.amount,
        chain_outcome.fill.earned,
    )
    assert (pool["balance"], pool["reserved"]) == (chain_pool["balance"], chain_pool["reserved"])
    assert isinstance(service.engine, Engine)


def _built_only(svc: Harness) -> Any:
    dev = dev_accounts(svc.scenario)[0]
    quote = svc.client.rfq(
        src_chain=1,
        dst_chain=8453,
        amount=UNIT,
        token=USDC_BASE,
        user=dev.address,
        type="ExactOutput",
    )
    return svc.client.transaction(quote)


def test_an_order_nobody_fills_is_refunded_on_chain_and_releases_its_reservation() -> None:
    with embedded_service("single-pool") as svc:
        service = svc.app.state.service  # type: ignore[attr-defined]
        origin = Web3(chain_provider(svc.embedded, 1))
        built, user, tx_hash = _open_on_chain(svc, origin)
        key = svc.order_id(built)
        order = decode_open(built.transaction_request.data)
        escrow = Web3.to_checksum_address(built.transaction_request.to)
        usdc_eth = origin.eth.contract(address=USDC_ETH, abi=ABI)
        before = usdc_eth.functions.balanceOf(user).call()  # open() is not mined yet
        svc.clock.advance(12)  # Ethereum's next slot: approve and open() are mined
        assert usdc_eth.functions.balanceOf(escrow).call() == order.inputs[0][1]
        receipt = origin.eth.wait_for_transaction_receipt(tx_hash, timeout=5, poll_latency=0.01)
        assert receipt["status"] == 1
        assert service.world.order(key).status.value == "Deposited"
        # The clock jumps past the fill deadline and expires before the fill falls due: the
        # filler finds the deadline gone and leaves the order; the user takes the inputs back.
        svc.clock.set(order.expires + 13)
        origin.eth.block_number  # noqa: B018 - any request runs the relay
        assert not [s for s in service.relay.steps if s.kind == "filled"]
        data = functions.encode_call("escrow.refund", order.as_abi())
        refund = {
            "from": user,
            "to": escrow,
            "data": data,
            "value": 0,
            "chainId": 1,
            "nonce": origin.eth.get_transaction_count(Web3.to_checksum_address(user)),
            "gas": 400_000,
            "maxFeePerGas": origin.eth.gas_price * 2,
            "maxPriorityFeePerGas": 0,
        }
        key_hex = dev_accounts(svc.scenario)[0].key.reveal()
        refunded_tx = _send(origin, key_hex, refund)
        svc.clock.advance(12)
        assert origin.eth.wait_for_transaction_receipt(refunded_tx, timeout=5)["status"] == 1
        (refunded,) = _logs(origin, escrow, "escrow.Refunded")
        assert "0x" + refunded.args["orderId"].hex() == key
        # the inputs went into the escrow when open() was mined, and came back
        assert usdc_eth.functions.balanceOf(user).call() == before
        assert usdc_eth.functions.balanceOf(escrow).call() == 0
        origin.eth.block_number  # noqa: B018 - any request runs the relay
        assert service.world.order(key).status.value == "Refunded"
        pool = svc.pools().row(0, named=True)
        assert pool["reserved"] == 0 and pool["outstanding"] == 0


def test_evm_revert_takes_the_engine_and_the_world_back_too() -> None:
    with embedded_service("single-pool") as svc:
        w3 = Web3(chain_provider(svc.embedded, 8453))
        snapshot = w3.provider.make_request("evm_snapshot", [])["result"]  # type: ignore[arg-type]
        before = svc.pools().row(0, named=True)
        dev = dev_accounts(svc.scenario)[0]
        svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE, user=dev.address,
            type="ExactOutput",
        )  # fmt: skip
        assert svc.pools().row(0, named=True)["reserved"] == UNIT
        w3.provider.make_request("evm_increaseTime", [5])  # type: ignore[arg-type]
        reverted = w3.provider.make_request("evm_revert", [snapshot])  # type: ignore[arg-type]
        assert reverted["result"] is True
        # the reservation made after the snapshot is gone with it, and the clock offset too
        assert svc.pools().row(0, named=True) == before
        assert svc.app.state.service.offset == 0.0  # type: ignore[attr-defined]
        # the service goes on from the restored state
        quote = svc.client.rfq(
            src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE, user=dev.address,
            type="ExactOutput",
        )  # fmt: skip
        assert quote.quote_id and svc.pools().row(0, named=True)["reserved"] == UNIT


def test_a_fill_that_reverts_is_undone_and_never_attested_so_the_escrow_never_pays() -> None:
    with embedded_service("single-pool") as svc:
        service = svc.app.state.service  # type: ignore[attr-defined]
        filler = svc.scenario.filler
        svc.rpc(8453, "anvil_dealERC20", filler, USDC_BASE, "0x0")  # the filler lacks the USDC
        built = _built_only(svc)
        svc.broadcast(built)
        key = svc.order_id(built)
        order = decode_open(built.transaction_request.data)
        for _ in range(5):
            svc.advance(30)
        kinds = [s.kind for s in service.relay.steps]
        assert kinds.count("fill_reverted") >= 2 and "filled" not in kinds  # retried, reverted
        # the world and the engine say so: the order is Deposited, the pool holds nothing for it
        assert svc.order(key)["status"] == "Deposited"
        assert "unfilled" in {e.kind for e in service.engine.events_since(0)}
        assert svc.pools().row(0, named=True)["outstanding"] == 0
        # the books disagree by exactly what was taken from the filler outside the service
        (mismatch,) = svc.sim("GET", "reconciliation")["mismatches"]
        assert (mismatch["token"], mismatch["engine"], mismatch["fillerBalance"]) == (
            "USDC", str(15 * UNIT), "0"
        )  # fmt: skip
        svc.clock.set(order.fill_deadline + svc.scenario.windows.settlement_delay_s + 3600)
        svc.advance(12)
        settler = svc.scenario.chain(8453).output_settler
        oracle = svc.scenario.chain(1).oracle
        escrow = built.transaction_request.to
        for chain, address, event in (
            (8453, settler, "outputSettler.OutputFilled"),
            (1, oracle, "inputOracle.OutputProven"),
            (1, escrow, "escrow.Finalised"),
        ):
            topic = events.EVENTS[event].topic0
            assert svc.rpc(chain, "eth_getLogs", {"fromBlock": "0x0", "address": address,
                                                  "topics": [topic]}) == []  # fmt: skip
        held = svc.rpc(1, "eth_call", {"to": USDC_ETH, "data": functions.encode_call(
            "erc20.balanceOf", escrow)})  # fmt: skip
        assert int(held, 16) == order.inputs[0][1]  # the escrow still holds the input
        assert svc.order(key)["status"] == "Deposited"  # refundable after expires
