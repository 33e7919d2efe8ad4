"""The credit client: its call builders return calls that ``execute_calls`` sends (signed with a
development key, and impersonated) and the reads reflect them; the async client reads too."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from web3 import Web3

from tests.credit_surface.book import account, credit_book, small_book
from toolkit.client import AsyncServiceClient
from toolkit.client.credit import AsyncCreditClient, CreditClient, execute_calls
from toolkit.resources import InvalidInput
from toolkit.world.evm.accounts import dev_accounts

USDC = 10**6


def test_client_builds_calls_that_execute_signed_and_impersonated() -> None:
    with credit_book(small_book(0)) as book:
        credit = CreditClient(book.svc.client)
        dev = dev_accounts(book.svc.scenario)[0]
        usdc = book.settings.asset_address
        mine = lambda: book.rpc("evm_mine")  # noqa: E731

        calls = credit.lock(dev.address, 1_000 * USDC, usdc)
        execute_calls(book.w3, dev.address, calls, key=dev.key, after_send=mine)
        calls = credit.draw(dev.address, 100 * USDC, dev.address)
        execute_calls(book.w3, dev.address, calls, key=dev.key, after_send=mine)
        info = credit.info(dev.address)["USDC"]
        assert Decimal(info.debt) == 100 and Decimal(info.total_collateral_value) == 1_000

        # Anyone may repay for any account: an impersonated stranger pays this debt.
        payer = account(90)
        book.deal(payer, usdc, 200 * USDC)
        book.rpc("anvil_impersonateAccount", payer)
        book.rpc("anvil_setBalance", payer, hex(10**20))
        repay = credit.repay(dev.address, 100 * USDC)
        execute_calls(book.w3, payer, repay, after_send=mine)
        assert Decimal(credit.info(dev.address)["USDC"].debt) == 0
        assert book.balance(usdc, payer) == 100 * USDC

        enable = credit.enable_topup(dev.address, payer, 10 * USDC, 20 * USDC)
        execute_calls(book.w3, dev.address, enable, key=dev.key, after_send=mine)
        assert credit.operator(dev.address).receivers == [Web3.to_checksum_address(payer)]
        assert credit.topup_config(dev.address, payer).target_balance == str(20 * USDC)
        assert credit.enable_topup(dev.address, payer, 10 * USDC, 20 * USDC) == []
        assert credit.collateral(8453, usdc).collateral_price_usd == 1.0
        assert credit.protocol().chains["eip155:8453"].credit_hubs["usdc"].credit_hub_address

        with pytest.raises(InvalidInput, match="asset: must be one of usdc, eure"):
            credit.operator(dev.address, "dai")


def test_async_client_reads() -> None:
    with credit_book(small_book(0)) as book:

        async def read() -> str:
            async with AsyncServiceClient(embedded=book.svc.embedded, env={}) as client:
                credit = AsyncCreditClient(client)
                info = await credit.info(account(91))
                calls = await credit.enable_topup(account(91), account(92), 5, 10)
                assert [c.data[:10] for c in calls] == ["0xb3ab15fb", "0x0b0dd11c"]
                assert await credit.disable_topup(account(91), account(92)) == []
                usdc = book.settings.asset_address
                wrapped = await credit.wrap(account(91), 10**6, usdc, 8453)
                assert int(wrapped.amount_out) > 0
                return info["USDC"].health_factor

        assert asyncio.run(read()) == "Infinity"
