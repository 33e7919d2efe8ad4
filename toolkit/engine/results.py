"""Small immutable values the engine returns (and the order terms it accepts)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "EXACT_INPUT",
    "EXACT_OUTPUT",
    "Fill",
    "Loan",
    "OrderTerms",
    "PoolState",
    "Reservation",
    "ReservedQuote",
    "Settlement",
]

#: ``amount`` is the input; the output is what is left after fees.
EXACT_INPUT = "ExactInput"
#: ``amount`` is the output; the input is the smallest amount that delivers it.
EXACT_OUTPUT = "ExactOutput"


class ReservedQuote(NamedTuple):
    """A priced, reserved quote (an RFQ quote or a borrow quote).

    ``fee_bps`` is the tier fee plus the utilization premium; ``fee`` is that many bps of the
    input (rounded up); ``fill_cost`` is the destination fill cost. ``input_amount -
    output_amount`` (the borrow cost) covers both, plus at most a rounding unit for ExactOutput.
    The reservation of ``output_amount`` lives until ``expires_at`` (``valid_until`` for the
    default windows).
    """

    quote_id: str
    kind: str
    src_chain: int
    dst_chain: int
    symbol: str
    src_token: str
    dst_token: str
    input_amount: int
    output_amount: int
    fee_bps: int
    fee: int
    fill_cost: int
    pool: str
    pool_address: str
    valid_until: int
    expires_at: float
    eta: int
    quote_duration: int

    @property
    def borrow_cost(self) -> int:
        """Input minus output: what the service keeps (fee, fill cost, rounding)."""
        return self.input_amount - self.output_amount


class OrderTerms(NamedTuple):
    """What an escrowed order pays and asks, as the world read it from the order.

    Tokens are addresses (any case) on their chains.
    """

    src_chain: int
    input_token: str
    input_amount: int
    dst_chain: int
    output_token: str
    output_amount: int


class Fill(NamedTuple):
    """A fill: ``amount`` moved to outstanding on ``pool``; ``earned`` is repaid on settlement."""

    order_id: str
    pool: str
    amount: int
    earned: int
    reserved: bool


class Loan(NamedTuple):
    """A borrow authorization: ``amount`` of ``token`` lent from ``pool`` against a quote."""

    quote_id: str
    pool: str
    pool_address: str
    dst_chain: int
    symbol: str
    token: str
    amount: int
    cost: int
    input_amount: int


class Settlement(NamedTuple):
    """A repayment: ``amount`` back to ``pool`` plus ``earned`` added to its balance."""

    key: str
    pool: str
    amount: int
    earned: int


class PoolState(NamedTuple):
    """A pool's figures at one instant; ``available = balance - reserved - outstanding``."""

    id: str
    chain: int
    symbol: str
    type: str
    address: str
    balance: int
    reserved: int
    outstanding: int
    available: int


class Reservation(NamedTuple):
    """A live reservation. ``kind`` is ``quote``, ``order``, ``borrow`` or ``hold``.

    ``quote`` is the quote that created it (None for a raw hold made with ``reserve``).
    """

    key: str
    kind: str
    pool: str
    amount: int
    expires_at: float
    quote: ReservedQuote | None
