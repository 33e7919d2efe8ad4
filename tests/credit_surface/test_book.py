"""The default scenario's seeded book: 1,200 accounts with varied mixes, debts (some overdue),
operators and top-up configs, all healthy at genesis and served by the endpoints."""

from __future__ import annotations

from decimal import Decimal

from tests.credit_surface.book import credit_book
from toolkit.world.evm.credit import book_account


def test_the_seeded_book_is_varied_healthy_and_served() -> None:
    with credit_book() as book:
        settings = book.settings
        assert settings.book_accounts == 1200
        hub = book.hub()
        accounts = [book_account(settings, i) for i in range(settings.book_accounts)]
        assert len(set(accounts)) == 1200
        now = book.now()
        holders = {b for (b, _), a in hub.collateral.items() if a}
        assert holders == set(accounts)
        mixes = {frozenset(hub.values(b, now)) for b in accounts}
        assert len(mixes) > 10 and any("yobtc" in m for m in mixes)
        debtors = [b for b in accounts if hub.principal.get(b)]
        assert 700 < len(debtors) < 1000
        assert all(not hub.figures(b, now).liquidatable for b in accounts)
        overdue = [b for b in debtors if hub.due[b] < now]
        assert overdue
        info = book.info(overdue[0])
        assert Decimal(info["interest"]) > 0
        assert book.units(info["debt"]) == hub.figures(overdue[0], now).debt
        with_operator = [b for b in debtors if b in hub.operators]
        assert 150 < len(with_operator) < 350
        status = book.ok(f"/credit/accounts/{with_operator[0]}/operator")["data"]
        (receiver,) = status["receivers"]
        path = f"/credit/v2/accounts/{with_operator[0]}/assets/usdc/operator/auto-topup/config"
        config = book.ok(path, receiver=receiver)["config"]
        assert int(config["targetBalance"]) == 2 * int(config["threshold"])
