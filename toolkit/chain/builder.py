"""Build the unsigned escrow ``open()`` transaction for a partner-intents quote.

Derived values follow the interface's defaults table: fillDeadline = now + exclusive + open,
expires = fillDeadline + a settlement buffer (same-chain or cross-chain), oracles and settlers
from the registry, the exclusivity context on every output, and the caller's ``quote.order``
overrides winning over anything derived. Time and the nonce are arguments: nothing here reads
a clock or draws randomness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import Registry
from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import (
    MandateOutput,
    StandardOrder,
    encode_open,
    exclusivity_context,
    order_id,
    to_bytes32,
    token_id,
)
from toolkit.resources import InvalidInput, Output, Quote, TransactionRequest

__all__ = ["OpenTransaction", "OrderWindows", "build_open", "is_same_chain"]

_UINT32_MAX = 2**32 - 1
_WINDOW_FIELDS = (
    "exclusive_s",
    "open_s",
    "same_chain_expiry_buffer_s",
    "cross_chain_expiry_buffer_s",
)


class OrderWindows(Protocol):
    """How far out the derived deadlines lie, in seconds (what :func:`build_open` reads).

    ``fillDeadline = now + exclusive_s + open_s``; ``expires = fillDeadline +
    same_chain_expiry_buffer_s`` (``cross_chain_...`` for a cross-chain order). A
    :class:`toolkit.scenario.Windows` is one, and the one place the interface's defaults live:
    there are none here on purpose.
    """

    @property
    def exclusive_s(self) -> int: ...
    @property
    def open_s(self) -> int: ...
    @property
    def same_chain_expiry_buffer_s(self) -> int: ...
    @property
    def cross_chain_expiry_buffer_s(self) -> int: ...


@dataclass(frozen=True)
class OpenTransaction:
    """What :func:`build_open` returns: the transaction, the order it opens, and its orderId."""

    transaction: TransactionRequest
    order: StandardOrder
    order_id: str


def is_same_chain(quote: Quote) -> bool:
    """Whether every output is delivered on the origin chain (a same-chain order).

    Example:
        >>> from toolkit.codecs import erc7930
        >>> from toolkit.resources import Input, Output, Preview, Quote
        >>> a = erc7930.encode(8453, "0x" + "22" * 20)
        >>> q = Quote(preview=Preview(inputs=[Input(user=a, asset=a, amount="9")],
        ...                           outputs=[Output(receiver=a, asset=a, amount="8")]))
        >>> is_same_chain(q)
        True
    """
    origin = _origin_chain(quote)
    return all(_output_chain(out, i) == origin for i, out in enumerate(quote.preview.outputs))


def build_open(
    quote: Quote,
    *,
    now: int,
    nonce: int,
    registry: Registry,
    filler: str,
    windows: OrderWindows,
) -> OpenTransaction:
    """Build the unsigned ``open()`` transaction for ``quote`` at time ``now``.

    ``nonce`` is used unless ``quote.order.nonce`` is set; ``filler`` gets exclusivity unless
    ``quote.metadata.exclusiveFor`` names someone else.

    Example:
        >>> from toolkit.codecs import erc7930
        >>> from toolkit.chain.registry import default_registry
        >>> from toolkit.resources import Input, Output, Preview, Quote
        >>> from toolkit.scenario import Windows
        >>> payer = "0x" + "11" * 20
        >>> usdc_base = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
        >>> usdc_arb = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
        >>> q = Quote(preview=Preview(
        ...     inputs=[Input(user=erc7930.encode(8453, payer),
        ...                   asset=erc7930.encode(8453, usdc_base), amount="1000000")],
        ...     outputs=[Output(receiver=erc7930.encode(42161, payer),
        ...                     asset=erc7930.encode(42161, usdc_arb), amount="999000")]))
        >>> built = build_open(q, now=1_760_000_000, nonce=1, registry=default_registry(),
        ...                    filler="0x" + "fe" * 20, windows=Windows())
        >>> (built.transaction.chain_id, built.order.fill_deadline - 1_760_000_000)
        (8453, 360)
    """
    _check_arguments(quote, registry, now, nonce, windows)
    filler = _address(filler, "filler")
    origin = _origin_chain(quote)
    _known_chain(registry, origin, "preview.inputs[0].asset")
    output_chains = [_output_chain(out, i) for i, out in enumerate(quote.preview.outputs)]
    for i, chain_id in enumerate(output_chains):
        _known_chain(registry, chain_id, f"preview.outputs[{i}].asset")
    same_chain = all(chain_id == origin for chain_id in output_chains)
    fill_deadline, expires = _deadlines(quote, now, windows, same_chain)
    overrides = quote.order
    order_nonce = nonce
    if overrides is not None and overrides.nonce_int is not None:
        order_nonce = overrides.nonce_int
    # Same-chain orders are proven by the output settler itself, which acts as its own oracle.
    input_oracle = registry.output_settler(origin) if same_chain else registry.oracle(origin)
    if overrides is not None and overrides.input_oracle is not None:
        input_oracle = overrides.input_oracle

    exclusive_for = filler
    if quote.metadata is not None and quote.metadata.exclusive_for is not None:
        exclusive_for = quote.metadata.exclusive_for
    context = _context(exclusive_for, now + windows.exclusive_s)
    outputs = _mandate_outputs(quote, output_chains, registry, origin, same_chain, context)
    inputs = tuple((token_id(item.asset_address), item.amount_int) for item in quote.preview.inputs)
    native = sum(
        item.amount_int for item in quote.preview.inputs if item.asset_address == abi.ZERO_ADDRESS
    )
    try:
        order = StandardOrder(
            user=quote.preview.inputs[0].user_address,
            nonce=order_nonce,
            origin_chain_id=origin,
            expires=expires,
            fill_deadline=fill_deadline,
            input_oracle=input_oracle,
            inputs=inputs,
            outputs=outputs,
        )
    except InvalidValue as exc:
        raise InvalidInput(f"order.{exc.field}", exc.rule) from None
    escrow = registry.escrow(origin)
    transaction = TransactionRequest(
        from_=order.user,
        to=escrow,
        chain_id=origin,
        data=encode_open(order),
        value=hex(native),
    )
    return OpenTransaction(transaction=transaction, order=order, order_id=order_id(order, escrow))


def _check_arguments(
    quote: Quote, registry: Registry, now: int, nonce: int, windows: OrderWindows
) -> None:
    if not isinstance(quote, Quote):
        raise InvalidInput("quote", "must be a Quote")
    if not isinstance(registry, Registry):
        raise InvalidInput("registry", "must be a Registry")
    _non_negative(now, "now")
    _abi_uint(nonce, "nonce")
    for name in _WINDOW_FIELDS:
        _non_negative(getattr(windows, name, None), f"windows.{name}")


def _deadlines(quote: Quote, now: int, windows: OrderWindows, same_chain: bool) -> tuple[int, int]:
    """The order's (fillDeadline, expires): the windows' defaults unless the quote's order sets
    them, both uint32 and in order."""
    overrides = quote.order
    fill_deadline = now + windows.exclusive_s + windows.open_s
    if overrides is not None and overrides.fill_deadline is not None:
        fill_deadline = overrides.fill_deadline
    buffer = (
        windows.same_chain_expiry_buffer_s if same_chain else windows.cross_chain_expiry_buffer_s
    )
    expires = fill_deadline + buffer
    if overrides is not None and overrides.expires is not None:
        expires = overrides.expires
    for name, value in (("order.fillDeadline", fill_deadline), ("order.expires", expires)):
        if value > _UINT32_MAX:
            raise InvalidInput(name, f"is {value}, past the uint32 timestamps the escrow takes")
    if fill_deadline > expires:
        raise InvalidInput("order.fillDeadline", f"must not be after expires ({expires})")
    return fill_deadline, expires


def _mandate_outputs(
    quote: Quote,
    output_chains: list[int],
    registry: Registry,
    origin: int,
    same_chain: bool,
    context: bytes,
) -> tuple[MandateOutput, ...]:
    outputs = []
    for out, chain_id in zip(quote.preview.outputs, output_chains, strict=True):
        settler = registry.output_settler(chain_id)
        oracle = settler if same_chain else registry.oracle(origin)
        outputs.append(
            MandateOutput(
                oracle=to_bytes32(oracle),
                settler=to_bytes32(settler),
                chain_id=chain_id,
                token=to_bytes32(out.asset_address),
                amount=out.amount_int,
                recipient=to_bytes32(out.receiver_address),
                context=context,
            )
        )
    return tuple(outputs)


def _origin_chain(quote: Quote) -> int:
    chains = {item.chain_id for item in quote.preview.inputs}
    chains |= {_interop_chain(item.user) for item in quote.preview.inputs}
    if len(chains) != 1:
        raise InvalidInput("preview.inputs", "all inputs must be on one origin chain")
    return chains.pop()


def _interop_chain(text: str) -> int:
    from toolkit.codecs import erc7930

    return erc7930.decode(text).chain_id


def _output_chain(out: Output, index: int) -> int:
    try:
        chain_id = out.chain_id
        out.asset_address  # noqa: B018 - both must be eip155 addresses
        out.receiver_address  # noqa: B018
    except ValueError as exc:  # Erc7930Error: not an eip155 address
        raise InvalidInput(
            f"preview.outputs[{index}]", f"must be on an eip155 chain ({exc})"
        ) from None
    if _interop_chain(out.receiver) != chain_id:
        raise InvalidInput(
            f"preview.outputs[{index}].receiver", "must be on the same chain as the asset"
        )
    return chain_id


def _known_chain(registry: Registry, chain_id: int, field: str) -> None:
    try:
        registry.chain(chain_id)
    except NotInRegistry as exc:
        raise InvalidInput(field, str(exc)) from None


def _context(filler: str, start_time: int) -> bytes:
    try:
        return exclusivity_context(filler, start_time)
    except InvalidValue as exc:
        raise InvalidInput(exc.field, exc.rule) from None


def _non_negative(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(name, "must be a non-negative integer")
    return value


def _abi_uint(value: object, name: str) -> int:
    try:
        return abi.uint(value, 256, name)
    except InvalidValue as exc:
        raise InvalidInput(exc.field, exc.rule) from None


def _address(value: object, name: str) -> str:
    try:
        return abi.address(value, name)
    except InvalidValue as exc:
        raise InvalidInput(exc.field, exc.rule) from None
