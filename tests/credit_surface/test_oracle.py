"""The credit hubs' price feeds, read as any Chainlink consumer reads them: web3.py with the
``AggregatorV3Interface`` ABI as Chainlink publishes it (the outside reference: the interface in
smartcontractkit/chainlink, ``contracts/src/v0.8/shared/interfaces/AggregatorV3Interface.sol``),
at the chain registry's addresses. Each answers, at the block's time, the USD price the hub
values the asset at: a collateral's feed over the credit asset's feed is the hub's own price."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from web3 import Web3

from tests.credit_surface.book import BASE, Book, credit_book, small_book
from toolkit.chain.registry import Registry, default_registry
from toolkit.codecs.errors import InvalidValue
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm.credit.hub import CreditHub

#: AggregatorV3Interface as Chainlink publishes it (names and types from the Solidity source).
AGGREGATOR_V3_ABI: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "decimals",
        "inputs": [],
        "outputs": [{"name": "", "type": "uint8"}],
        "stateMutability": "view",
    },
    {
        "type": "function",
        "name": "description",
        "inputs": [],
        "outputs": [{"name": "", "type": "string"}],
        "stateMutability": "view",
    },
    {
        "type": "function",
        "name": "latestRoundData",
        "inputs": [],
        "outputs": [
            {"name": "roundId", "type": "uint80"},
            {"name": "answer", "type": "int256"},
            {"name": "startedAt", "type": "uint256"},
            {"name": "updatedAt", "type": "uint256"},
            {"name": "answeredInRound", "type": "uint80"},
        ],
        "stateMutability": "view",
    },
]


def _feed(w3: Web3, token: str) -> Any:
    entry = default_registry().price_feed(int(w3.eth.chain_id), token)
    return w3.eth.contract(address=Web3.to_checksum_address(entry.address), abi=AGGREGATOR_V3_ABI)


def _usd(w3: Web3, token: str) -> tuple[Fraction, int]:
    """(USD per whole token, updatedAt) from the token's feed."""
    feed = _feed(w3, token)
    round_id, answer, started, updated, answered_in = feed.functions.latestRoundData().call()
    assert answered_in == round_id and started == updated
    return Fraction(answer, 10 ** feed.functions.decimals().call()), updated


def _hub(book: Book, settings: CreditSettings) -> CreditHub:
    ledger = book.svc.app.state.service.chains.ledger(BASE)  # type: ignore[attr-defined]
    hub = ledger.contract(settings.hub.lower())
    assert isinstance(hub, CreditHub)
    return hub


def _check_hub_prices(book: Book) -> None:
    for settings in book.settings.hubs:
        hub = _hub(book, settings)
        asset_usd, at = _usd(book.w3, settings.asset_address)
        for c in settings.collateral:
            usd, updated = _usd(book.w3, c.address)
            assert updated == at  # one block: one time
            from_feeds = usd / asset_usd * Fraction(10**settings.asset_decimals, 10**c.decimals)
            hub_price = hub.unit_price(c, at)
            # 8 decimals of USD: the feeds agree with the hub to a part in 10**7 or better.
            assert abs(from_feeds / hub_price - 1) < Fraction(1, 10**7), (c.symbol, settings.asset)


def test_each_hub_values_collateral_at_its_feeds_prices_as_time_passes() -> None:
    with credit_book(small_book(0)) as book:
        _check_hub_prices(book)
        gtusdcp = book.settings.collateral_by_symbol("gtusdcp")
        assert gtusdcp is not None
        before, at = _usd(book.w3, gtusdcp.address)
        book.advance(30 * 86_400)
        book.rpc("evm_mine")
        after, later = _usd(book.w3, gtusdcp.address)
        assert later >= at + 30 * 86_400
        assert after > before  # the vault's share price grows along its yield
        _check_hub_prices(book)


def test_the_feeds_are_the_registrys_and_say_what_they_price() -> None:
    with credit_book(small_book(0)) as book:
        eth = book.web3(1)
        (remote,) = book.settings.remote
        assert _usd(eth, remote.address)[0] == 1  # USDC locked on Ethereum: its own feed there
        eure, _ = _usd(book.w3, book.settings.hubs[1].asset_address)
        assert eure == Fraction("1.08")  # the scenario's euro price
        for entry in default_registry().price_feeds(BASE):
            feed = book.w3.eth.contract(
                address=Web3.to_checksum_address(entry.address), abi=AGGREGATOR_V3_ABI
            )
            assert feed.functions.description().call() == f"{entry.symbol} / USD"
            assert feed.functions.decimals().call() == 8


@pytest.mark.parametrize(
    ("feeds", "message"),
    [
        ([{"chain": 1, "address": "0x" + "ab" * 20, "token": "0x" + "cd" * 20}], "symbol"),
        (
            [{"chain": 1, "address": "0xab", "token": "0x" + "cd" * 20, "symbol": "X"}],
            "price_feeds[0].address: must be an EIP-55 checksummed address",
        ),
        (
            [{"chain": 99, "address": "0x" + "ab" * 20, "token": "0x" + "cd" * 20, "symbol": "X"}],
            "chain 99 is not in the chains",
        ),
    ],
)
def test_a_bad_feed_entry_is_refused_naming_its_key(
    feeds: list[dict[str, Any]], message: str
) -> None:
    data = {
        "contracts": {
            "escrow": "0x000025c3226C00B2Cdc200005a1600509f4e00C0",
            "output_settler": "0x0000000000eC36B683C2E6AC89e9A75989C22a2e",
            "oracle": "0x0000003E06000007A224AeE90052fA6bb46d43C9",
        },
        "chains": {
            "1": {"name": "Ethereum", "caip2": "eip155:1", "native_symbol": "ETH", "eip1559": True}
        },
        "price_feeds": [
            {
                k: (
                    Web3.to_checksum_address(v) if k in ("address", "token") and len(v) == 42 else v
                )
                for k, v in f.items()
            }
            for f in feeds
        ],
    }
    with pytest.raises(InvalidValue, match=message.replace("[", r"\[").replace("]", r"\]")):
        Registry.from_mapping(data)
