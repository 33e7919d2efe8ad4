"""Small immutable values the engine returns (and the order terms it accepts)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "EXACT_INPUT",
    "EXACT_OUTPUT",
    "Fill",
    "Holding",
    "Loan",
    "OrderTerms",
    "PoolState",
    "Reservation",
    "ReservedQuote",
    "Settlement",
    "Transfer",
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
    default windows). ``repayment_chain`` is where the input is paid: the origin chain for an
    RFQ quote (the escrow releases it there), the hub rule of
    :meth:`toolkit.scenario.Scenario.repayment_chain` for a borrow quote.
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
    repayment_chain: int

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
    """A settlement of ``key`` (an order id or a borrow quote id).

    ``pool`` lent ``amount``; ``earned`` is the input less the output and the fill cost.
    ``repayment_chain`` is where the input was paid (the order's origin, the loan's
    repayment chain). ``credited`` is what the engine booked and where: the whole input to
    ``credited_pool`` on the repayment chain, or to its unallocated balance when that is None
    (``credited_chain``); under the ``instant-free`` policy, ``amount + earned`` back to the
    lending pool itself.
    """

    key: str
    pool: str
    amount: int
    earned: int
    repayment_chain: int
    credited_chain: int
    credited_pool: str | None
    credited: int


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


class Holding(NamedTuple):
    """The service's inventory of ``symbol`` on ``chain`` at one instant (smallest units).

    ``on_chain``: tokens it holds there (its pools' ``balance - outstanding`` plus
    ``unallocated``, what settlements and transfers left outside any pool); ``reserved`` and
    ``outstanding``: its pools' reservations and receivables (lent from this chain, owed
    elsewhere); ``receivable_in``: what settlements to come will pay here; ``in_flight_in`` and
    ``in_flight_out``: what bridges are carrying to and from it (what will arrive, fees off).
    """

    chain: int
    symbol: str
    on_chain: int
    unallocated: int
    reserved: int
    outstanding: int
    receivable_in: int
    in_flight_in: int
    in_flight_out: int


class Transfer(NamedTuple):
    """A rebalancing transfer of ``token`` from ``src_chain`` to ``dst_chain``.

    ``amount`` left the source at ``sent_at`` (its inventory was debited); ``fee`` (the
    bridge's ``fee_bps``) stays with the bridge and ``amount - fee`` reaches the destination at
    ``arrives_at`` (``arrived`` once the engine's clock passed it). ``gas_usd`` is the source
    transaction's gas, paid in the native coin, so it is a cost line, not inventory.
    ``bridge`` names the bridge model (``[[bridges]] name``).
    """

    id: int
    token: str
    src_chain: int
    dst_chain: int
    amount: int
    fee: int
    gas_usd: float
    sent_at: float
    arrives_at: float
    arrived: bool
    bridge: str

    @property
    def received(self) -> int:
        """What reaches the destination: ``amount - fee``."""
        return self.amount - self.fee
