"""The store's credit book as the one CreditBook the risk models take."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.client import ServiceClient
from toolkit.client.credit import CreditClient
from toolkit.clock import VirtualClock
from toolkit.collect import CreditCollector
from toolkit.models.health import collected_book, stress
from toolkit.report.load import stored_credit_book
from toolkit.scenario import load_scenario
from toolkit.store import Store
from toolkit.world.evm.credit import book_accounts


def test_the_stored_book_is_every_accounts_latest_snapshot_with_its_holdings() -> None:
    accounts = book_accounts(load_scenario("default", env={}))[:40]
    with ServiceClient(embedded=True, clock=VirtualClock()) as client, Store(":memory:") as store:
        CreditCollector(client, store, accounts=accounts, progress=False).run()
        first = store.query("SELECT * FROM credit_collateral")
        first_accounts = store.query("SELECT * FROM credit_accounts")
        # a narrower second run: the book still holds the forty accounts
        CreditCollector(client, store, accounts=accounts[:5], progress=False).run()
        protocol = store.query("SELECT * FROM credit_protocol")
        credit = CreditClient(client)
        prices = {  # USDC per token, as the hub values each collateral
            row["symbol"]: float(
                credit.collateral(
                    row["chain"], row["collateral"].partition(":")[2]
                ).collateral_price_usd
            )
            for row in protocol.unique("symbol", keep="first").iter_rows(named=True)
        }
        book = stored_credit_book(store, prices)
        runs = store.query("SELECT DISTINCT run_id FROM credit_accounts")
        with pytest.raises(ValueError, match="prices: must be a price for every asset"):
            stored_credit_book(store, {"usdc": 1.0})
    assert runs.height == 2
    assert book.accounts == tuple(sorted(a.lower() for a in accounts))
    indebted = book.debt > 0
    assert indebted.sum() > 10
    stored = book.stored_health_factor
    assert stored is not None
    # /info publishes health factors rounded to 4 decimals
    np.testing.assert_allclose(book.health_factors()[indebted], stored[indebted], atol=2e-4)
    # the first run's snapshot alone gives the same holdings (the book did not change between)
    alone = collected_book(first, first_accounts, prices, protocol)
    np.testing.assert_array_equal(alone.collateral, book.collateral)
    np.testing.assert_array_equal(alone.debt, book.debt)
    grid = stress(book, shocks=[-0.5])
    assert grid.filter(shocked="all")["liquidatable"].item() == int(
        (book.health_factors(book.prices * 0.5) < 1).sum()
    )
