"""Card authorizations on credit: each swipe answered within the card network's ~2 s budget.

A card program answers a swipe by reading the account (``GET /credit/accounts/{account}/info``,
budget < 100 ms), building a draw to the card's receiver (``GET .../draw``, < 100 ms), sending it
through the operator contract and waiting for the draw to be included in the next block of a
chain with 2 s blocks; the answer must reach the card network within about 2 s of the swipe
(research/service-api.md §4.5). This module simulates that path on a virtual clock (seconds from
the start of the run, nothing sleeps), with the program's rules:

- **fail closed**: a step over its budget, an error, or an answer that would come after the
  total budget declines the swipe (a draw already sent still lands: ``late_draws``);
- **a health rule**: decline when the account's health factor after the draw (computed by
  :func:`toolkit.credit.figures`, the one definition) would be below ``min_health_factor``
  (1.3 by default, the vendor's webhook example), or the draw exceeds the remaining capacity;
- **idempotent by authorization id**: a retried swipe with an id already seen gets the first
  answer (once that answer exists) and never draws again;
- **one swipe per account at a time**: a swipe waits for the account's previous one (its draw
  included), so two concurrent swipes never both pass the health rule on stale figures.

The steps run against a :class:`CardBackend`; :class:`SimulatedBackend` is the simulated one
(a ledger of :class:`Position` s, latencies from :class:`Latencies`, a block schedule).
:class:`toolkit.client.cards.ServiceCardBackend` plugs a real credit service in at the same
seam: its ``info`` maps ``/info`` (and the account's collateral) to a :class:`Position`,
``draw`` returns the ``calls`` of ``/draw``, ``include`` sends them and waits for the receipt,
each returning the measured wall time; the authorizer is unchanged (:func:`card_run` reports a
run that drives authorizers itself, as :func:`toolkit.client.cards.run_cards` does).
:func:`compare_prefunded` sets the same swipes against a receiver pre-funded by auto top-up
(:mod:`toolkit.models.topup`).

Within a run the collateral keeps the values the ledger holds (no price moves: a run covers
hours to days, the health models of :mod:`toolkit.models.health` cover prices), and no interest
accrues (it starts 37 days after a first draw). Amounts are integers in the credit asset's
smallest units (USDC: 6 decimals); latencies in the frames are milliseconds.

>>> accounts = card_accounts(20, seed=1)
>>> swipes = card_swipes(accounts, rate_per_hour=2, hours=2, seed=1)
>>> run = simulate_cards(swipes, accounts, seed=1)
>>> run.summary["swipes"] == swipes.height, 0 < run.summary["approval_rate"] <= 1
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
import polars as pl

from toolkit.arguments import ArgumentError, fraction, number, whole
from toolkit.credit import BPS, DEFAULT_RULES, AccountFigures, ProductRules, figures
from toolkit.models.topup import simulate_topups

__all__ = [
    "REASONS",
    "Authorizer",
    "BackendError",
    "Budget",
    "CardBackend",
    "CardRun",
    "Decision",
    "DrawCall",
    "Empirical",
    "Latencies",
    "Lognormal",
    "Position",
    "SimulatedBackend",
    "Timed",
    "card_accounts",
    "card_receiver",
    "card_run",
    "card_swipes",
    "compare_prefunded",
    "draw_for",
    "simulate_cards",
]

#: Every answer's reason: ``approved`` or why the swipe was declined.
REASONS: tuple[str, ...] = (
    "approved",
    "queue_timeout",  # the account's previous swipe held it past this one's budget
    "info_timeout",
    "info_error",
    "health",  # the health factor after the draw would be below the rule
    "capacity",  # the draw exceeds the remaining credit capacity
    "draw_timeout",
    "draw_error",
    "broadcast_error",
    "chain_timeout",  # included too late for the budget (the draw still lands)
    "balance_timeout",  # pre-funded: reading the receiver's balance took too long
    "balance_error",
    "receiver_balance",  # pre-funded: the receiver's balance is below the amount
)

_USD = 10**6


# -- latency distributions -----------------------------------------------------------------------


class Distribution(Protocol):
    """A latency distribution: ``sample(rng, n)`` gives ``n`` durations in seconds."""

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        ...


@dataclass(frozen=True)
class Lognormal:
    """Log-normal durations: ``median_ms`` milliseconds, log-sd ``sigma``.

    >>> d = Lognormal(40, 0.35)
    >>> round(d.quantile_ms(0.99), 1)  # p99 = median x exp(2.326 sigma)
    90.3
    >>> float(d.sample(np.random.default_rng(0), 10_000).mean()) > 0.04
    True
    """

    median_ms: float
    sigma: float

    def __post_init__(self) -> None:
        number(self.median_ms, "median_ms", minimum=0)
        number(self.sigma, "sigma", minimum=0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        return self.median_ms / 1_000 * rng.lognormal(0.0, self.sigma, n)

    def quantile_ms(self, q: float) -> float:
        """The ``q`` quantile in milliseconds."""
        from statistics import NormalDist

        z = NormalDist().inv_cdf(number(q, "q", above=0, below=1))
        return self.median_ms * math.exp(self.sigma * z)


@dataclass(frozen=True)
class Empirical:
    """Measured durations (``samples_ms``, milliseconds), resampled with replacement: how
    latencies measured from a service (the embedded one over loopback) feed the simulation.

    >>> sorted(set(Empirical((10.0, 20.0)).sample(np.random.default_rng(0), 100).tolist()))
    [0.01, 0.02]
    """

    samples_ms: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_ms:
            raise ArgumentError("samples_ms", "at least one sample", self.samples_ms)
        for i, value in enumerate(self.samples_ms):
            number(value, f"samples_ms[{i}]", minimum=0)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds."""
        return (
            np.asarray(self.samples_ms, dtype=np.float64)[rng.integers(0, len(self.samples_ms), n)]
            / 1_000
        )


@dataclass(frozen=True)
class Latencies:
    """The simulated path's latencies and failure rates; the defaults are assumptions sized on
    the vendor's card-program budget (research §4.5: signature check < 1 ms, card → wallet
    lookup < 10 ms, ``/info`` < 100 ms, ``/draw`` < 100 ms, on-chain < 1 s) until figures measured
    over loopback replace them (:class:`Empirical`):

    - ``pre``: signature check and wallet lookup, median 4 ms (log-sd 0.5);
    - ``info``, ``draw``: a hosted API from the program's backend, medians 35 and 40 ms (log-sd
      0.35: p99 79 and 90 ms, so about 0.1 % and 0.4 % exceed the 100 ms budgets);
    - ``broadcast``: signing (KMS) and sending the operator call to a dedicated RPC, median
      60 ms; ``receipt``: seeing the block's receipt after it is produced, median 50 ms;
    - ``balance``: the pre-funded path's read of the receiver's balance, median 3 ms;
    - blocks every ``block_time`` s (2 s) at a random phase; a sent draw goes into the first
      block after it reaches the sequencer and slips a block with ``missed_block`` (1 %);
    - ``*_error``: the chance a step answers an error instead (0.05 % to 0.1 %).

    >>> Latencies().block_time, Latencies().info.median_ms
    (2.0, 35.0)
    """

    pre: Distribution = field(default_factory=lambda: Lognormal(4.0, 0.5))
    info: Distribution = field(default_factory=lambda: Lognormal(35.0, 0.35))
    draw: Distribution = field(default_factory=lambda: Lognormal(40.0, 0.35))
    broadcast: Distribution = field(default_factory=lambda: Lognormal(60.0, 0.4))
    receipt: Distribution = field(default_factory=lambda: Lognormal(50.0, 0.4))
    balance: Distribution = field(default_factory=lambda: Lognormal(3.0, 0.5))
    block_time: float = 2.0
    missed_block: float = 0.01
    info_error: float = 0.0005
    draw_error: float = 0.0005
    broadcast_error: float = 0.001
    balance_error: float = 0.0002

    def __post_init__(self) -> None:
        number(self.block_time, "block_time", above=0)
        fraction(self.missed_block, "missed_block")
        if self.missed_block >= 1:
            raise ArgumentError("missed_block", "a probability below 1", self.missed_block)
        for name in ("info_error", "draw_error", "broadcast_error", "balance_error"):
            fraction(getattr(self, name), name)


@dataclass(frozen=True)
class Budget:
    """The answer's budget (``total``, from the swipe) and the steps' own, in seconds.

    >>> Budget().total, Budget().info, Budget().draw
    (2.0, 0.1, 0.1)
    """

    total: float = 2.0
    info: float = 0.1
    draw: float = 0.1
    balance: float = 0.1

    def __post_init__(self) -> None:
        number(self.total, "total", above=0)
        for name in ("info", "draw", "balance"):
            number(getattr(self, name), name, above=0)


# -- the backend seam ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    """An account as the ledger holds it: collateral ``values`` (asset → value in credit units)
    and the debt's ``principal`` and ``interest``; :meth:`figures` are what ``/info`` reports.

    >>> Position({"usdc": 1_000 * 10**6}, principal=500 * 10**6).figures().health_factor
    Fraction(37, 20)
    """

    values: Mapping[str, int]
    principal: int = 0
    interest: int = 0

    def __post_init__(self) -> None:
        for asset, value in self.values.items():
            whole(value, f"values[{asset!r}]", minimum=0)
        whole(self.principal, "principal", minimum=0)
        whole(self.interest, "interest", minimum=0)

    def figures(self, rules: ProductRules = DEFAULT_RULES) -> AccountFigures:
        """The account's figures by :func:`toolkit.credit.figures`."""
        return figures(self.values, principal=self.principal, interest=self.interest, rules=rules)

    def after_draw(self, amount: int) -> Position:
        """The position once a draw of ``amount`` (fee included) is in the principal."""
        return replace(self, principal=self.principal + whole(amount, "amount", minimum=0))


T = TypeVar("T")


class Timed(NamedTuple, Generic[T]):
    """A step's result and the ``seconds`` it took."""

    value: T
    seconds: float


class BackendError(Exception):
    """A step that answered an error after ``seconds``."""

    def __init__(self, step: str, seconds: float, message: str = "error") -> None:
        super().__init__(f"{step}: {message} after {seconds * 1_000:.1f} ms")
        self.step = step
        self.seconds = seconds


class CardBackend(Protocol):
    """What the authorizer needs of the credit service and the chain. Each call starts at
    virtual time ``at`` and returns its result with the seconds it took (a loopback backend
    measures them); an error raises (a :class:`BackendError` carries its duration).

    - ``info(account, at)``: the account's :class:`Position` (``GET /info``);
    - ``draw(account, amount, receiver, at)``: the calls that draw ``amount`` to ``receiver``
      (``GET /draw``), opaque to the authorizer;
    - ``include(calls, at)``: send the calls and wait for their block: the block's time.
    """

    def info(self, account: str, at: float) -> Timed[Position]:
        """The account's position."""
        ...

    def draw(self, account: str, amount: int, receiver: str, at: float) -> Timed[Sequence[object]]:
        """The calls that draw ``amount`` to ``receiver``."""
        ...

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        """Send ``calls``; the time of the block that includes them."""
        ...


@dataclass(frozen=True)
class DrawCall:
    """The simulated operator call ``openCreditLine(borrower, receiver, amount)``."""

    account: str
    receiver: str
    amount: int


class _Samples:
    """Durations drawn in blocks of 4,096 (one numpy call each), handed out one at a time."""

    def __init__(self, distribution: Distribution, rng: np.random.Generator) -> None:
        self._distribution, self._rng = distribution, rng
        self._values: list[float] = []

    def next(self) -> float:
        if not self._values:
            self._values = self._distribution.sample(self._rng, 4_096).tolist()[::-1]
        return self._values.pop()


class SimulatedBackend:
    """The credit service and the chain, simulated: a ledger of positions, latencies drawn
    from ``latencies``, blocks every ``latencies.block_time`` seconds from a random phase. A
    draw changes the ledger when it is included (``drawn`` and ``delivered`` keep the totals;
    ``receivers`` the balances delivered); ``calls`` counts the draws included.

    >>> backend = SimulatedBackend({"a": Position({"usdc": 10**9})}, seed=0)
    >>> calls = backend.draw("a", 10**8, "a:card", at=0.0).value
    >>> block = backend.include(calls, at=0.1).value
    >>> block % 2.0 == backend.phase, backend.ledger["a"].principal, backend.receivers["a:card"]
    (True, 100000000, 99500000)
    """

    def __init__(
        self,
        positions: Mapping[str, Position],
        latencies: Latencies | None = None,
        *,
        seed: int = 0,
        rules: ProductRules = DEFAULT_RULES,
    ) -> None:
        self.latencies = latencies or Latencies()
        self.rules = rules
        self.ledger: dict[str, Position] = dict(positions)
        self.receivers: dict[str, int] = {}
        self.calls = 0
        rng = np.random.default_rng(whole(seed, "seed", minimum=0))
        self.phase = float(rng.uniform(0, self.latencies.block_time))
        self._rng = rng
        lat = self.latencies
        self._info, self._draw = _Samples(lat.info, rng), _Samples(lat.draw, rng)
        self._broadcast, self._receipt = _Samples(lat.broadcast, rng), _Samples(lat.receipt, rng)
        self._uniform: list[float] = []
        self._figures: dict[str, tuple[Position, AccountFigures]] = {}

    def _chance(self) -> float:
        if not self._uniform:
            self._uniform = self._rng.random(4_096).tolist()
        return self._uniform.pop()

    def _position(self, account: str) -> Position:
        position = self.ledger.get(account)
        if position is None:
            raise BackendError("info", 0.0, f"unknown account {account!r}")
        return position

    def info(self, account: str, at: float) -> Timed[Position]:
        """The account's position after ``info`` latency (or an error)."""
        seconds = self._info.next()
        if self._chance() < self.latencies.info_error:
            raise BackendError("info", seconds)
        return Timed(self._position(account), seconds)

    def draw(self, account: str, amount: int, receiver: str, at: float) -> Timed[Sequence[object]]:
        """One :class:`DrawCall`; an error beyond the remaining capacity, like the service's 400."""
        seconds = self._draw.next()
        if self._chance() < self.latencies.draw_error:
            raise BackendError("draw", seconds)
        position = self._position(account)
        known = self._figures.get(account)
        if known is None or known[0] is not position:  # figures once per ledger change
            known = (position, position.figures(self.rules))
            self._figures[account] = known
        if amount > known[1].remaining_credit_capacity:
            raise BackendError("draw", seconds, "insufficient credit capacity")
        return Timed((DrawCall(account, receiver, amount),), seconds)

    def next_block(self, t: float) -> float:
        """The first block strictly after time ``t``.

        >>> b = SimulatedBackend({}, seed=3); b.next_block(b.phase) == b.phase + 2.0
        True
        """
        step = self.latencies.block_time
        return self.phase + (math.floor((t - self.phase) / step) + 1) * step

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        """Apply the draws; the time of their block (``receipt`` latency later, it is seen)."""
        sent = self._broadcast.next()
        if self._chance() < self.latencies.broadcast_error:
            raise BackendError("broadcast", sent)
        block = self.next_block(at + sent)
        while self._chance() < self.latencies.missed_block:
            block += self.latencies.block_time
        draws: list[DrawCall] = []
        for call in calls:  # all checked before any is applied
            if not isinstance(call, DrawCall):
                raise TypeError(f"calls: expected DrawCall, got {type(call).__name__}")
            draws.append(call)
        for call in draws:
            position = self._position(call.account)
            self.ledger[call.account] = position.after_draw(call.amount)
            fee = self.rules.draw_fee(call.amount)
            self.receivers[call.receiver] = self.receivers.get(call.receiver, 0) + call.amount - fee
            self.calls += 1
        return Timed(block, block + self._receipt.next() - at)


# -- the authorizer ------------------------------------------------------------------------------


def card_receiver(account: str) -> str:
    """The receiver a card program whitelists for ``account`` (simulation naming).

    >>> card_receiver("acct-1")
    'acct-1:card'
    """
    return f"{account}:card"


def draw_for(amount: int, rules: ProductRules = DEFAULT_RULES) -> int:
    """The smallest draw that delivers ``amount`` after its origination fee.

    >>> draw_for(995 * 10**6)  # 1,000 drawn, 5 fee, 995 delivered
    1000000000
    """
    whole(amount, "amount", minimum=0)
    draw = -(-amount * BPS // (BPS - rules.origination_fee_bps))
    while draw - rules.draw_fee(draw) < amount:
        draw += 1
    return draw


@dataclass(frozen=True)
class Decision:
    """One answer: ``approved`` or the ``reason`` (:data:`REASONS`), when it was ``answered``
    (virtual seconds), the ``drawn`` amount and its ``fee`` (0 when nothing was drawn for this
    request: a ``replay`` answers from the idempotency store), ``late`` when a draw landed after a
    declined answer, ``seen`` when the program saw the draw's block (None without one: past the
    budget for a late draw), and the ``health_factor`` after the draw (None: no debt)."""

    auth_id: str
    account: str
    amount: int
    arrived: float
    answered: float
    approved: bool
    reason: str
    drawn: int = 0
    fee: int = 0
    late: bool = False
    replay: bool = False
    seen: float | None = None
    health_factor: Fraction | None = None

    @property
    def latency(self) -> float:
        """Seconds from the swipe to its answer."""
        return self.answered - self.arrived


class Authorizer:
    """Answers swipes through a :class:`CardBackend` under the program's rules (module
    docstring). ``pre`` is the program's own work before ``/info`` (signature check, wallet
    lookup); ``receiver`` names each account's card receiver.

    >>> backend = SimulatedBackend({"a": Position({"usdc": 1_000 * 10**6})}, seed=0)
    >>> auth = Authorizer(backend, seed=0)
    >>> first = auth.authorize("auth-1", "a", 100 * 10**6, at=0.0)
    >>> again = auth.authorize("auth-1", "a", 100 * 10**6, at=5.0)
    >>> first.approved, again.approved, again.replay, backend.calls
    (True, True, True, 1)
    >>> auth.authorize("auth-2", "a", 700 * 10**6, at=10.0).reason  # HF 925/802.5 < 1.3
    'health'
    """

    def __init__(
        self,
        backend: CardBackend,
        *,
        min_health_factor: float = 1.3,
        budget: Budget | None = None,
        pre: Distribution | None = None,
        receiver: Callable[[str], str] = card_receiver,
        rules: ProductRules = DEFAULT_RULES,
        seed: int = 0,
    ) -> None:
        self.backend = backend
        # the decimal written (1.3 is 13/10), not the binary float just above it
        self.rule = Fraction(repr(number(min_health_factor, "min_health_factor", minimum=1)))
        self.budget = budget or Budget()
        self.receiver = receiver
        self.rules = rules
        self._pre = _Samples(
            pre or Latencies().pre, np.random.default_rng(whole(seed, "seed", minimum=0))
        )
        self.answers: dict[str, Decision] = {}
        self._busy_until: dict[str, float] = {}  # an account's previous swipe, draw included

    def authorize(self, auth_id: str, account: str, amount: int, at: float) -> Decision:
        """Answer one swipe of ``amount`` (delivered to the receiver) arriving at ``at``."""
        whole(amount, "amount", above=0)
        number(at, "at")
        start = at + self._pre.next()
        known = self.answers.get(auth_id)
        if known is not None:  # idempotent: the first answer, once it exists; never a 2nd draw
            return replace(
                known,
                arrived=at,
                answered=max(start, known.answered),
                drawn=0,
                fee=0,
                late=False,
                replay=True,
            )
        decision = self._decide(auth_id, account, amount, at, start)
        self.answers[auth_id] = decision
        return decision

    def _decide(self, auth_id: str, account: str, amount: int, at: float, t: float) -> Decision:
        deadline = at + self.budget.total

        def no(reason: str, when: float, **extra: Any) -> Decision:
            self._busy_until[account] = max(self._busy_until.get(account, 0.0), when)
            return Decision(
                auth_id, account, amount, at, min(when, deadline), False, reason, **extra
            )

        t = max(t, self._busy_until.get(account, t))  # one swipe per account at a time
        if t >= deadline:
            return Decision(auth_id, account, amount, at, deadline, False, "queue_timeout")
        limit = min(t + self.budget.info, deadline)
        try:
            position, seconds = self.backend.info(account, t)
        except BackendError as error:
            return no(
                "info_error" if t + error.seconds <= limit else "info_timeout",
                min(t + error.seconds, limit),
            )
        except Exception:  # fail closed on anything
            return no("info_error", t)
        if t + seconds > limit:
            return no("info_timeout", limit)
        t += seconds
        draw = draw_for(amount, self.rules)
        try:  # an answer the rules cannot read (an unknown asset, a malformed position) declines
            before = position.figures(self.rules)
            after = figures(
                position.values,
                principal=position.principal + draw,
                interest=position.interest,
                rules=self.rules,
            )
        except Exception:
            return no("info_error", t)
        if draw > before.remaining_credit_capacity:
            return no("capacity", t, health_factor=after.health_factor)
        if after.health_factor is not None and after.health_factor < self.rule:
            return no("health", t, health_factor=after.health_factor)
        limit = min(t + self.budget.draw, deadline)
        try:
            calls, seconds = self.backend.draw(account, draw, self.receiver(account), t)
        except BackendError as error:
            return no(
                "draw_error" if t + error.seconds <= limit else "draw_timeout",
                min(t + error.seconds, limit),
            )
        except Exception:
            return no("draw_error", t)
        if t + seconds > limit:
            return no("draw_timeout", limit)
        t += seconds
        try:
            _, seconds = self.backend.include(calls, t)
        except BackendError as error:
            return no("broadcast_error", t + error.seconds)
        except Exception:
            return no("broadcast_error", t)
        seen = t + seconds
        fee = self.rules.draw_fee(draw)
        self._busy_until[account] = seen
        if seen > deadline:  # fail closed; the draw is out and lands anyway
            return no(
                "chain_timeout",
                deadline,
                drawn=draw,
                fee=fee,
                late=True,
                seen=seen,
                health_factor=after.health_factor,
            )
        return Decision(
            auth_id,
            account,
            amount,
            at,
            seen,
            True,
            "approved",
            draw,
            fee,
            seen=seen,
            health_factor=after.health_factor,
        )


# -- the simulation ------------------------------------------------------------------------------


def card_accounts(
    n: int,
    *,
    seed: int = 0,
    median_collateral: int = 2_000 * _USD,
    rules: ProductRules = DEFAULT_RULES,
) -> dict[str, Position]:
    """``n`` card accounts ``acct-0000``…: one or two collateral assets of the product worth
    about ``median_collateral`` (log-normal, log-sd 0.6), drawn to 0–85 % of their capacity, so
    the health factors spread from about 1.2 upwards and some swipes meet the 1.3 rule.

    >>> accounts = card_accounts(3, seed=0)
    >>> sorted(accounts)[0], all(p.figures().total_collateral_value > 0 for p in accounts.values())
    ('acct-0000', True)
    """
    whole(n, "n", minimum=0)
    whole(median_collateral, "median_collateral", minimum=1)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    assets = sorted(rules.collateral)
    accounts = {}
    for i in range(n):
        held = rng.choice(len(assets), size=int(rng.integers(1, 3)), replace=False)
        total = median_collateral * float(rng.lognormal(0.0, 0.6))
        shares = rng.dirichlet(np.ones(len(held)))
        values = {assets[j]: max(1, int(total * s)) for j, s in zip(held, shares, strict=True)}
        capacity = figures(values, rules=rules).total_credit_capacity
        principal = int(capacity * float(rng.uniform(0.0, 0.85)))
        accounts[f"acct-{i:04d}"] = Position(values, principal=principal)
    return accounts


def card_swipes(
    accounts: Mapping[str, Position] | Sequence[str],
    *,
    rate_per_hour: float = 0.5,
    median: int = 25 * _USD,
    sigma: float = 0.9,
    hours: float = 24.0,
    retry_share: float = 0.02,
    retry_after: tuple[float, float] = (0.5, 4.0),
    seed: int = 0,
) -> pl.DataFrame:
    """Swipes on ``accounts``: Poisson arrivals at ``rate_per_hour`` each over ``hours``,
    log-normal amounts around ``median`` (smallest units; log-sd ``sigma``: a 25 USD median with
    a long tail of larger purchases), and a ``retry_share`` of them sent again with the same
    authorization id ``retry_after`` seconds later (uniform between the two bounds: the network
    retries while the first may still be in flight). Columns ``auth_id``, ``account``, ``t``
    (seconds from the start), ``amount``, ``retry``; sorted by ``t``.

    >>> swipes = card_swipes(["a", "b"], rate_per_hour=10, hours=1, seed=2)
    >>> swipes.columns, swipes["t"].is_sorted()
    (['auth_id', 'account', 't', 'amount', 'retry'], True)
    """
    names = list(accounts)
    rate = number(rate_per_hour, "rate_per_hour", above=0)
    whole(median, "median", minimum=1)
    number(sigma, "sigma", minimum=0)
    span = number(hours, "hours", above=0) * 3_600
    share = fraction(retry_share, "retry_share")
    low = number(retry_after[0], "retry_after[0]", minimum=0)
    high = number(retry_after[1], "retry_after[1]", minimum=low)
    rng = np.random.default_rng(whole(seed, "seed", minimum=0))
    counts = rng.poisson(rate * hours, len(names))
    owners = np.repeat(np.arange(len(names)), counts)
    times = rng.uniform(0.0, span, owners.size)
    order = np.argsort(times, kind="stable")
    owners, times = owners[order], times[order]
    amounts = np.maximum(1, np.rint(median * rng.lognormal(0.0, sigma, owners.size))).astype(
        np.int64
    )
    ids = np.array([f"auth-{i:07d}" for i in range(owners.size)], dtype=object)
    again = np.flatnonzero(rng.random(owners.size) < share)
    frame = pl.DataFrame(
        {
            "auth_id": np.concatenate([ids, ids[again]]).tolist(),
            "account": [names[o] for o in np.concatenate([owners, owners[again]])],
            "t": np.concatenate([times, times[again] + rng.uniform(low, high, again.size)]),
            "amount": np.concatenate([amounts, amounts[again]]),
            "retry": np.concatenate([np.zeros(owners.size, bool), np.ones(again.size, bool)]),
        },
        schema={
            "auth_id": pl.String,
            "account": pl.String,
            "t": pl.Float64,
            "amount": pl.Int64,
            "retry": pl.Boolean,
        },
    )
    return frame.sort("t", maintain_order=True)


def _check_swipes(swipes: pl.DataFrame) -> None:
    needed = ["auth_id", "account", "t", "amount"]
    missing = [c for c in needed if c not in swipes.columns]
    if missing:
        raise ArgumentError(
            "swipes", "a frame with columns auth_id, account, t, amount", swipes.columns
        )
    if swipes.height and (swipes["amount"].min() <= 0 or not swipes["t"].is_sorted()):  # type: ignore[operator]
        raise ArgumentError("swipes", "positive amounts, sorted by t", "a row that is not")


@dataclass(frozen=True)
class CardRun:
    """A simulated run: every answer (``decisions``, one row per swipe in order; ``latency_ms``
    to the answer, ``path_ms`` to the draw's block when one was seen, even past the budget), the
    ``backend`` as it ended, and the ``summary``: ``swipes``, ``approved``, ``approval_rate``,
    ``p50_ms``/``p99_ms``/``max_ms`` latency of the answers, ``over_budget`` (share of answers
    past the budget: 0 when failing closed works), ``path_p99_ms`` (the path's p99, budget or
    not), ``budget_ms``, ``drawn``, ``fees``, ``draws`` (transactions) and ``late_draws`` (landed
    after a declined answer)."""

    decisions: pl.DataFrame
    backend: CardBackend
    summary: dict[str, Any]

    def reasons(self) -> pl.DataFrame:
        """Answers by reason (:data:`REASONS` order), with their share of all swipes.

        >>> accounts = {"a": Position({"usdc": 10**9})}
        >>> run = simulate_cards(card_swipes(accounts, hours=1, seed=0), accounts)
        >>> run.reasons().columns
        ['reason', 'swipes', 'share']
        """
        counts = self.decisions.group_by("reason").len("swipes")
        order = pl.DataFrame({"reason": list(REASONS), "rank": range(len(REASONS))})
        total = max(1, self.decisions.height)
        return (
            counts.join(order, on="reason", how="left")
            .sort("rank")
            .drop("rank")
            .with_columns((pl.col("swipes") / total).alias("share"))
        )


def _frame(decisions: Sequence[Decision]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "auth_id": [d.auth_id for d in decisions],
            "account": [d.account for d in decisions],
            "t": [d.arrived for d in decisions],
            "amount": [d.amount for d in decisions],
            "approved": [d.approved for d in decisions],
            "reason": [d.reason for d in decisions],
            "latency_ms": [d.latency * 1_000 for d in decisions],
            "path_ms": [
                ((d.seen if d.seen is not None and not d.replay else d.answered) - d.arrived)
                * 1_000
                for d in decisions
            ],
            "drawn": [d.drawn for d in decisions],
            "fee": [d.fee for d in decisions],
            "late": [d.late for d in decisions],
            "replay": [d.replay for d in decisions],
            "health_factor": [
                None if d.health_factor is None else float(d.health_factor) for d in decisions
            ],
        },
        schema={
            "auth_id": pl.String,
            "account": pl.String,
            "t": pl.Float64,
            "amount": pl.Int64,
            "approved": pl.Boolean,
            "reason": pl.String,
            "latency_ms": pl.Float64,
            "path_ms": pl.Float64,
            "drawn": pl.Int64,
            "fee": pl.Int64,
            "late": pl.Boolean,
            "replay": pl.Boolean,
            "health_factor": pl.Float64,
        },
    )


def _latency_summary(latency_ms: np.ndarray, budget: Budget) -> dict[str, float]:
    if latency_ms.size == 0:
        return {"p50_ms": math.nan, "p99_ms": math.nan, "max_ms": math.nan, "over_budget": 0.0}
    return {
        "p50_ms": float(np.percentile(latency_ms, 50)),
        "p99_ms": float(np.percentile(latency_ms, 99)),
        "max_ms": float(latency_ms.max()),
        "over_budget": float((latency_ms > budget.total * 1_000 + 1e-6).mean()),
    }


def simulate_cards(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    *,
    latencies: Latencies | None = None,
    budget: Budget | None = None,
    min_health_factor: float = 1.3,
    rules: ProductRules = DEFAULT_RULES,
    seed: int = 0,
    backend: CardBackend | None = None,
    receiver: Callable[[str], str] = card_receiver,
) -> CardRun:
    """Answer ``swipes`` (:func:`card_swipes`' columns) just in time: each through ``/info``,
    ``draw`` and the chain (module docstring). ``backend`` defaults to a
    :class:`SimulatedBackend` over ``accounts`` with ``latencies``; pass another (the loopback
    one, :class:`toolkit.client.cards.ServiceCardBackend`) to run the same authorizer against
    it, with ``receiver`` naming each account's card receiver there (an address).

    >>> accounts = {"a": Position({"usdc": 1_000 * 10**6}, principal=600 * 10**6)}
    >>> swipes = pl.DataFrame({"auth_id": ["x", "y"], "account": ["a", "a"], "t": [0.0, 60.0],
    ...                        "amount": [10 * 10**6, 200 * 10**6]})
    >>> simulate_cards(swipes, accounts, seed=4).decisions["reason"].to_list()
    ['approved', 'health']
    """
    _check_swipes(swipes)
    lat = latencies or Latencies()
    budget = budget or Budget()
    chosen = (
        backend if backend is not None else SimulatedBackend(accounts, lat, seed=seed, rules=rules)
    )
    authorizer = Authorizer(
        chosen,
        min_health_factor=min_health_factor,
        budget=budget,
        pre=lat.pre,
        receiver=receiver,
        rules=rules,
        seed=whole(seed, "seed", minimum=0) + 1,
    )
    decisions = [
        authorizer.authorize(auth_id, account, amount, t)
        for auth_id, account, t, amount in swipes.select(
            "auth_id", "account", "t", "amount"
        ).iter_rows()
    ]
    return card_run(decisions, chosen, budget)


def card_run(decisions: Sequence[Decision], backend: CardBackend, budget: Budget) -> CardRun:
    """The :class:`CardRun` of ``decisions`` (in arrival order) answered through ``backend``
    under ``budget``: how :func:`simulate_cards` reports, and a run that drives
    :class:`Authorizer` s itself (one per account, concurrently) reports the same way.

    >>> backend = SimulatedBackend({"a": Position({"usdc": 10**9})}, seed=0)
    >>> auth = Authorizer(backend, seed=0)
    >>> run = card_run([auth.authorize("x", "a", 10**6, at=0.0)], backend, Budget())
    >>> run.summary["approved"], run.summary["draws"]
    (1, 1)
    """
    frame = _frame(decisions)
    approved = int(frame["approved"].sum())
    summary: dict[str, Any] = {
        "swipes": frame.height,
        "approved": approved,
        "approval_rate": approved / frame.height if frame.height else math.nan,
        **_latency_summary(frame["latency_ms"].to_numpy(), budget),
        "path_p99_ms": float(np.percentile(frame["path_ms"].to_numpy(), 99))
        if frame.height
        else math.nan,
        "budget_ms": budget.total * 1_000,
        "drawn": int(frame["drawn"].sum()),
        "fees": int(frame["fee"].sum()),
        "draws": int((frame["drawn"] > 0).sum()),
        "late_draws": int(frame["late"].sum()),
    }
    return CardRun(frame, backend, summary)


def compare_prefunded(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    *,
    threshold: int = 100 * _USD,
    target_balance: int = 250 * _USD,
    latencies: Latencies | None = None,
    budget: Budget | None = None,
    min_health_factor: float = 1.3,
    idle_rate: float = 0.05,
    gas_per_transaction: int = 10_000,
    rules: ProductRules = DEFAULT_RULES,
    seed: int = 0,
) -> pl.DataFrame:
    """The same swipes answered just in time (:func:`simulate_cards`) and from a receiver
    pre-funded by auto top-up (:func:`toolkit.models.topup.simulate_topups` per account with
    (``threshold``, ``target_balance``, ``min_health_factor``)): the pre-funded path only checks
    the program's signature and reads the receiver's balance (``latencies.pre`` and
    ``.balance``, failing closed like the other), approving when the balance covers the amount.
    The top-ups draw within the health rule; a retry answers from the idempotency store.

    One row per approach: ``swipes``, ``approved``, ``approval_rate``, latency ``p50_ms`` and
    ``p99_ms``, ``over_budget``, ``draws`` (transactions), ``drawn``, ``fees`` (origination),
    ``gas`` (``gas_per_transaction`` each, 0.01 USDC by default), ``idle_cost`` (the pre-funded
    balance's carrying cost at ``idle_rate`` a year) and ``cost``, amounts in smallest units.

    >>> accounts = card_accounts(10, seed=2)
    >>> table = compare_prefunded(card_swipes(accounts, hours=4, seed=2), accounts, seed=2)
    >>> table["approach"].to_list()
    ['just-in-time', 'pre-funded']
    """
    _check_swipes(swipes)
    whole(threshold, "threshold", minimum=0)
    whole(target_balance, "target_balance", minimum=threshold)
    number(idle_rate, "idle_rate", minimum=0)
    whole(gas_per_transaction, "gas_per_transaction", minimum=0)
    lat = latencies or Latencies()
    budget = budget or Budget()
    jit = simulate_cards(
        swipes,
        accounts,
        latencies=lat,
        budget=budget,
        min_health_factor=min_health_factor,
        rules=rules,
        seed=seed,
    )
    s = jit.summary
    rows = [
        {
            "approach": "just-in-time",
            "swipes": s["swipes"],
            "approved": s["approved"],
            "approval_rate": s["approval_rate"],
            "p50_ms": s["p50_ms"],
            "p99_ms": s["p99_ms"],
            "over_budget": s["over_budget"],
            "draws": s["draws"],
            "drawn": s["drawn"],
            "fees": s["fees"],
            "gas": s["draws"] * gas_per_transaction,
            "idle_cost": 0.0,
        },
        _prefunded(
            swipes,
            accounts,
            lat,
            budget,
            threshold,
            target_balance,
            min_health_factor,
            idle_rate,
            gas_per_transaction,
            rules,
            seed,
        ),
    ]
    table = pl.DataFrame(rows)
    return table.with_columns((pl.col("fees") + pl.col("gas") + pl.col("idle_cost")).alias("cost"))


def _prefunded(
    swipes: pl.DataFrame,
    accounts: Mapping[str, Position],
    lat: Latencies,
    budget: Budget,
    threshold: int,
    target_balance: int,
    min_health_factor: float,
    idle_rate: float,
    gas: int,
    rules: ProductRules,
    seed: int,
) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 2)
    n = swipes.height
    pre = lat.pre.sample(rng, n)
    read = lat.balance.sample(rng, n)
    error = rng.random(n) < lat.balance_error
    timeout = read > budget.balance
    latency = np.minimum(pre + np.minimum(read, budget.balance), budget.total)  # fail closed
    reason = np.where(error & ~timeout, "balance_error", np.where(timeout, "balance_timeout", ""))
    frame = swipes.select("auth_id", "account", "t", "amount").with_columns(
        pl.Series("reason", reason), pl.int_range(pl.len()).alias("row")
    )
    first = frame.unique("auth_id", keep="first", maintain_order=True)
    offered = first.filter(pl.col("reason") == "")
    reasons = dict(zip(first["row"].to_list(), first["reason"].to_list(), strict=True))
    draws = drawn = fees = 0
    idle_cost = 0.0
    for (account,), spends in offered.group_by(["account"], maintain_order=True):
        position = accounts.get(str(account), Position({}))  # unknown: nothing to draw on
        value = sum(position.values.values())
        maintenance = _weighted(position, rules, "maintenance_ltv_bps")
        if value == 0 or maintenance == 0:  # nothing to draw on: no top-up, every spend fails
            for row in spends["row"].to_list():
                reasons[row] = "receiver_balance"
            continue
        run = simulate_topups(
            spends.select("t", "amount"),
            collateral_value=value,
            maintenance_ltv=maintenance / value,
            ltv=min(_weighted(position, rules, "ltv_bps"), maintenance) / value,
            threshold=threshold,
            target_balance=target_balance,
            min_health_factor=min_health_factor,
            principal=position.principal + position.interest,
            idle_rate=idle_rate,
            gas_per_top_up=gas,
            rules=rules,
        )
        declined = run.events["declined"].to_list()[1:]  # row 0: the top-up at enabling
        for row, no in zip(spends["row"].to_list(), declined, strict=True):
            reasons[row] = "receiver_balance" if no else "approved"
        draws += run.summary["top_ups"]
        drawn += run.summary["drawn"]
        fees += run.summary["fees"]
        idle_cost += run.summary["idle_cost"]
    by_id = {
        auth_id: reasons[row] for auth_id, row in zip(first["auth_id"], first["row"], strict=True)
    }
    answers = [by_id[a] for a in frame["auth_id"].to_list()]
    approved = sum(r == "approved" for r in answers)
    lat_summary = _latency_summary(latency * 1_000, budget)
    return {
        "approach": "pre-funded",
        "swipes": n,
        "approved": approved,
        "approval_rate": approved / n if n else math.nan,
        "p50_ms": lat_summary["p50_ms"],
        "p99_ms": lat_summary["p99_ms"],
        "over_budget": lat_summary["over_budget"],
        "draws": draws,
        "drawn": drawn,
        "fees": fees,
        "gas": draws * gas,
        "idle_cost": idle_cost,
    }


def _weighted(position: Position, rules: ProductRules, attribute: str) -> float:
    return sum(v * getattr(rules.rule(a), attribute) / BPS for a, v in position.values.items())
