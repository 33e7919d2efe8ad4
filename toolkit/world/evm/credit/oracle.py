"""The price feeds the credit hubs value collateral with: one Chainlink-style USD feed
(``AggregatorV3Interface``) per asset a hub prices, on the chain where it is locked.

Why feeds and not one oracle per hub (``getAssetPrice(address)`` as Aave's ``AaveOracle``):
every lending market that publishes its oracle (Aave v3's ``AaveOracle``, Compound v3's
``Comet.getPrice``, Morpho's ``MorphoChainlinkOracleV2``, Euler's adapters) reads
``AggregatorV3Interface`` feeds underneath, vault shares included (a rate adapter over the
underlying's feed answers the same interface), so a feed per asset is what a real hub most
likely has on chain whatever router sits in front of it; and a feed answers *when* its price
was set (``updatedAt``), which a price table keyed by time needs and ``getAssetPrice`` does not
say. Feeds are shared: the USDC and EURe hubs value the same collateral with the same USD feed,
as every protocol on a chain reads the one Chainlink feed of an asset.

Each feed answers, at the block's time, the USD price of one whole token with 8 decimals
(Chainlink's USD feeds): exactly the figure the hub values with
(:meth:`~toolkit.scenario.credit.CreditSettings.usd_per_unit`), so the hub's own price of a
collateral in its credit asset is the collateral's feed over the credit asset's feed
(:meth:`~toolkit.world.evm.credit.hub.CreditHub.unit_price`). The round is the block
(``roundId`` = phase 1, round = block number): a feed on the simulated chain is updated every
block. Addresses are the chain registry's (``[[price_feeds]]``), else derived from the chain
and the token (:func:`feed_address`).

>>> from toolkit.scenario import load_scenario
>>> feeds = PriceFeed.build(load_scenario("default", env={}), 8453)
>>> [f.symbol for f in feeds]
['USDC', 'gtUSDCp', 'superUSDC', 'yoUSD', 'yoBTC', 'EURe']
>>> [f.symbol for f in PriceFeed.build(load_scenario("default", env={}), 1)]
['USDC']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from math import floor
from typing import Any, ClassVar, Final

from eth_utils import keccak

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import default_registry
from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditCollateral, CreditSettings, along
from toolkit.world.evm.contracts import Contract, Message

__all__ = ["FEED_DECIMALS", "PriceFeed", "feed_address"]

#: Chainlink's USD feeds answer with 8 decimals.
FEED_DECIMALS: Final = 8
#: Chainlink round ids carry the aggregator's phase in their top 16 bits.
_PHASE: Final = 1 << 64

UsdPrice = Callable[[int], Fraction]


def feed_address(chain_id: int, token: str) -> str:
    """The USD feed of ``token`` on ``chain_id``: the registry's, else one derived from both
    (lowercase).

    >>> feed_address(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")[:2]
    '0x'
    """
    try:
        listed = default_registry().price_feed(chain_id, token)
    except NotInRegistry:
        derived = keccak(text=f"toolkit price feed:{chain_id}:{token.lower()}")[-20:]
        return "0x" + derived.hex()
    return listed.address.lower()


class PriceFeed(Contract):
    """An ``AggregatorV3Interface`` USD feed of one token (see the module docstring)."""

    functions: ClassVar[Mapping[str, str]] = {
        "priceFeed.latestRoundData": "latest_round_data",
        "priceFeed.description": "description",
        "erc20.decimals": "decimals",
    }

    def __init__(self, address: str, token: str, symbol: str, usd: UsdPrice) -> None:
        super().__init__(address)
        self.token = token.lower()
        self.symbol = symbol
        self.usd = usd

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        """One feed per asset the scenario's hubs value on ``chain_id``: the collateral locked
        there, then the hubs' credit assets (a token priced once)."""
        credit = scenario.credit
        if credit is None:
            return []
        priced: dict[str, tuple[str, UsdPrice]] = {}
        for hub in credit.hubs:
            for c in hub.collateral_on(chain_id):
                priced.setdefault(c.address.lower(), (c.symbol, _collateral_usd(hub, c)))
        for hub in credit.hubs:
            if hub.chain == chain_id:
                asset = (hub.asset, _asset_usd(hub.asset_usd))
                priced.setdefault(hub.asset_address.lower(), asset)
        return [
            cls(feed_address(chain_id, token), token, symbol, usd)
            for token, (symbol, usd) in priced.items()
        ]

    def answer(self, now: int) -> int:
        """The feed's answer at ``now``: USD per whole token, 8 decimals, rounded down."""
        return floor(self.usd(now) * 10**FEED_DECIMALS)

    def latest_round_data(self, msg: Message) -> tuple[Any, ...]:
        run = msg.run
        round_id = _PHASE | run.number
        return (round_id, self.answer(run.timestamp), run.timestamp, run.timestamp, round_id)

    def description(self, msg: Message) -> tuple[Any, ...]:
        return (f"{self.symbol} / USD",)

    def decimals(self, msg: Message) -> tuple[Any, ...]:
        return (FEED_DECIMALS,)


def _collateral_usd(hub: CreditSettings, c: CreditCollateral) -> UsdPrice:
    whole = 10**c.decimals
    return lambda now: hub.usd_per_unit(c, now) * whole


def _asset_usd(path: tuple[tuple[int, Decimal], ...]) -> UsdPrice:
    return lambda now: Fraction(along(path, now))
