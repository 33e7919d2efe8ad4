"""The authorizer: each swipe answered under the program's rules (fail closed, the health rule,
idempotent by authorization id, one swipe per account at a time) through a
:class:`~toolkit.models.cards.backend.CardBackend`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from toolkit.arguments import number, whole
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules, figures
from toolkit.models.cards.backend import BackendError, CardBackend, Position
from toolkit.models.cards.settings import Budget, Distribution, Latencies, Samples

__all__ = ["REASONS", "Authorizer", "Decision", "card_receiver", "draw_for"]

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

    >>> from toolkit.models.cards import Position, SimulatedBackend
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
        self._pre = Samples(
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
        """The answer to a new swipe whose program work ends at ``t``: each step in turn
        (``/info``, the rules, ``draw``, inclusion) either hands on or declines it."""
        swipe = _Swipe(auth_id, account, amount, at, at + self.budget.total)
        t = max(t, self._busy_until.get(account, t))  # one swipe per account at a time
        if t >= swipe.deadline:
            return Decision(auth_id, account, amount, at, swipe.deadline, False, "queue_timeout")
        # each step hands on its result or answers with the decline
        info = self._info(swipe, t)
        if isinstance(info, Decision):
            return info
        position, t = info
        checked = self._check(swipe, position, t)
        if isinstance(checked, Decision):
            return checked
        draw, health = checked
        drawn = self._draw(swipe, draw, t)
        if isinstance(drawn, Decision):
            return drawn
        calls, t = drawn
        seen = self._include(swipe, calls, t)
        if isinstance(seen, Decision):
            return seen
        fee = self.rules.draw_fee(draw)
        self._busy_until[account] = seen
        if seen > swipe.deadline:  # fail closed; the draw is out and lands anyway
            return self._no(
                swipe,
                "chain_timeout",
                swipe.deadline,
                drawn=draw,
                fee=fee,
                late=True,
                seen=seen,
                health_factor=health,
            )
        return Decision(
            auth_id, account, amount, at, seen, True, "approved", draw, fee, seen=seen,
            health_factor=health,
        )  # fmt: skip

    def _no(self, swipe: _Swipe, reason: str, when: float, **extra: Any) -> Decision:
        """Decline ``swipe`` for ``reason`` at ``when`` (the deadline at the latest); the
        account stays busy until ``when``."""
        busy = self._busy_until.get(swipe.account, 0.0)
        self._busy_until[swipe.account] = max(busy, when)
        answered = min(when, swipe.deadline)
        return Decision(
            swipe.auth_id, swipe.account, swipe.amount, swipe.at, answered, False, reason, **extra
        )

    def _info(self, swipe: _Swipe, t: float) -> tuple[Position, float] | Decision:
        """The account's position from ``/info`` and when it came, within the info budget."""
        limit = min(t + self.budget.info, swipe.deadline)
        try:
            position, seconds = self.backend.info(swipe.account, t)
        except BackendError as error:
            reason = "info_error" if t + error.elapsed_s <= limit else "info_timeout"
            return self._no(swipe, reason, min(t + error.elapsed_s, limit))
        except Exception:  # fail closed on anything
            return self._no(swipe, "info_error", t)
        if t + seconds > limit:
            return self._no(swipe, "info_timeout", limit)
        return position, t + seconds

    def _check(
        self, swipe: _Swipe, position: Position, t: float
    ) -> tuple[int, Fraction | None] | Decision:
        """The draw the swipe needs and the health factor after it, if the rules allow it."""
        draw = draw_for(swipe.amount, self.rules)
        try:  # an answer the rules cannot read (an unknown asset, a malformed position) declines
            before = position.figures(self.rules)
            after = figures(
                position.values,
                principal=position.principal + draw,
                interest=position.interest,
                rules=self.rules,
            )
        except Exception:
            return self._no(swipe, "info_error", t)
        if draw > before.remaining_credit_capacity:
            return self._no(swipe, "capacity", t, health_factor=after.health_factor)
        if after.health_factor is not None and after.health_factor < self.rule:
            return self._no(swipe, "health", t, health_factor=after.health_factor)
        return draw, after.health_factor

    def _draw(
        self, swipe: _Swipe, draw: int, t: float
    ) -> tuple[Sequence[object], float] | Decision:
        """The calls that draw ``draw`` to the account's receiver and when they came, within
        the draw budget."""
        limit = min(t + self.budget.draw, swipe.deadline)
        try:
            calls, seconds = self.backend.draw(swipe.account, draw, self.receiver(swipe.account), t)
        except BackendError as error:
            reason = "draw_error" if t + error.elapsed_s <= limit else "draw_timeout"
            return self._no(swipe, reason, min(t + error.elapsed_s, limit))
        except Exception:
            return self._no(swipe, "draw_error", t)
        if t + seconds > limit:
            return self._no(swipe, "draw_timeout", limit)
        return calls, t + seconds

    def _include(self, swipe: _Swipe, calls: Sequence[object], t: float) -> float | Decision:
        """When the block including ``calls`` was seen (past the deadline, possibly)."""
        try:
            _, seconds = self.backend.include(calls, t)
        except BackendError as error:
            return self._no(swipe, "broadcast_error", t + error.elapsed_s)
        except Exception:
            return self._no(swipe, "broadcast_error", t)
        return t + seconds


@dataclass(frozen=True)
class _Swipe:
    """The swipe being decided and its deadline (its arrival plus the total budget)."""

    auth_id: str
    account: str
    amount: int
    at: float
    deadline: float
