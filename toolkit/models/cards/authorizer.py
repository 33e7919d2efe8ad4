"""The authorizer: each swipe answered under the program's rules (fail closed, the health rule,
idempotent by authorization id, one swipe per account at a time) through a
:class:`~toolkit.models.cards.backend.CardBackend`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from toolkit.arguments import number, whole
from toolkit.credit import BPS, DEFAULT_RULES, ProductRules, figures
from toolkit.models.cards.backend import BackendError, CardBackend
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
