"""A pytest plugin for `--doctest-modules toolkit`: the names client and collector examples use.

Loaded by ``make unit`` (``-p tests.doctest_namespace``). Examples in ``toolkit/client`` and
``toolkit/collect`` talk to a service as a user's notebook would; here that service is the
embedded one on a virtual clock (``toolkit.testing.embedded_service``, the default scenario without
its seeded credit book), fresh for each example, so
every example runs, offline, with the same output on every machine:

- ``client``: a :class:`toolkit.client.ServiceClient` of that service, ``svc`` the harness;
- ``me``: a user address; ``usdc_base``: USDC on Base;
- ``quote``: an RFQ quote for 1,000 USDC from Ethereum to Base, taken by ``client``;
- ``borrow``: a borrow quote for 100 USDC to Base; ``deposit``: a deposit transaction hash.

In ``toolkit.client.aio`` examples ``client`` is an :class:`AsyncServiceClient` of the same service
and ``run`` drives a coroutine on the example's own event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from _pytest.doctest import DoctestItem

from toolkit.client import AsyncServiceClient
from toolkit.scenario import Scenario, load_scenario
from toolkit.testing import embedded_service

# Examples in these packages get the names; every other example runs with none.
PACKAGES = ("toolkit.client", "toolkit.collect")
ME = "0x1111111111111111111111111111111111111111"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"


@cache
def _scenario() -> Scenario:
    """The default scenario without its 1,200-account seeded credit book: no example reads a
    seeded account, and building the book is most of the cost of a fresh service."""
    scenario = load_scenario("default")
    assert scenario.credit is not None
    credit = dataclasses.replace(scenario.credit, book_accounts=0)
    return dataclasses.replace(scenario, credit=credit)


@pytest.fixture(autouse=True)
def _service_names(
    request: pytest.FixtureRequest, doctest_namespace: dict[str, Any]
) -> Iterator[None]:
    item = request.node
    if not isinstance(item, DoctestItem) or not item.name.startswith(PACKAGES):
        yield
        return
    with embedded_service(_scenario()) as svc:
        names = {
            "svc": svc,
            "client": svc.client,
            "me": ME,
            "usdc_base": USDC_BASE,
            "quote": svc.client.rfq(
                src_chain=1, dst_chain=8453, amount=10**9, token=USDC_BASE, user=ME
            ),
            "borrow": svc.client.borrow_quote(
                src_chain=1, dst_chain=8453, amount=10**8, token=USDC_BASE
            ),
            "deposit": "0x" + "ab" * 32,
        }
        loop = asyncio.new_event_loop()
        if item.name.startswith("toolkit.client.aio"):
            names["client"] = AsyncServiceClient(embedded=svc.embedded)
            names["run"] = loop.run_until_complete
        doctest_namespace.update(names)
        try:
            yield
        finally:
            if isinstance(names["client"], AsyncServiceClient):
                loop.run_until_complete(names["client"].aclose())
            loop.close()
            for name in names:
                doctest_namespace.pop(name, None)
