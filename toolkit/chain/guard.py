"""The calldata guard: check what you are about to sign against what you asked for.

:func:`check_transaction` decodes an escrow ``open()`` transaction and compares every field
with the quote it claims to implement; :func:`check_calls` checks a list of credit/vault/ERC-20
calls against an :class:`Expectation`; :func:`check_swap_route` a swap route's Universal Router
calldata against the route's quote. All return a list of :class:`Finding`; an empty list
means nothing is wrong and the transaction is safe to sign.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.chain.call_guard import Expectation, check_calls
from toolkit.chain.errors import NotInRegistry
from toolkit.chain.finding import Finding
from toolkit.chain.registry import Registry, default_registry
from toolkit.chain.swap_guard import check_swap_route
from toolkit.codecs import abi
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import (
    MandateOutput,
    StandardOrder,
    decode_open,
    from_bytes32,
    parse_context,
    to_bytes32,
    token_id,
)
from toolkit.resources import InvalidInput, Quote, TransactionRequest

__all__ = ["Expectation", "Finding", "check_calls", "check_swap_route", "check_transaction"]


def check_transaction(
    quote: Quote,
    tx: TransactionRequest,
    *,
    now: int,
    registry: Registry | None = None,
    payer: str | None = None,
    exclusive_s: int = 60,
    open_s: int = 300,
    same_chain_buffer_s: int = 13 * 60,
    cross_chain_buffer_s: int = 12 * 3600,
    tolerance_s: int = 30,
) -> list[Finding]:
    """Check an escrow ``open()`` transaction against the quote it implements, at time ``now``.

    ``payer`` is the address that will sign (defaults to the quote's first input user).
    ``tolerance_s`` absorbs the delay between building the transaction and checking it.

    Example:
        >>> from toolkit.codecs import erc7930
        >>> from toolkit.chain.builder import build_open
        >>> from toolkit.resources import Input, Metadata, Output, Preview, Quote
        >>> from toolkit.scenario import Windows
        >>> me, filler = "0x" + "11" * 20, "0x" + "fe" * 20
        >>> usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
        >>> q = Quote(metadata=Metadata(exclusive_for=filler), preview=Preview(
        ...     inputs=[Input(user=erc7930.encode(8453, me), asset=erc7930.encode(8453, usdc),
        ...                   amount="1000000")],
        ...     outputs=[Output(receiver=erc7930.encode(8453, me),
        ...                     asset=erc7930.encode(8453, usdc), amount="999000")]))
        >>> built = build_open(q, now=1_000, nonce=7, registry=default_registry(), filler=filler,
        ...                    windows=Windows())
        >>> check_transaction(q, built.transaction, now=1_005)
        []
    """
    if not isinstance(quote, Quote):
        raise InvalidInput("quote", "must be a Quote")
    if not isinstance(tx, TransactionRequest):
        raise InvalidInput("tx", "must be a TransactionRequest")
    reg = default_registry() if registry is None else registry
    if not isinstance(reg, Registry):
        raise InvalidInput("registry", "must be a Registry")
    windows = _Windows(
        now=_non_negative(now, "now"),
        exclusive=_non_negative(exclusive_s, "exclusive_s"),
        open=_non_negative(open_s, "open_s"),
        same_chain=_non_negative(same_chain_buffer_s, "same_chain_buffer_s"),
        cross_chain=_non_negative(cross_chain_buffer_s, "cross_chain_buffer_s"),
        tolerance=_non_negative(tolerance_s, "tolerance_s"),
    )
    _require_evm_outputs(quote)
    origin = quote.preview.inputs[0].chain_id
    expected_from, findings = _expected_payer(quote, payer)
    findings += _check_envelope(quote, tx, origin, expected_from)
    try:
        escrow = reg.escrow(origin)
    except NotInRegistry as exc:
        findings.append(Finding("chainId", f"{exc}; its escrow is unknown"))
        return findings
    if tx.to.lower() != escrow.lower():
        findings.append(Finding("to", f"is {tx.to}, not the escrow {escrow} of chain {origin}"))

    try:
        order = decode_open(tx.data)
    except InvalidValue as exc:
        findings.append(Finding("data", exc.rule))
        return findings

    if order.user != expected_from:
        findings.append(Finding("order.user", f"is {order.user}, the payer is {expected_from}"))
    if order.origin_chain_id != origin:
        findings.append(
            Finding("order.originChainId", f"is {order.origin_chain_id}, expected {origin}")
        )
    findings += _check_inputs(quote, order)
    findings += _check_outputs(quote, order, reg, origin, windows)
    findings += _check_order_fields(quote, order, reg, origin, windows)
    return findings


def _expected_payer(quote: Quote, payer: str | None) -> tuple[str, list[Finding]]:
    """The address that must sign: ``payer`` when given, else the quote's first input user;
    a finding when the two differ."""
    quoted_payer = quote.preview.inputs[0].user_address
    if payer is None:
        return quoted_payer, []
    expected_from = _address(payer, "payer")
    if expected_from == quoted_payer:
        return expected_from, []
    return expected_from, [
        Finding(
            "preview.inputs[0].user", f"the quote's payer is {quoted_payer}, not {expected_from}"
        )
    ]


def _check_envelope(
    quote: Quote, tx: TransactionRequest, origin: int, expected_from: str
) -> list[Finding]:
    """The transaction's chain, sender and value against the quote."""
    findings = []
    if tx.chain_id != origin:
        findings.append(Finding("chainId", f"is {tx.chain_id}, the quote's origin is {origin}"))
    if tx.from_.lower() != expected_from.lower():
        findings.append(Finding("from", f"is {tx.from_}, the payer is {expected_from}"))
    inputs = quote.preview.inputs
    native = sum(i.amount_int for i in inputs if i.asset_address == abi.ZERO_ADDRESS)
    if tx.value_int != native:
        findings.append(
            Finding("value", f"sends {tx.value_int} wei, the quote's native inputs are {native}")
        )
    return findings


def _require_evm_outputs(quote: Quote) -> None:
    for i, out in enumerate(quote.preview.outputs):
        try:
            out.asset_address  # noqa: B018 - raises for a non-eip155 address
            out.receiver_address  # noqa: B018
        except ValueError as exc:
            raise InvalidInput(
                f"preview.outputs[{i}]", f"must be on an eip155 chain to be checked ({exc})"
            ) from None


@dataclass(frozen=True)
class _Windows:
    now: int
    exclusive: int
    open: int
    same_chain: int
    cross_chain: int
    tolerance: int


def _check_inputs(quote: Quote, order: StandardOrder) -> list[Finding]:
    findings = []
    quoted = quote.preview.inputs
    if len(order.inputs) != len(quoted):
        findings.append(
            Finding("inputs", f"the order has {len(order.inputs)}, the quote {len(quoted)}")
        )
    for i, (item, (tid, amount)) in enumerate(zip(quoted, order.inputs, strict=False)):
        if tid != token_id(item.asset_address):
            findings.append(
                Finding(
                    f"inputs[{i}].token",
                    f"is {_token_text(tid)}, the quote's input is {item.asset_address}",
                )
            )
        if amount != item.amount_int:
            findings.append(
                Finding(f"inputs[{i}].amount", f"is {amount}, the quote's is {item.amount}")
            )
    return findings


def _token_text(tid: int) -> str:
    return f"0x{tid:040x}" if tid < 2**160 else hex(tid)


def _check_outputs(
    quote: Quote, order: StandardOrder, reg: Registry, origin: int, w: _Windows
) -> list[Finding]:
    findings = []
    quoted = quote.preview.outputs
    if len(order.outputs) != len(quoted):
        findings.append(
            Finding("outputs", f"the order has {len(order.outputs)}, the quote {len(quoted)}")
        )
    same_chain = all(out.chain_id == origin for out in quoted)
    metadata = quote.metadata
    exclusive_for = metadata.exclusive_for if metadata is not None else None
    for i, (item, out) in enumerate(zip(quoted, order.outputs, strict=False)):
        where = f"outputs[{i}]"
        if out.chain_id != item.chain_id:
            findings.append(
                Finding(f"{where}.chainId", f"is {out.chain_id}, the quote's is {item.chain_id}")
            )
        checks = (
            ("token", out.token, to_bytes32(item.asset_address)),
            ("recipient", out.recipient, to_bytes32(item.receiver_address)),
        )
        for name, got, want in checks:
            if got != want:
                findings.append(
                    Finding(f"{where}.{name}", f"is {_word_text(got)}, the quote's is {want}")
                )
        if out.amount != item.amount_int:
            findings.append(
                Finding(f"{where}.amount", f"is {out.amount}, the quote's is {item.amount}")
            )
        findings += _check_proof_path(out, where, reg, origin, item.chain_id, same_chain)
        if out.callback_data:
            findings.append(
                Finding(f"{where}.callbackData", "carries a callback the quote did not ask for")
            )
        findings += _check_context(out, where, exclusive_for, order.fill_deadline, w)
    return findings


def _word_text(word: str) -> str:
    try:
        return from_bytes32(word)
    except InvalidValue:
        return word


def _check_proof_path(
    out: MandateOutput, where: str, reg: Registry, origin: int, chain_id: int, same_chain: bool
) -> list[Finding]:
    try:
        settler = reg.output_settler(chain_id)
        oracle = settler if same_chain else reg.oracle(origin)
    except NotInRegistry as exc:
        return [Finding(f"{where}.chainId", str(exc))]
    findings = []
    if out.settler != to_bytes32(settler):
        findings.append(
            Finding(
                f"{where}.settler",
                f"is {_word_text(out.settler)}, not the output settler {settler}",
            )
        )
    if out.oracle != to_bytes32(oracle):
        findings.append(
            Finding(f"{where}.oracle", f"is {_word_text(out.oracle)}, not the oracle {oracle}")
        )
    return findings


def _check_context(
    out: MandateOutput, where: str, exclusive_for: str | None, fill_deadline: int, w: _Windows
) -> list[Finding]:
    try:
        exclusivity = parse_context(out.context)
    except InvalidValue as exc:
        return [Finding(f"{where}.context", exc.rule)]
    if exclusivity is None:
        return [Finding(f"{where}.context", "grants no exclusivity; the quote is exclusive")]
    findings = []
    if exclusive_for is None:
        findings.append(
            Finding(
                f"{where}.context.exclusiveFor",
                f"names {exclusivity.filler}, but the quote names no exclusiveFor to compare",
                "warning",
            )
        )
    elif exclusivity.filler != exclusive_for:
        findings.append(
            Finding(
                f"{where}.context.exclusiveFor",
                f"is {exclusivity.filler}, the quote's exclusiveFor is {exclusive_for}",
            )
        )
    start = exclusivity.start_time
    latest = w.now + w.exclusive + w.tolerance
    if start > latest:
        findings.append(
            Finding(
                f"{where}.context.startTime",
                f"is {start}: exclusivity would last {start - w.now} s, at most "
                f"{w.exclusive + w.tolerance} s expected",
            )
        )
    elif start + w.tolerance < w.now:
        findings.append(
            Finding(f"{where}.context.startTime", f"is {start}, already {w.now - start} s past")
        )
    if start > fill_deadline:
        findings.append(
            Finding(
                f"{where}.context.startTime",
                f"is after fillDeadline {fill_deadline}: only the exclusive filler could fill",
                "warning",
            )
        )
    return findings


def _check_order_fields(
    quote: Quote, order: StandardOrder, reg: Registry, origin: int, w: _Windows
) -> list[Finding]:
    findings = []
    overrides = quote.order
    same_chain = all(out.chain_id == origin for out in quote.preview.outputs)
    oracle = reg.output_settler(origin) if same_chain else reg.oracle(origin)
    if overrides is not None and overrides.input_oracle is not None:
        oracle = overrides.input_oracle
    if order.input_oracle != oracle:
        findings.append(Finding("order.inputOracle", f"is {order.input_oracle}, expected {oracle}"))
    nonce = overrides.nonce_int if overrides is not None else None
    if nonce is not None and order.nonce != nonce:
        findings.append(Finding("order.nonce", f"is {order.nonce}, the quote asks for {nonce}"))

    fill, expires = order.fill_deadline, order.expires
    fill_override = overrides.fill_deadline if overrides is not None else None
    expires_override = overrides.expires if overrides is not None else None
    if fill <= w.now:
        findings.append(Finding("order.fillDeadline", f"is {fill}, already past (now {w.now})"))
    elif fill_override is not None:
        if fill != fill_override:
            findings.append(
                Finding("order.fillDeadline", f"is {fill}, the quote asks for {fill_override}")
            )
    else:
        latest = w.now + w.exclusive + w.open + w.tolerance
        if fill > latest:
            findings.append(
                Finding(
                    "order.fillDeadline",
                    f"is {fill - w.now} s away, at most {latest - w.now} s expected",
                )
            )
        elif fill - w.now < w.exclusive:
            findings.append(
                Finding("order.fillDeadline", f"leaves only {fill - w.now} s to fill", "warning")
            )
    if fill > expires:
        findings.append(Finding("order.expires", f"is {expires}, before fillDeadline {fill}"))
    elif expires_override is not None:
        if expires != expires_override:
            findings.append(
                Finding("order.expires", f"is {expires}, the quote asks for {expires_override}")
            )
    else:
        buffer = w.same_chain if same_chain else w.cross_chain
        if expires - fill > buffer + w.tolerance:
            kind = "same-chain" if same_chain else "cross-chain"
            findings.append(
                Finding(
                    "order.expires",
                    f"is {expires - fill} s after fillDeadline, at most {buffer + w.tolerance} s "
                    f"expected for a {kind} order (refunds would be locked that long)",
                )
            )
    return findings


def _address(value: Any, field: str) -> str:
    try:
        return abi.address(value, field)
    except InvalidValue as exc:
        raise InvalidInput(exc.field, exc.rule) from None


def _non_negative(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(name, "must be a non-negative integer")
    return value
