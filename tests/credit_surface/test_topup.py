"""Auto top-up executed by the service: as the relay runs (before every JSON-RPC method and
after ``evm_increaseTime``), a card whose balance fell below its threshold is refilled to its
target through the operator's ``openCreditLine``, never past the record's health factor, and not
at all without the operator."""

from __future__ import annotations

from decimal import Decimal

from tests.credit_surface.book import Book, account, credit_book, small_book
from toolkit.codecs.functions import encode_call
from toolkit.credit import DEFAULT_RULES
from toolkit.world.topup import top_up_amount

USDC = 10**6


def _enable(book: Book, user: str, card: str, collateral: int, **config: str) -> str:
    usdc = book.settings.asset_address
    book.deal(user, usdc, collateral)
    v2 = f"/credit/v2/accounts/{user}/assets/usdc"
    book.run(user, book.ok(f"{v2}/lock", amount=str(collateral), earnAsset=usdc)["calls"])
    book.run(user, book.ok(f"{v2}/operator/auto-topup/enable", receiver=card, **config)["calls"])
    return v2


def _spend(book: Book, card: str, amount: int) -> None:
    shop = account(299)
    call = {
        "chain": "8453",
        "to": book.settings.asset_address,
        "data": encode_call("erc20.transfer", shop, amount),
        "value": "0",
    }
    book.run(card, [call])


def _settle(book: Book) -> None:
    """Move time so the relay sends what is due, then mine it."""
    book.advance(1)
    book.rpc("evm_mine")


def test_a_card_below_its_threshold_is_refilled_to_its_target() -> None:
    with credit_book(small_book(0)) as book:
        user, card = account(200), account(201)
        usdc = book.settings.asset_address
        _enable(
            book,
            user,
            card,
            10_000 * USDC,
            threshold=str(100 * USDC),
            targetBalance=str(300 * USDC),
            healthFactor="15000",
        )
        _settle(book)
        first = top_up_amount(300 * USDC, DEFAULT_RULES.origination_fee_bps)
        assert book.balance(usdc, card) == first - DEFAULT_RULES.draw_fee(first) >= 300 * USDC
        assert book.units(book.info(user)["debt"]) == first
        # Above the threshold nothing happens, however often time moves.
        _spend(book, card, 150 * USDC)
        _settle(book)
        assert book.units(book.info(user)["debt"]) == first
        # Below it, the card is refilled to the target again.
        _spend(book, card, 100 * USDC)
        left = book.balance(usdc, card)
        assert left < 100 * USDC
        _settle(book)
        second = top_up_amount(300 * USDC - left, DEFAULT_RULES.origination_fee_bps)
        assert book.units(book.info(user)["debt"]) == first + second
        assert 300 * USDC <= book.balance(usdc, card) < 300 * USDC + 10


def test_the_top_up_stops_at_the_configured_health_factor() -> None:
    with credit_book(small_book(0)) as book:
        user, card = account(202), account(203)
        usdc = book.settings.asset_address
        # 1,000 USDC of collateral: health factor 2.0 allows a debt of 1000 × 0.925 / 2.
        _enable(
            book,
            user,
            card,
            1_000 * USDC,
            threshold=str(600 * USDC),
            targetBalance=str(900 * USDC),
            healthFactor="20000",
        )
        _settle(book)
        info = book.info(user)
        assert book.units(info["debt"]) == 462_500_000
        assert Decimal(info["healthFactor"]) == 2
        assert book.balance(usdc, card) == 462_500_000 - DEFAULT_RULES.draw_fee(462_500_000)
        _settle(book)  # at the limit: no more
        assert book.units(book.info(user)["debt"]) == 462_500_000


def test_no_top_up_without_the_operator_or_after_disable() -> None:
    with credit_book(small_book(0)) as book:
        user, card = account(204), account(205)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 1_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        book.run(user, book.ok(f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc)["calls"])
        config = {"threshold": str(10 * USDC), "targetBalance": str(20 * USDC)}
        set_operator, whitelist = book.ok(
            f"{v2}/operator/auto-topup/enable", receiver=card, **config
        )["calls"]
        _settle(book)  # a record, but no operator yet
        assert book.info(user)["debt"] == "0.000000" and book.balance(usdc, card) == 0
        book.run(user, [set_operator])
        _settle(book)  # the operator, but the card is not whitelisted
        assert book.info(user)["debt"] == "0.000000" and book.balance(usdc, card) == 0
        book.run(user, [whitelist])
        _settle(book)
        drawn = top_up_amount(20 * USDC, DEFAULT_RULES.origination_fee_bps)
        assert book.units(book.info(user)["debt"]) == drawn
        book.run(user, book.ok(f"{v2}/operator/auto-topup/disable", receiver=card)["calls"])
        _spend(book, card, book.balance(usdc, card))
        _settle(book)
        assert book.units(book.info(user)["debt"]) == drawn and book.balance(usdc, card) == 0


def test_seeded_cards_start_full() -> None:
    with credit_book() as book:
        before = book.svc.app.state.service.relay.topups  # type: ignore[attr-defined]
        assert len(before.records) > 100
        _settle(book)
        assert before.moves == []
