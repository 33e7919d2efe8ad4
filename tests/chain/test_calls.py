"""The contract function table, the generic codec and the typed ContractCall builders."""

from __future__ import annotations

from typing import Any

import eth_abi
import pytest
from eth_utils import function_signature_to_4byte_selector, to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.chain import calls
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.escrow import StandardOrder
from toolkit.codecs.function_table import FUNCTIONS, SIGNATURES
from toolkit.codecs.functions import DecodedCall, decode_call, encode_call
from toolkit.resources import ContractCall

A = "0x" + "11" * 20
B = "0x" + "22" * 20
C = "0x" + "33" * 20

KNOWN_SELECTORS = {
    "erc20.approve": "0x095ea7b3",
    "erc20.transfer": "0xa9059cbb",
    "vault.deposit": "0x6e553f65",
    "vault.redeem": "0xba087652",
    "escrow.open": "0x7515fd56",
}


def test_table_signatures_and_selectors() -> None:
    assert SIGNATURES["erc20.approve"] == "approve(address,uint256)"
    assert SIGNATURES["liquidityPool.borrow"] == (
        "borrow(address,uint256,address,bytes,uint256,uint256,bytes)"
    )
    assert SIGNATURES["router.swap"] == "swap(address,address,uint256,uint256,address)"
    for key, selector in KNOWN_SELECTORS.items():
        assert FUNCTIONS[key].selector == selector
    selectors = [fn.selector for fn in FUNCTIONS.values()]
    assert len(selectors) == len(set(selectors))
    for key, fn in FUNCTIONS.items():
        expected = "0x" + function_signature_to_4byte_selector(SIGNATURES[key]).hex()
        assert fn.selector == expected


def test_encode_matches_plain_eth_abi() -> None:
    data = encode_call("creditHub.drawCredit", A, B, 1_000_000)
    body = eth_abi.encode(["address", "address", "uint256"], [A, B, 1_000_000])
    assert data == "0xf83bc7b8" + body.hex()


def test_decode_gives_named_arguments() -> None:
    decoded = decode_call(encode_call("router.swap", A, B, 10, 9, C))
    assert decoded == DecodedCall(
        "router.swap",
        {
            "tokenIn": to_checksum_address(A),
            "tokenOut": to_checksum_address(B),
            "amountIn": 10,
            "minAmountOut": 9,
            "recipient": to_checksum_address(C),
        },
    )
    assert decoded.values == (
        to_checksum_address(A),
        to_checksum_address(B),
        10,
        9,
        decoded.args["recipient"],
    )


def test_no_argument_functions() -> None:
    assert encode_call("operator.revoke") == "0xb6549f75"
    assert decode_call("0x4cd48a89") == DecodedCall("operator.finalizeRevoke", {})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: encode_call("erc20.mint", A, 1),
            "function: unknown function 'erc20.mint'; known:",
        ),
        (
            lambda: encode_call("erc20.approve", A),
            r"args: erc20.approve takes 2 arguments \(spender, amount\), got 1",
        ),
        (
            lambda: encode_call("erc20.approve", "0x12", 1),
            "spender: must be a 0x-prefixed 20-byte hex address",
        ),
        (lambda: encode_call("erc20.approve", A, -1), r"amount: must be between 0 and 2\*\*256-1"),
        (
            lambda: encode_call("erc20.approve", A, 2**256),
            r"amount: must be between 0 and 2\*\*256-1",
        ),
        (lambda: encode_call("erc20.approve", A, "5"), "amount: must be an integer"),
        (
            lambda: encode_call("escrow.open"),
            r"args: escrow.open takes 1 argument \(order\), got 0",
        ),
        (lambda: encode_call("escrow.open", {"user": A}), "order: must be a StandardOrder"),
        (
            lambda: encode_call("liquidityPool.borrow", A, 1, B, "zz", 0, 1, b""),
            "targetCallData: must be bytes or a 0x",
        ),
    ],
)
def test_encode_rejections(call: Any, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        call()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("0xdeadbeef", "data: unknown function selector 0xdeadbeef"),
        ("0x095ea7", "data: too short to hold a function selector"),
        ("095ea7b3", "data: must be bytes or a 0x-prefixed hex string"),
        (encode_call("erc20.approve", A, 1)[:-2], r"data: truncated erc20.approve calldata"),
        (
            encode_call("erc20.approve", A, 1) + "00",
            "data: not the canonical ABI encoding of erc20.approve",
        ),
        (
            "0x095ea7b3" + "ff" * 12 + "11" * 20 + "00" * 32,
            "data: malformed erc20.approve calldata",
        ),
        ("0x7515fd56" + "00" * 3, "data: truncated open"),
    ],
)
def test_decode_rejections(data: str, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        decode_call(data)


# --- Hypothesis round trip of every function in the table -----------------------------------

_addresses = st.binary(min_size=20, max_size=20).map(lambda b: "0x" + b.hex())


def _strategy(type_: str) -> st.SearchStrategy[Any]:
    if type_ == "address":
        return _addresses
    if type_ == "bytes":
        return st.binary(max_size=100)
    return st.integers(min_value=0, max_value=2 ** int(type_[4:]) - 1)


_ORDER = StandardOrder(A, 7, 8453, 200, 100, B, ((int(C, 16), 5),), ())


_OUTPUT = (b"\x01" * 32, b"\x02" * 32, 8453, b"\x03" * 32, 9, b"\x04" * 32, b"", b"\xe0")
# The settlers' struct-typed functions: fixed arguments, checked by re-encoding what decodes.
_SETTLER_ARGS: dict[str, tuple[Any, ...]] = {
    "escrow.refund": (_ORDER.as_abi(),),
    "escrow.finalise": (_ORDER.as_abi(), [(5, b"\x05" * 32)], "0x" + "06" * 32, b""),
    "escrow.orderStatus": ("0x" + "07" * 32,),
    "outputSettler.fill": ("0x" + "08" * 32, _OUTPUT, 100, b"\x09" * 32),
    # bytes32 parameters (the input oracle).
    "inputOracle.isProven": (8453, b"\x01" * 32, b"\x02" * 32, b"\x03" * 32),
    "inputOracle.receiveMessage": (8453, A, [b"\x04" * 32, b"\x05" * 32], b"\x06"),
    # Signed and array parameters (the AMM pools and the Universal Router).
    "v3pool.ticks": (-887220,),
    "universalRouter.execute": (b"\x00\x04", [b"\x01" * 32, b""], 5),
}


@st.composite
def _calls(draw: st.DrawFn) -> tuple[str, tuple[Any, ...]]:
    key = draw(st.sampled_from(sorted(FUNCTIONS)))
    if key == "escrow.open":
        return key, (_ORDER,)
    if key in _SETTLER_ARGS:
        return key, _SETTLER_ARGS[key]
    return key, tuple(draw(_strategy(t)) for t, _ in FUNCTIONS[key].params)


@settings(max_examples=150, deadline=None)
@given(_calls())
def test_every_function_round_trips(case: tuple[str, tuple[Any, ...]]) -> None:
    key, args = case
    data = encode_call(key, *args)
    decoded = decode_call(data)
    assert decoded.function == key
    if key in _SETTLER_ARGS:
        assert encode_call(key, *decoded.values) == data
        return
    expected = tuple(
        to_checksum_address(a) if isinstance(a, str) and len(a) == 42 else a for a in args
    )
    assert decoded.values == expected
    assert list(decoded.args) == [name for _, name in FUNCTIONS[key].params]


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_each_function_is_covered_by_the_round_trip(key: str) -> None:
    # The round trip samples keys at random; make sure every key is at least encodable.
    if key == "escrow.open":
        args: tuple[Any, ...] = (_ORDER,)
    elif key in _SETTLER_ARGS:
        args = _SETTLER_ARGS[key]
    else:
        args = tuple(
            {"address": A, "bytes": b"\x01\x02"}.get(t, 3) for t, _ in FUNCTIONS[key].params
        )
    assert decode_call(encode_call(key, *args)).function == key


# --- typed builders -------------------------------------------------------------------------

_BUILDERS = [
    (calls.erc20_approve, (A, B, 5), "erc20.approve", (B, 5)),
    (calls.vault_deposit, (A, 5, B), "vault.deposit", (5, B)),
    (calls.vault_redeem, (A, 5, B, C), "vault.redeem", (5, B, C)),
    (calls.vault_request_redeem, (A, 5, B, C), "vault.requestRedeem", (5, B, C)),
    (calls.vault_claim_redeem, (A, 5, B, C), "vault.redeem", (5, B, C)),
    (calls.draw_credit, (A, B, C, 5), "creditHub.drawCredit", (B, C, 5)),
    (calls.set_operator, (A, B), "creditHub.setOperator", (B,)),
    (calls.add_credit_receiver, (A, B), "creditHub.addCreditReceiver", (B,)),
    (calls.remove_credit_receiver, (A, B), "creditHub.removeCreditReceiver", (B,)),
    (calls.collateral_deposit, (A, B, 5), "collateralEscrow.deposit", (B, 5)),
    (calls.collateral_withdraw, (A, B, 5), "collateralEscrow.withdraw", (B, 5)),
]


@pytest.mark.parametrize(("builder", "args", "key", "values"), _BUILDERS)
def test_typed_builders(
    builder: Any, args: tuple[Any, ...], key: str, values: tuple[Any, ...]
) -> None:
    call = builder(8453, *args)
    assert isinstance(call, ContractCall)
    assert (call.chain, call.to, call.value) == ("8453", to_checksum_address(A), "0")
    decoded = decode_call(call.data)
    assert decoded.function == key
    normal = tuple(to_checksum_address(v) if isinstance(v, str) else v for v in values)
    assert decoded.values == normal
    assert call.to_wire() == {"chain": "8453", "to": call.to, "data": call.data, "value": "0"}


@pytest.mark.parametrize(
    ("key", "args"),
    [
        ("erc20.transfer", (B, 5)),
        ("creditHub.repay", (B, 5)),
        ("operator.openCreditLine", (B, C, 5)),
        ("operator.revoke", ()),
        ("escrow.open", (_ORDER,)),
        ("liquidityPool.borrow", (B, 5, C, b"\xaa", 1, 2, b"\x01" * 65)),
        ("router.swap", (B, C, 10, 9, B)),
    ],
)
def test_any_function_without_a_typed_builder_is_a_contract_call(
    key: str, args: tuple[Any, ...]
) -> None:
    call = calls.contract_call(8453, A, key, *args)
    assert (call.chain, call.to, call.value) == ("8453", to_checksum_address(A), "0")
    assert decode_call(call.data).function == key


def test_builder_rejections() -> None:
    with pytest.raises(InvalidValue, match="chainId: must be a positive integer"):
        calls.erc20_approve(0, A, B, 5)
    with pytest.raises(InvalidValue, match="to: must be a 0x-prefixed 20-byte hex address"):
        calls.erc20_approve(1, "usdc", B, 5)
