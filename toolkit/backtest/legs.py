"""The legs of :meth:`~toolkit.backtest.routes.RouteLab.strategy_legs`: USDC on one chain into
WETH on another as an intents order and a swap, in either order, one row per leg in USD as
:func:`~toolkit.models.routes.firm_vs_indicative` takes them (:data:`LEG_SCHEMA`).
"""

from __future__ import annotations

from toolkit.backtest.stale import USER
from toolkit.client import BadRequest, NoCapacity, ServiceClient

__all__ = ["intents_leg", "intents_quote", "swap_leg"]


def intents_quote(
    intents: ServiceClient, src: int, dst: int, amount: int, token: str
) -> tuple[int, int] | None:
    """The intents quote's output and eta (seconds) for ``amount`` of ``token`` (its address on
    ``dst``), or None when refused: no capacity (404), or an amount outside the route's limits
    (a 400 naming ``amount``)."""
    try:
        quote = intents.rfq(src_chain=src, dst_chain=dst, amount=amount, token=token, user=USER)
    except NoCapacity:
        return None
    except BadRequest as exc:
        if exc.field != "amount":
            raise
        return None
    return int(quote.preview.outputs[0].amount), int(quote.eta or 0)


def swap_leg(
    base: dict[str, object],
    step: int,
    network: str,
    delay: float,
    value_in: float,
    amount_out: int,
    weth_usd: float,
    gas_usd: float,
) -> dict[str, object]:
    """A swap leg: ``amount_out`` wei of WETH valued at ``weth_usd`` a wei (``_amount_out``
    keeps the wei for the next leg; the caller drops it)."""
    return {
        **base,
        "step": step,
        "leg": "swap",
        "network": network,
        "delay_s": float(delay),
        "value_in_usd": value_in,
        "value_out_usd": amount_out * weth_usd,
        "gas_usd": gas_usd,
        "_amount_out": amount_out,
    }


def intents_leg(
    base: dict[str, object], step: int, network: str, value_in: float, value_out: float | None
) -> dict[str, object]:
    """An intents leg (``gas_usd`` 0, as every intents leg here; ``value_out`` None when the
    quote was refused)."""
    return {
        **base,
        "step": step,
        "leg": "intents",
        "network": network,
        "delay_s": 0.0,
        "value_in_usd": value_in,
        "value_out_usd": value_out,
        "gas_usd": 0.0,
    }
