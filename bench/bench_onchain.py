"""One flow on the chain path against the fast path: orders per second and the ratio.

The chain path is what a user and the embedded service do over web3.py in process: RFQ, the
transaction endpoint, approve and ``open()`` signed and sent, the escrow's ``Open`` event reaching
the engine, the filler's fill and finalise transactions. The fast path is what backtests do: the
same orders handed to the world directly. Both run the same RFQs on a virtual clock.
"""

from __future__ import annotations

import time
from typing import Any

from eth_account import Account
from web3 import Web3

from toolkit.client import chain_provider
from toolkit.codecs import functions
from toolkit.testing import embedded_service
from toolkit.world.escrow import read_open
from toolkit.world.evm.accounts import dev_accounts
from toolkit.world.order import OrderStatus

ORDERS = 20
UNIT = 100 * 10**6
USDC_ETH = Web3.to_checksum_address("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
USDC_BASE = Web3.to_checksum_address("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")


def _send(w3: Web3, key: str, tx: dict[str, Any]) -> Any:
    return w3.eth.send_raw_transaction(Account.sign_transaction(tx, key).raw_transaction)


def chain_path() -> float:
    with embedded_service("single-pool") as svc:
        w3 = Web3(chain_provider(svc.embedded, 1))
        dev = dev_accounts(svc.scenario)[0]
        key = dev.key.reveal()
        usdc = w3.eth.contract(address=USDC_ETH, abi=functions.json_abi("erc20"))
        started = time.perf_counter()
        nonce = w3.eth.get_transaction_count(dev.address)
        for _ in range(ORDERS):
            quote = svc.client.rfq(src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE,
                                   user=dev.address, type="ExactOutput")  # fmt: skip
            request = svc.client.transaction(quote).transaction_request
            fees = {"maxFeePerGas": w3.eth.gas_price * 2, "maxPriorityFeePerGas": 0}
            approve = usdc.functions.approve(request.to, UNIT * 2).build_transaction(
                {"from": dev.address, "nonce": nonce, **fees}
            )
            _send(w3, key, approve)
            _send(w3, key, {"from": dev.address, "to": Web3.to_checksum_address(request.to),
                            "data": request.data, "value": 0, "chainId": 1, "nonce": nonce + 1,
                            "gas": 400_000, **fees})  # fmt: skip
            nonce += 2
            svc.clock.advance(12)
            w3.eth.block_number  # noqa: B018 - any request runs the relay
        relay = svc.app.state.service.relay  # type: ignore[attr-defined]
        for _ in range(40):  # fills, then settlements (each a block later) fall due
            if sum(s.kind == "settled" for s in relay.steps) == ORDERS:
                break
            svc.clock.advance(30)
            w3.eth.block_number  # noqa: B018 - any request runs the relay
        assert sum(s.kind == "settled" for s in relay.steps) == ORDERS
        return time.perf_counter() - started


def fast_path() -> float:
    with embedded_service("single-pool") as svc:
        service = svc.app.state.service  # type: ignore[attr-defined]
        dev = dev_accounts(svc.scenario)[0]
        started = time.perf_counter()
        for _ in range(ORDERS):
            quote = svc.client.rfq(src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE,
                                   user=dev.address, type="ExactOutput")  # fmt: skip
            request = svc.client.transaction(quote).transaction_request
            now = service.now()
            service.world.deposit(read_open(svc.scenario, request.to, 1, request.data, now), now)
            svc.clock.advance(12)
        end = service.now()
        for step in range(1, 13):  # as the chain path: fills, then settlements, fall due
            service.world.advance(end + 100 * step)
        elapsed = time.perf_counter() - started
        assert service.world.counts()[OrderStatus.SETTLED] == ORDERS
        return elapsed


def main() -> None:
    chain = min(chain_path() for _ in range(2))
    fast = min(fast_path() for _ in range(2))
    print(f"{ORDERS} orders, RFQ to settlement, best of 2")
    print(f"chain path (web3.py, signed transactions, relay)  {ORDERS / chain:8.1f} orders/s")
    print(f"fast path (the world directly, as backtests)      {ORDERS / fast:8.1f} orders/s")
    print(f"ratio fast / chain                                 {chain / fast:8.1f}x")


if __name__ == "__main__":
    main()
