"""Lock, draw, repay and unlock: each endpoint's calls executed on the simulated Base chain as the
account, and the next ``/info`` and balances checked to the unit against the product's rules."""

from __future__ import annotations

from tests.credit_surface.book import T0, account, credit_book, small_book
from toolkit.credit import DAY, DEFAULT_RULES, YEAR

USDC = 10**6


def test_lock_draw_repay_unlock_to_the_unit() -> None:
    with credit_book(small_book(60)) as book:
        user, shop = account(1), account(2)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 10_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"

        escrowed = book.balance(usdc, book.settings.escrow)  # the seeded book's USDC
        locked = book.ok(f"{v2}/lock", amount=str(2_000 * USDC), earnAsset=usdc)
        assert [c["data"][:10] for c in locked["calls"]] == ["0x095ea7b3", "0x47e7ef24"]
        book.run(user, locked["calls"])
        info = book.info(user)
        assert info["totalCollateralValue"] == "2000.000000"
        assert info["totalCreditCapacity"] == "1800.000000"  # USDC LTV 90 %
        assert info["healthFactor"] == "Infinity" and info["dueDate"] is None
        assert book.balance(usdc, user) == 8_000 * USDC
        assert book.balance(usdc, book.settings.escrow) == escrowed + 2_000 * USDC

        drawn_at = book.now()
        draw = book.ok(f"{v2}/draw", amount=str(1_000 * USDC), receiver=shop)
        book.run(user, draw["calls"])
        mined_at = book.w3.eth.get_block("latest")["timestamp"]
        assert mined_at >= drawn_at
        assert book.balance(usdc, shop) == 995 * USDC  # the 0.50 % fee is deducted
        info = book.info(user)
        assert info["debt"] == info["principal"] == "1000.000000"
        assert info["interest"] == "0.000000"
        assert info["remainingCreditCapacity"] == "800.000000"
        assert info["healthFactor"] == "1.8500"  # 2000 × 92.5 % / 1000
        assert info["mHealthFactor"] == "1.8000"
        assert info["liquidationLimit"] == "1081.081082"  # 1000 / 0.925, rounded up
        due = mined_at + 37 * DAY
        assert info["dueDate"] == _iso(due)

        # Before the due date no interest accrues; after it, 15 % APR per second.
        book.advance(due - book.now())
        assert book.info(user)["interest"] == "0.000000"
        book.advance(10 * DAY)
        expected = 1_000 * USDC * 1500 * (book.now() - due) // (10_000 * YEAR)
        assert book.units(book.info(user)["interest"]) == expected
        assert expected == DEFAULT_RULES.interest(1_000 * USDC, due_date=due, now=book.now())

        # Repay everything (with a margin for the seconds the repayment takes to be mined).
        repay = book.ok(f"{v2}/repay", amount=str(1_100 * USDC))
        before = book.balance(usdc, user)
        book.run(user, repay["calls"])
        paid = before - book.balance(usdc, user)
        mined_at = book.w3.eth.get_block("latest")["timestamp"]
        owed = 1_000 * USDC + DEFAULT_RULES.interest(1_000 * USDC, due_date=due, now=mined_at)
        assert paid == owed
        info = book.info(user)
        assert info["debt"] == "0.000000" and info["dueDate"] is None
        assert info["healthFactor"] == "Infinity"

        unlock = book.ok(f"{v2}/unlock", amount=str(2_000 * USDC), collateral=usdc)
        book.run(user, unlock["calls"])
        assert book.info(user)["totalCollateralValue"] == "0.000000"
        assert book.balance(usdc, user) == 10_000 * USDC - paid


def test_v1_paths_take_their_own_parameter_names() -> None:
    with credit_book(small_book(0)) as book:
        user = account(3)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 600 * USDC)
        v1 = f"/credit/accounts/{user}"
        book.run(user, book.ok(f"{v1}/lock", amount=str(500 * USDC), asset="USDC")["calls"])
        assert book.info(user)["totalCollateralValue"] == "500.000000"
        status, body = book.get(f"{v1}/lock", amount="1", earnAsset=usdc)
        assert status == 400 and body["error"].startswith("asset:")
        book.run(user, book.ok(f"{v1}/draw", amount=str(100 * USDC), receiver=user)["calls"])
        book.run(user, book.ok(f"{v1}/repay", amount=str(100 * USDC))["calls"])
        book.run(user, book.ok(f"{v1}/unlock", amount=str(500 * USDC), asset=usdc)["calls"])
        info = book.info(user)
        assert info["totalCollateralValue"] == "0.000000" and info["debt"] == "0.000000"
        # 500 locked and back, 100 drawn (99.5 delivered), 100 repaid: the fee is the cost.
        assert book.balance(usdc, user) == 600 * USDC - 500_000


def test_second_draw_keeps_the_first_due_date() -> None:
    with credit_book(small_book(0)) as book:
        user = account(4)
        usdc = book.settings.asset_address
        book.deal(user, usdc, 1_000 * USDC)
        v2 = f"/credit/v2/accounts/{user}/assets/usdc"
        book.run(user, book.ok(f"{v2}/lock", amount=str(1_000 * USDC), earnAsset=usdc)["calls"])
        book.run(user, book.ok(f"{v2}/draw", amount=str(100 * USDC), receiver=user)["calls"])
        first = book.info(user)["dueDate"]
        book.advance(3 * DAY)
        book.run(user, book.ok(f"{v2}/draw", amount=str(100 * USDC), receiver=user)["calls"])
        assert book.info(user)["dueDate"] == first
        assert book.info(user)["principal"] == "200.000000"
        assert book.now() > T0


def _iso(seconds: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
