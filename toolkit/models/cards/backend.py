"""The backend seam: what the authorizer needs of the credit service and the chain
(:class:`CardBackend`), the account :class:`Position` it reads, and the simulated backend."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Generic, NamedTuple, Protocol, TypeVar

import numpy as np

from toolkit.arguments import whole
from toolkit.credit import DEFAULT_RULES, AccountFigures, ProductRules, figures
from toolkit.errors import HttpError
from toolkit.models.cards.settings import Latencies, Samples
from toolkit.models.health import CreditBook

__all__ = [
    "BackendError",
    "CardBackend",
    "DrawCall",
    "Position",
    "SimulatedBackend",
    "Timed",
    "book_positions",
]


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


def book_positions(book: CreditBook, *, unit: int = 10**6) -> dict[str, Position]:
    """Each account of ``book`` as a :class:`Position`: the card simulation's store input.

    ``book`` is the one credit book the risk models take, generated or the store's
    (:func:`toolkit.report.load.stored_credit_book`: each account's latest ``credit_accounts``
    and ``credit_collateral`` rows under the latest ``credit_protocol``); pass its ``rules``
    to :func:`~toolkit.models.cards.simulate_cards` too. Values are the collateral at the
    book's prices, in the credit asset's smallest units (``unit`` per whole one: 10**6 for
    USDC); the book keeps each debt whole, so it is all ``principal`` (the figures depend only
    on principal plus interest).

    Parameters
    ----------
    book : CreditBook
        Accounts, their collateral by asset, debt and prices (in whole credit units).
    unit : int
        The credit asset's smallest units per whole unit.

    Returns
    -------
    dict of str to Position
        One position per account of the book, in its order; assets held at 0 left out.

    Examples
    --------
    >>> from toolkit.backtest import generate_book
    >>> book = generate_book(2, seed=2)
    >>> positions = book_positions(book)
    >>> list(positions) == list(book.accounts), positions["a0000"].principal
    (True, 0)
    """
    whole(unit, "unit", minimum=1)
    values = book.values()
    return {
        account: Position(
            {a: round(float(v) * unit) for a, v in zip(book.assets, row, strict=True) if v > 0},
            principal=round(float(debt) * unit),
        )
        for account, row, debt in zip(book.accounts, values, book.debt, strict=True)
    }


T = TypeVar("T")


class Timed(NamedTuple, Generic[T]):
    """A step's result and the seconds it took (``elapsed_s``)."""

    value: T
    elapsed_s: float


class BackendError(HttpError):
    """A step that answered an error after ``elapsed_s`` seconds."""

    def __init__(self, step: str, elapsed_s: float, message: str = "error") -> None:
        super().__init__(f"{step}: {message} after {elapsed_s * 1_000:.1f} ms")
        self.step = step
        self.elapsed_s = elapsed_s


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


class SimulatedBackend:
    """The credit service and the chain, simulated: a ledger of positions, latencies drawn
    from ``latencies``, blocks every ``latencies.block_time_s`` seconds from a random phase. A
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
        self.phase = float(rng.uniform(0, self.latencies.block_time_s))
        self._rng = rng
        lat = self.latencies
        self._info, self._draw = Samples(lat.info, rng), Samples(lat.draw, rng)
        self._broadcast, self._receipt = Samples(lat.broadcast, rng), Samples(lat.receipt, rng)
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
        step = self.latencies.block_time_s
        return self.phase + (math.floor((t - self.phase) / step) + 1) * step

    def include(self, calls: Sequence[object], at: float) -> Timed[float]:
        """Apply the draws; the time of their block (``receipt`` latency later, it is seen)."""
        sent = self._broadcast.next()
        if self._chance() < self.latencies.broadcast_error:
            raise BackendError("broadcast", sent)
        block = self.next_block(at + sent)
        while self._chance() < self.latencies.missed_block:
            block += self.latencies.block_time_s
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
