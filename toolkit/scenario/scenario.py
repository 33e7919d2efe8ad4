"""The whole scenario: its parts, validated together on construction, and O(1) look-ups.

Errors name the TOML key path of the offending value (``pools[3].balance: ...``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from toolkit.scenario.amm import AmmMarkets
from toolkit.scenario.credit import CreditSettings
from toolkit.scenario.model import Auth, Chain, Pool, Pricing, Route, Token, Windows
from toolkit.scenario.rebalancing import Bridge, Rebalancing, pick_bridge
from toolkit.scenario.validate import ScenarioIndex, index_scenario

__all__ = ["REPAYMENT_CHAINS", "Scenario"]

#: Chains a loan of the liquidity API is repaid on (the only ``repaymentChain`` values the
#: vendor's schema allows); the last is the hub every other source repays on.
REPAYMENT_CHAINS: tuple[int, ...] = (1, 42161)


@dataclass(frozen=True)
class Scenario:
    """A whole scenario. Build it with :func:`toolkit.scenario.load_scenario` or directly.

    >>> from toolkit.scenario import load_scenario
    >>> s = load_scenario("default")
    >>> s.token(8453, "USDC").decimals
    6
    """

    name: str
    description: str
    filler: str
    chains: tuple[Chain, ...]
    tokens: tuple[Token, ...]
    pools: tuple[Pool, ...]
    routes: tuple[Route, ...]
    pricing: Pricing
    auth: Auth
    windows: Windows = field(default_factory=Windows)
    #: The AMM markets of the swap surface (``[amm]``; :mod:`toolkit.scenario.amm`).
    amm: AmmMarkets = field(default_factory=AmmMarkets)
    #: The credit product (:mod:`toolkit.scenario.credit`); None: the scenario has none.
    credit: CreditSettings | None = None
    #: How inventory moves between chains (``[rebalancing]``; none without the table).
    rebalancing: Rebalancing = field(default_factory=Rebalancing)
    #: The bridge models of transfers (``[[bridges]]``; :mod:`toolkit.scenario.rebalancing`).
    bridges: tuple[Bridge, ...] = ()

    def __post_init__(self) -> None:
        # Validate at construction (``dataclasses.replace`` included): the index is built once,
        # and building it checks every part.
        _ = self._index

    @cached_property
    def _index(self) -> ScenarioIndex:
        return index_scenario(self)

    def chain(self, chain_id: int) -> Chain:
        """The chain with id ``chain_id``; KeyError names it when absent.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").chain(10).name
        'optimism'
        """
        try:
            return self._index.chains[chain_id]
        except KeyError:
            raise KeyError(f"chain: {chain_id} is not in scenario {self.name!r}") from None

    def token(self, chain_id: int, symbol: str) -> Token:
        """The token ``symbol`` on ``chain_id``; KeyError names it when absent.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").token(1, "WETH").decimals
        18
        """
        try:
            return self._index.tokens[(chain_id, symbol)]
        except KeyError:
            raise KeyError(f"token: no {symbol} on chain {chain_id}") from None

    def token_by_address(self, chain_id: int, address: str) -> Token | None:
        """The token at ``address`` on ``chain_id`` (case-insensitive), or None.

        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("default")
        >>> s.token_by_address(10, "0x4200000000000000000000000000000000000006").symbol
        'WETH'
        """
        if not isinstance(address, str):
            return None
        return self._index.by_address.get((chain_id, address.lower()))

    def pools_for(self, chain_id: int, symbol: str) -> tuple[Pool, ...]:
        """Pools holding ``symbol`` on ``chain_id`` (possibly empty).

        >>> from toolkit.scenario import load_scenario
        >>> [p.type for p in load_scenario("default").pools_for(8453, "USDC")]
        ['usdc', 'aave']
        """
        return self._index.pools.get((chain_id, symbol), ())

    def route(self, src: int, dst: int, symbol: str) -> Route | None:
        """The onboarded route, or None.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").route(1, 1, "USDC") is None
        True
        """
        return self._index.routes.get((src, dst, symbol))

    def fill_cost(self, chain_id: int, symbol: str) -> int:
        """Cost of one fill on ``chain_id`` in ``symbol`` smallest units (rounded up).

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").fill_cost(1, "USDC")  # 1.50 USD
        1500000
        """
        return self._index.fill_costs[(chain_id, symbol)]

    def eta(self, src: int, dst: int) -> int:
        """Estimated fill duration in seconds: source confirmations plus the destination fill.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").eta(1, 8453)
        38
        """
        return self.chain(src).confirmation_s + self.chain(dst).fill_s

    def expiry_buffer(self, src: int, dst: int) -> int:
        """Seconds between fillDeadline and expires for an order from ``src`` to ``dst``.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").expiry_buffer(1, 8453)
        43200
        """
        w = self.windows
        if src == dst:
            return w.same_chain_expiry_buffer_s
        return w.cross_chain_expiry_buffer_s

    def with_policy(self, policy: str) -> Scenario:
        """This scenario under another rebalancing ``policy`` (``none``, ``threshold``,
        ``periodic`` or ``instant-free``), checked as a whole.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").with_policy("instant-free").rebalancing.policy
        'instant-free'
        """
        rebalancing = dataclasses.replace(self.rebalancing, policy=policy)
        return dataclasses.replace(self, rebalancing=rebalancing)

    def bridge(self, token: str, src: int, dst: int) -> Bridge | None:
        """The ``[[bridges]]`` entry that models ``token`` from ``src`` to ``dst`` (the most
        specific, then the first listed), or None.

        >>> from toolkit.scenario import load_scenario
        >>> load_scenario("default").bridge("WETH", 1, 10).fee_bps
        Decimal('0')
        """
        return pick_bridge(self.bridges, token, src, dst)

    def repayment_chain(self, src: int, symbol: str) -> int:
        """Where a loan of ``symbol`` quoted from ``src`` is repaid: ``src`` when it is one of
        :data:`REPAYMENT_CHAINS`, else the hub (the last of them), or ``src`` when the
        scenario holds no ``symbol`` on the hub.

        >>> from toolkit.scenario import load_scenario
        >>> s = load_scenario("default")
        >>> s.repayment_chain(1, "USDC"), s.repayment_chain(8453, "USDC")
        (1, 42161)
        """
        if src in REPAYMENT_CHAINS:
            return src
        hub = REPAYMENT_CHAINS[-1]
        return hub if (hub, symbol) in self._index.tokens else src
