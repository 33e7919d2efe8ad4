"""check_transaction: a built transaction passes; tampering with any field is caught."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from toolkit.chain.builder import OpenTransaction, build_open
from toolkit.chain.guard import Finding, check_transaction
from toolkit.chain.registry import default_registry
from toolkit.codecs.escrow import (
    StandardOrder,
    encode_open,
    exclusivity_context,
    to_bytes32,
    token_id,
)
from toolkit.resources import InvalidInput, Quote, TransactionRequest
from toolkit.scenario import Windows

OTHER = "0x" + "99" * 20
OTHER_WORD = to_bytes32(OTHER)


def _build(quote: Quote, now: int, filler: str) -> OpenTransaction:
    return build_open(
        quote,
        now=now,
        nonce=5,
        registry=default_registry(),
        filler=filler,
        windows=Windows(),
    )


def _with_order(tx: TransactionRequest, order: StandardOrder) -> TransactionRequest:
    return tx.model_copy(update={"data": encode_open(order)})


def _output(order: StandardOrder, i: int, **change: Any) -> StandardOrder:
    outputs = list(order.outputs)
    outputs[i] = dataclasses.replace(outputs[i], **change)
    return dataclasses.replace(order, outputs=tuple(outputs))


def _input(
    order: StandardOrder, i: int, token: int | None = None, amount: int | None = None
) -> StandardOrder:
    inputs = list(order.inputs)
    old_token, old_amount = inputs[i]
    inputs[i] = (old_token if token is None else token, old_amount if amount is None else amount)
    return dataclasses.replace(order, inputs=tuple(inputs))


def _fields(findings: list[Finding]) -> set[str]:
    return {f.field for f in findings if f.severity == "error"}


def test_a_built_transaction_is_safe(quote: Quote, now: int, filler: str) -> None:
    built = _build(quote, now, filler)
    assert check_transaction(quote, built.transaction, now=now) == []
    # Checked a little later, within the tolerance, it is still clean.
    assert check_transaction(quote, built.transaction, now=now + 20) == []


def test_two_legs_and_same_chain_are_safe(
    two_leg_quote: Quote, same_chain_quote: Quote, now: int, filler: str
) -> None:
    for q in (two_leg_quote, same_chain_quote):
        assert check_transaction(q, _build(q, now, filler).transaction, now=now) == []


def test_overrides_are_respected(make: Callable[..., Quote], now: int, filler: str) -> None:
    q = make(order={"nonce": "77", "fill_deadline": now + 7200, "expires": now + 90000})
    built = _build(q, now, filler)
    assert check_transaction(q, built.transaction, now=now) == []
    plain = make()
    # Against the plain quote, the long windows are out of bounds.
    fields = _fields(check_transaction(plain, built.transaction, now=now))
    assert {"order.fillDeadline", "order.expires"} <= fields


def test_nonce_override_is_enforced(make: Callable[..., Quote], now: int, filler: str) -> None:
    q = make(order={"nonce": "77"})
    built = _build(q, now, filler)
    tampered = _with_order(built.transaction, dataclasses.replace(built.order, nonce=78))
    assert "order.nonce" in _fields(check_transaction(q, tampered, now=now))


# --- each tampered field is named -----------------------------------------------------------

TX_TAMPERS: dict[str, Callable[[TransactionRequest], TransactionRequest]] = {
    "to": lambda tx: tx.model_copy(update={"to": OTHER}),
    "from": lambda tx: tx.model_copy(update={"from_": OTHER}),
    "chainId": lambda tx: tx.model_copy(update={"chain_id": 10}),
    "value": lambda tx: tx.model_copy(update={"value": "0x1"}),
    "data": lambda tx: tx.model_copy(update={"data": "0x48f49eaf" + tx.data[10:]}),
}


@pytest.mark.parametrize("field", sorted(TX_TAMPERS))
def test_transaction_tampering(quote: Quote, now: int, filler: str, field: str) -> None:
    built = _build(quote, now, filler)
    findings = check_transaction(quote, TX_TAMPERS[field](built.transaction), now=now)
    assert field in _fields(findings)


def _order_tampers(now: int) -> dict[str, Callable[[StandardOrder, int], StandardOrder]]:
    return {
        "inputs[{i}].token": lambda o, i: _input(o, i, token=token_id(OTHER)),
        "inputs[{i}].amount": lambda o, i: _input(o, i, amount=o.inputs[i][1] + 1),
        "outputs[{i}].chainId": lambda o, i: _output(o, i, chain_id=10),
        "outputs[{i}].token": lambda o, i: _output(o, i, token=OTHER_WORD),
        "outputs[{i}].amount": lambda o, i: _output(o, i, amount=o.outputs[i].amount - 1),
        "outputs[{i}].recipient": lambda o, i: _output(o, i, recipient=OTHER_WORD),
        "outputs[{i}].oracle": lambda o, i: _output(o, i, oracle=OTHER_WORD),
        "outputs[{i}].settler": lambda o, i: _output(o, i, settler=OTHER_WORD),
        "outputs[{i}].callbackData": lambda o, i: _output(o, i, callback_data=b"\x01"),
        "outputs[{i}].context": lambda o, i: _output(o, i, context=b""),
        "outputs[{i}].context.exclusiveFor": lambda o, i: _output(
            o, i, context=exclusivity_context(OTHER, now + 60)
        ),
        "outputs[{i}].context.startTime": lambda o, i: _output(
            o, i, context=exclusivity_context(o.user, now + 3600)
        ),
        "order.fillDeadline": lambda o, i: dataclasses.replace(
            o, fill_deadline=o.fill_deadline + 3600, expires=o.expires + 3600
        ),
        "order.expires": lambda o, i: dataclasses.replace(o, expires=o.expires + 86400),
        "order.user": lambda o, i: dataclasses.replace(o, user=OTHER),
        "order.originChainId": lambda o, i: dataclasses.replace(o, origin_chain_id=10),
        "order.inputOracle": lambda o, i: dataclasses.replace(o, input_oracle=OTHER),
        "inputs": lambda o, i: dataclasses.replace(o, inputs=(*o.inputs, (token_id(OTHER), 1))),
        "outputs": lambda o, i: dataclasses.replace(o, outputs=o.outputs[:-1]),
    }


ORDER_FIELDS = sorted(_order_tampers(0))


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("field", ORDER_FIELDS)
def test_order_tampering(
    two_leg_quote: Quote, now: int, filler: str, field: str, index: int
) -> None:
    built = _build(two_leg_quote, now, filler)
    tampered = _order_tampers(now)[field](built.order, index)
    findings = check_transaction(two_leg_quote, _with_order(built.transaction, tampered), now=now)
    assert field.format(i=index) in _fields(findings), findings


def test_the_exclusive_filler_is_the_quotes(
    make: Callable[..., Quote], quote: Quote, now: int, filler: str
) -> None:
    built = _build(quote, now, filler)
    other = make(exclusive_for="0x94807fE4300D15909C1a4fd39f76c61D68aee11E")
    fields = _fields(check_transaction(other, built.transaction, now=now))
    assert fields == {"outputs[0].context.exclusiveFor"}


def test_no_exclusive_for_in_the_quote_is_a_warning(
    make: Callable[..., Quote], now: int, filler: str
) -> None:
    q = make(exclusive_for=None)
    findings = check_transaction(q, _build(q, now, filler).transaction, now=now)
    assert [(f.field, f.severity) for f in findings] == [
        ("outputs[0].context.exclusiveFor", "warning")
    ]


def test_stale_transactions(quote: Quote, now: int, filler: str) -> None:
    tx = _build(quote, now, filler).transaction
    late = check_transaction(quote, tx, now=now + 400)
    assert "order.fillDeadline" in _fields(late)
    assert any("already past" in f.message for f in late)
    early = check_transaction(quote, tx, now=now - 3600)
    assert "order.fillDeadline" in _fields(early)
    assert "outputs[0].context.startTime" in _fields(early)


def test_expires_before_fill_deadline(quote: Quote, now: int, filler: str) -> None:
    built = _build(quote, now, filler)
    order = dataclasses.replace(built.order, expires=built.order.fill_deadline - 1)
    findings = check_transaction(quote, _with_order(built.transaction, order), now=now)
    assert any(f.field == "order.expires" and "before fillDeadline" in f.message for f in findings)


def test_payer_argument(quote: Quote, now: int, filler: str, payer: str) -> None:
    tx = _build(quote, now, filler).transaction
    assert check_transaction(quote, tx, now=now, payer=payer.lower()) == []
    findings = check_transaction(quote, tx, now=now, payer=OTHER)
    assert {"preview.inputs[0].user", "from", "order.user"} <= _fields(findings)


def test_unknown_origin_chain(quote: Quote, now: int, filler: str) -> None:
    from toolkit.chain.registry import Registry

    tx = _build(quote, now, filler).transaction
    reg = default_registry()
    small = Registry([reg.chain(42161)], reg.tokens(42161), {42161: reg.contracts(42161)})
    findings = check_transaction(quote, tx, now=now, registry=small)
    assert findings == [
        Finding("chainId", "chain 8453: not in the registry; its escrow is unknown")
    ]


def test_finding_str() -> None:
    assert str(Finding("to", "is wrong", "warning")) == "warning: to: is wrong"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"now": -1}, "now: must be a non-negative integer"),
        ({"tolerance_s": "30"}, "tolerance_s: must be a non-negative integer"),
        ({"payer": "me"}, "payer: must be a 0x-prefixed 20-byte hex address"),
        ({"registry": "default"}, "registry: must be a Registry"),
    ],
)
def test_bad_arguments(quote: Quote, now: int, filler: str, kwargs: dict, message: str) -> None:
    tx = _build(quote, now, filler).transaction
    args: dict = {"now": now}
    args.update(kwargs)
    with pytest.raises(InvalidInput, match=message):
        check_transaction(quote, tx, **args)


def test_requires_models(quote: Quote, now: int) -> None:
    with pytest.raises(InvalidInput, match="tx: must be a TransactionRequest"):
        check_transaction(quote, {"to": "0x"}, now=now)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="quote: must be a Quote"):
        check_transaction(None, None, now=now)  # type: ignore[arg-type]


def test_non_evm_outputs_cannot_be_checked(quote: Quote, now: int, filler: str) -> None:
    tx = _build(quote, now, filler).transaction
    solana = (
        "0x000100022045296998a6f8e2a784db5d9f95e18fc23f70441a1039446801089879b08c7ef02005333498"
        "d5aea4ae009585c43f7b8c30df8e70187d4a713d134f977fc8dfe0b5"
    )
    out = quote.preview.outputs[0].model_copy(update={"asset": solana, "receiver": solana})
    preview = quote.preview.model_copy(update={"outputs": [out]})
    odd = quote.model_copy(update={"preview": preview})
    with pytest.raises(InvalidInput, match=r"preview\.outputs\[0\]: must be on an eip155 chain"):
        check_transaction(odd, tx, now=now)


def test_addresses_compare_case_insensitively(quote: Quote, now: int, filler: str) -> None:
    tx = _build(quote, now, filler).transaction
    lower = tx.model_copy(update={"to": tx.to.lower(), "from_": tx.from_.lower()})
    assert check_transaction(quote, lower, now=now) == []
