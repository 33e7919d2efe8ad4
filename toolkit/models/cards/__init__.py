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
>>> swipes = card_swipes(accounts, rate_per_h=2, span_h=2, seed=1)
>>> run = simulate_cards(swipes, accounts, seed=1)
>>> run.summary.swipes == swipes.height, 0 < run.summary.approval_share <= 1
(True, True)
"""

from toolkit.models.cards.authorizer import REASONS, Authorizer, Decision, card_receiver, draw_for
from toolkit.models.cards.backend import (
    BackendError,
    CardBackend,
    DrawCall,
    Position,
    SimulatedBackend,
    Timed,
    book_positions,
)
from toolkit.models.cards.prefunded import compare_prefunded
from toolkit.models.cards.settings import Budget, Empirical, Latencies, Lognormal
from toolkit.models.cards.settings import Distribution as Distribution
from toolkit.models.cards.simulation import (
    CardRun,
    CardSummary,
    card_accounts,
    card_run,
    card_swipes,
    simulate_cards,
)

__all__ = [
    "REASONS",
    "Authorizer",
    "BackendError",
    "Budget",
    "CardBackend",
    "CardRun",
    "CardSummary",
    "Decision",
    "DrawCall",
    "Empirical",
    "Latencies",
    "Lognormal",
    "Position",
    "SimulatedBackend",
    "Timed",
    "book_positions",
    "card_accounts",
    "card_receiver",
    "card_run",
    "card_swipes",
    "compare_prefunded",
    "draw_for",
    "simulate_cards",
]
