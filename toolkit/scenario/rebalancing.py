"""How the service moves inventory between chains: ``[rebalancing]`` and ``[[bridges]]``.

The policy (``[rebalancing] policy``) is one of:

- ``none``: nothing moves between chains; a settlement credits the origin chain and stays there;
- ``threshold``: per (chain, token) a target share and a threshold share of the token's
  inventory, as the Across relayer's inventory manager keeps ``targetPct`` and
  ``thresholdPct`` per token and chain (across-protocol/relayer, ``src/interfaces/
  InventoryManagement.ts``): a chain whose share falls below its threshold is sent enough to
  reach its target plus ``overshoot_share`` (Across's ``rebalanceOvershoot``);
- ``periodic``: every ``period_s`` every chain is brought back to its target;
- ``instant-free``: the baseline the toolkit assumed before inventory had a chain: a settlement
  repays the lending pool in place, at once and for free. Named, never a silent default.

A scenario without ``[rebalancing]`` has policy ``none``: nothing is moved that the file does
not say moves. ``[[rebalancing.targets]]`` entries (``chain``, ``token``, ``target_share``,
``threshold_share``) set a chain's band; a (chain, token) left out targets its opening share
(its pools' balances over the token's) with a threshold of half that (:func:`resolve_targets`).

``[[bridges]]`` entries model a transfer per token and route: ``token``, optional ``src`` and
``dst`` (left out: every route of the token; the most specific entry wins, then the first
listed), ``name``, ``latency_s`` (seconds: a number, fixed, or ``{median, p95}``, a
log-normal), ``fee_bps`` (of the amount, deducted from what arrives), ``gas_usd`` (the source
chain's transaction; left out: that chain's ``fill_cost_usd``) and ``source`` (where the
figures come from). Errors name the key path, e.g.
``rebalancing.targets[2].threshold_share: must be below target_share``.

>>> from toolkit.scenario import load_scenario
>>> s = load_scenario("default")
>>> s.rebalancing.policy, s.bridge("USDC", 1, 8453).name
('threshold', 'CCTP v2 fast transfer')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Any, Final, Protocol

from pydantic import AfterValidator, BeforeValidator, model_validator

from toolkit.resources.base import RuleError
from toolkit.resources.declared import ConfigTable, choice_rule
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.fields import NonEmptyText, NonNegativeDecimal, Positive, Symbol
from toolkit.scenario.model import Pool, Token

__all__ = [
    "INSTANT_FREE",
    "NONE",
    "PERIODIC",
    "POLICIES",
    "THRESHOLD",
    "Bridge",
    "BridgeDoc",
    "BridgeLatency",
    "RebalanceTarget",
    "Rebalancing",
    "RebalancingDoc",
    "check_rebalancing",
    "parse_bridges",
    "parse_rebalancing",
    "pick_bridge",
    "resolve_targets",
]

NONE: Final = "none"
THRESHOLD: Final = "threshold"
PERIODIC: Final = "periodic"
INSTANT_FREE: Final = "instant-free"
#: Every rebalancing policy a scenario may name.
POLICIES: Final = (NONE, THRESHOLD, PERIODIC, INSTANT_FREE)


@dataclass(frozen=True, slots=True)
class RebalanceTarget:
    """One chain's band for one token: shares of the token's whole inventory."""

    chain: int
    token: str
    target_share: Decimal
    threshold_share: Decimal


@dataclass(frozen=True, slots=True)
class Rebalancing:
    """``[rebalancing]``: the policy and its parameters (see the module docstring).

    >>> Rebalancing().policy
    'none'
    """

    policy: str = NONE
    period_s: int | None = None
    overshoot_share: Decimal = Decimal(0)
    min_transfer_usd: Decimal = Decimal(0)
    targets: tuple[RebalanceTarget, ...] = ()


@dataclass(frozen=True, slots=True)
class BridgeLatency:
    """A transfer's latency in seconds: log-normal by its median and 95th percentile (equal:
    a fixed latency)."""

    median: Decimal
    p95: Decimal


@dataclass(frozen=True, slots=True)
class Bridge:
    """How ``token`` moves from ``src`` to ``dst`` (None: any chain), at what time and cost."""

    token: str
    name: str
    latency_s: BridgeLatency
    fee_bps: Decimal
    source: str
    gas_usd: Decimal | None = None
    src: int | None = None
    dst: int | None = None

    def specificity(self) -> int:
        """How many of ``src`` and ``dst`` the entry names (the most specific entry wins)."""
        return (self.src is not None) + (self.dst is not None)


def _at_most_one(value: Decimal) -> Decimal:
    if value > 1:
        raise ValueError("must be a share from 0 to 1")
    return value


#: A share in [0, 1] (a TOML number or a string of one).
Share = Annotated[NonNegativeDecimal, AfterValidator(_at_most_one)]


class TargetDoc(ConfigTable):
    """A ``[[rebalancing.targets]]`` entry."""

    chain: Positive
    token: Symbol
    target_share: Share
    threshold_share: Share

    @model_validator(mode="after")
    def _band(self) -> TargetDoc:
        if self.target_share > 0 and not self.threshold_share < self.target_share:
            raise RuleError(("threshold_share",), "must be below target_share")
        if self.target_share == 0 and self.threshold_share != 0:
            raise RuleError(("threshold_share",), "must be 0 when target_share is 0")
        return self


class RebalancingDoc(ConfigTable):
    """``[rebalancing]``."""

    policy: Annotated[str, choice_rule(f"must be one of {', '.join(POLICIES)}", *POLICIES)] = NONE
    period_s: Positive | None = None
    overshoot_share: Share = Decimal(0)
    min_transfer_usd: NonNegativeDecimal = Decimal(0)
    targets: tuple[TargetDoc, ...] = ()

    @model_validator(mode="after")
    def _complete(self) -> RebalancingDoc:
        if self.policy == PERIODIC and self.period_s is None:
            raise RuleError(("period_s",), "is required for policy periodic")
        return self


def _fixed_or_table(value: object) -> object:
    # A number is a fixed latency: its median and p95 alike.
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return {"median": value, "p95": value}
    return value


class LatencyDoc(ConfigTable):
    """A bridge's ``latency_s``: ``{median, p95}`` in seconds (or one number: fixed)."""

    median: NonNegativeDecimal
    p95: NonNegativeDecimal

    @model_validator(mode="after")
    def _ordered(self) -> LatencyDoc:
        if not self.median > 0:
            raise RuleError(("median",), "must be a number of seconds above 0")
        if self.p95 < self.median:
            raise RuleError(("p95",), "must be at least the median")
        return self


class BridgeDoc(ConfigTable):
    """A ``[[bridges]]`` entry."""

    token: Symbol
    name: NonEmptyText
    latency_s: Annotated[LatencyDoc, BeforeValidator(_fixed_or_table)]
    fee_bps: NonNegativeDecimal
    source: NonEmptyText
    gas_usd: NonNegativeDecimal | None = None
    src: Positive | None = None
    dst: Positive | None = None

    @model_validator(mode="after")
    def _route(self) -> BridgeDoc:
        if not self.fee_bps < 10_000:
            raise RuleError(("fee_bps",), "must be below 10000")
        if self.src is not None and self.src == self.dst:
            raise RuleError(("dst",), "must differ from src")
        return self


def parse_rebalancing(doc: RebalancingDoc | None) -> Rebalancing:
    """The ``[rebalancing]`` table as built (None: the table is absent, policy ``none``)."""
    if doc is None:
        return Rebalancing()
    return Rebalancing(
        policy=doc.policy,
        period_s=doc.period_s,
        overshoot_share=doc.overshoot_share,
        min_transfer_usd=doc.min_transfer_usd,
        targets=tuple(
            RebalanceTarget(t.chain, t.token, t.target_share, t.threshold_share)
            for t in doc.targets
        ),
    )


def parse_bridges(docs: tuple[BridgeDoc, ...]) -> tuple[Bridge, ...]:
    """The ``[[bridges]]`` entries as built."""
    return tuple(
        Bridge(
            token=b.token,
            name=b.name,
            latency_s=BridgeLatency(b.latency_s.median, b.latency_s.p95),
            fee_bps=b.fee_bps,
            source=b.source,
            gas_usd=b.gas_usd,
            src=b.src,
            dst=b.dst,
        )
        for b in docs
    )


class _Holdings(Protocol):
    """What :func:`resolve_targets` reads of a scenario."""

    @property
    def pools(self) -> tuple[Pool, ...]: ...
    @property
    def tokens(self) -> tuple[Token, ...]: ...
    @property
    def rebalancing(self) -> Rebalancing: ...


def resolve_targets(scenario: _Holdings) -> dict[tuple[int, str], tuple[Fraction, Fraction]]:
    """``(target_share, threshold_share)`` of every (chain, token) holding the token in the
    scenario's ``[[tokens]]``, as exact fractions: the ``[[rebalancing.targets]]`` entry, else
    the chain's opening share (its pools' balances over all the token's pools) and half that.

    >>> from toolkit.scenario import load_scenario
    >>> targets = resolve_targets(load_scenario("single-pool"))
    >>> targets[(8453, "USDC")], targets[(1, "USDC")]
    ((Fraction(1, 1), Fraction(1, 2)), (Fraction(0, 1), Fraction(0, 1)))
    """
    opening: dict[tuple[int, str], int] = {}
    totals: dict[str, int] = {}
    for pool in scenario.pools:
        key = (pool.chain, pool.token)
        opening[key] = opening.get(key, 0) + pool.balance
        totals[pool.token] = totals.get(pool.token, 0) + pool.balance
    explicit = {(t.chain, t.token): t for t in scenario.rebalancing.targets}
    resolved: dict[tuple[int, str], tuple[Fraction, Fraction]] = {}
    for token in scenario.tokens:
        key = (token.chain, token.symbol)
        given = explicit.get(key)
        if given is not None:
            resolved[key] = (Fraction(given.target_share), Fraction(given.threshold_share))
            continue
        total = totals.get(token.symbol, 0)
        share = Fraction(opening.get(key, 0), total) if total else Fraction(0)
        resolved[key] = (share, share / 2)
    return resolved


def pick_bridge(bridges: tuple[Bridge, ...], token: str, src: int, dst: int) -> Bridge | None:
    """The entry that models ``token`` from ``src`` to ``dst``: the most specific match, then
    the first listed; None when no entry matches.

    >>> b = Bridge("USDC", "any", BridgeLatency(Decimal(1), Decimal(1)), Decimal(0), "s")
    >>> pick_bridge((b,), "USDC", 1, 10) is b, pick_bridge((b,), "WETH", 1, 10)
    (True, None)
    """
    best: Bridge | None = None
    for bridge in bridges:
        if bridge.token != token:
            continue
        if (bridge.src is not None and bridge.src != src) or (
            bridge.dst is not None and bridge.dst != dst
        ):
            continue
        if best is None or bridge.specificity() > best.specificity():
            best = bridge
    return best


def check_rebalancing(
    s: Any, chains: Mapping[int, Any], tokens: Mapping[tuple[int, str], Any]
) -> None:
    """The relations of ``[rebalancing]`` and ``[[bridges]]`` with the rest of scenario ``s``
    (its chains and tokens by key): every named chain and token exists; a policy that moves
    inventory (threshold, periodic) has a bridge for every ordered pair of a pooled token's
    chains, the token's decimals alike on them, a price when ``min_transfer_usd`` is set, and
    targets that sum to at most 1."""
    seen: set[tuple[int, str]] = set()
    for i, target in enumerate(s.rebalancing.targets):
        p = f"rebalancing.targets[{i}]"
        if target.chain not in chains:
            raise ScenarioError(f"{p}.chain", f"chain {target.chain} is not in chains")
        if (target.chain, target.token) not in tokens:
            raise ScenarioError(f"{p}.token", f"no token {target.token} on chain {target.chain}")
        if (target.chain, target.token) in seen:
            raise ScenarioError(p, f"{target.token} on chain {target.chain} is listed twice")
        seen.add((target.chain, target.token))
    routes: set[tuple[str, int | None, int | None]] = set()
    for i, bridge in enumerate(s.bridges):
        p = f"bridges[{i}]"
        for name in ("src", "dst"):
            chain = getattr(bridge, name)
            if chain is not None and (chain, bridge.token) not in tokens:
                raise ScenarioError(f"{p}.{name}", f"no token {bridge.token} on chain {chain}")
        if not any(symbol == bridge.token for _, symbol in tokens):
            raise ScenarioError(f"{p}.token", f"{bridge.token} is not a token of the scenario")
        route = (bridge.token, bridge.src, bridge.dst)
        if route in routes:
            raise ScenarioError(p, "another entry models the same token and route")
        routes.add(route)
    if s.rebalancing.policy in (THRESHOLD, PERIODIC):
        _check_moves(s, tokens)


def _check_moves(s: Any, tokens: Mapping[tuple[int, str], Any]) -> None:
    """What a policy that moves inventory needs (see :func:`check_rebalancing`)."""
    policy = s.rebalancing.policy
    for symbol in dict.fromkeys(pool.token for pool in s.pools):
        held = [chain for chain, name in tokens if name == symbol]
        if len({tokens[(chain, symbol)].decimals for chain in held}) > 1:
            raise ScenarioError(
                "rebalancing.policy", f"{policy} moves {symbol}, whose decimals differ by chain"
            )
        for src in held:
            for dst in held:
                if src != dst and pick_bridge(s.bridges, symbol, src, dst) is None:
                    raise ScenarioError(
                        "bridges",
                        f"no bridge for {symbol} from chain {src} to chain {dst} (policy "
                        f"{policy} may move {symbol} between any two of its chains)",
                    )
        if s.rebalancing.min_transfer_usd > 0 and s.pricing.price_usd(symbol) is None:
            raise ScenarioError(
                "rebalancing.min_transfer_usd", f"needs a [prices] entry for {symbol}"
            )
        total = sum(
            (t for (_, name), (t, _) in resolve_targets(s).items() if name == symbol),
            Fraction(0),
        )
        if total > 1:
            raise ScenarioError(
                "rebalancing.targets",
                f"the {symbol} target shares sum to {float(total):.6g} (chains left out "
                "target their opening share); they must sum to at most 1",
            )
