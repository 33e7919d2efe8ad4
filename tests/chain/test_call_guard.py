"""check_calls: credit, vault and ERC-20 calls against what was asked for."""

from __future__ import annotations

import pytest

from toolkit.chain import calls
from toolkit.chain.guard import Expectation, Finding, check_calls
from toolkit.codecs.escrow import StandardOrder
from toolkit.resources import Calls, ContractCall, InvalidInput

USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
HUB = "0xb5cf2A13E9aaE413E780379667274626fa9D49f6"
OPERATOR = "0x" + "0a" * 20
USER = "0x" + "11" * 20
CARD = "0x" + "22" * 20
STRANGER = "0x" + "99" * 20


@pytest.fixture
def expected() -> Expectation:
    return Expectation(
        chain_id=8453,
        targets=[USDC, HUB, OPERATOR],
        amounts=[1_000_000],
        receivers=[CARD],
        account=USER,
    )


def _fields(findings: list[Finding]) -> list[str]:
    return [f.field for f in findings]


def test_a_repay_flow_is_clean(expected: Expectation) -> None:
    flow = [
        calls.erc20_approve(8453, USDC, HUB, 1_000_000),
        calls.contract_call(8453, HUB, "creditHub.repay", USER, 1_000_000),
    ]
    assert check_calls(flow, expected=expected) == []
    assert check_calls(Calls(calls=flow), expected=expected) == []
    assert check_calls(Calls(calls=[]), expected=expected) == []


def test_auto_top_up_flow_is_clean(expected: Expectation) -> None:
    flow = [
        calls.set_operator(8453, HUB, OPERATOR),
        calls.add_credit_receiver(8453, OPERATOR, CARD),
        calls.contract_call(8453, OPERATOR, "operator.openCreditLine", USER, CARD, 1_000_000),
        calls.draw_credit(8453, HUB, USER, CARD, 1_000_000),
    ]
    assert check_calls(flow, expected=expected) == []


def test_unlimited_approval(expected: Expectation) -> None:
    findings = check_calls([calls.erc20_approve(8453, USDC, HUB, 2**256 - 1)], expected=expected)
    assert findings == [Finding("calls[0].args.amount", "unlimited approval: approves 2**256-1")]
    more = check_calls([calls.erc20_approve(8453, USDC, HUB, 1_000_001)], expected=expected)
    assert _fields(more) == ["calls[0].args.amount"]
    assert more[0].message.startswith("unlimited approval: approves 1000001, more than")


def test_approval_to_an_unknown_spender(expected: Expectation) -> None:
    findings = check_calls([calls.erc20_approve(8453, USDC, STRANGER, 5)], expected=expected)
    assert _fields(findings) == ["calls[0].args.spender"]


def test_wrong_chain_target_and_value(expected: Expectation) -> None:
    call = calls.contract_call(10, STRANGER, "creditHub.repay", USER, 1_000_000)
    call = call.model_copy(update={"value": "7"})
    findings = check_calls([call], expected=expected)
    assert _fields(findings) == ["calls[0].chain", "calls[0].to", "calls[0].value"]
    assert str(findings[1]) == f"error: calls[0].to: {STRANGER} is not a known contract"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (calls.draw_credit(8453, HUB, USER, STRANGER, 1_000_000), "calls[0].args.receiver"),
        (calls.draw_credit(8453, HUB, USER, CARD, 2_000_000), "calls[0].args.amount"),
        (calls.draw_credit(8453, HUB, STRANGER, CARD, 1_000_000), "calls[0].args.borrower"),
        (
            calls.contract_call(8453, USDC, "erc20.transfer", STRANGER, 1_000_000),
            "calls[0].args.to",
        ),
        (calls.vault_deposit(8453, HUB, 5, CARD), "calls[0].args.assets"),
        (calls.vault_redeem(8453, HUB, 1_000_000, CARD, STRANGER), "calls[0].args.owner"),
        (calls.set_operator(8453, HUB, STRANGER), "calls[0].args.operator"),
        (
            calls.contract_call(8453, HUB, "router.swap", USDC, USDC, 1_000_000, 1, STRANGER),
            "calls[0].args.recipient",
        ),
        (
            calls.contract_call(
                8453,
                HUB,
                "liquidityPool.borrow",
                USDC,
                1_000_000,
                STRANGER,
                b"",
                0,
                1,
                b"\x00" * 65,
            ),
            "calls[0].args.target",
        ),
        (
            calls.contract_call(
                8453,
                HUB,
                "escrow.open",
                StandardOrder(STRANGER, 1, 8453, 2, 1, HUB, ((1, 1_000_000),), ()),
            ),
            "calls[0].args.order.user",
        ),
    ],
)
def test_arguments_other_than_asked(expected: Expectation, call: ContractCall, field: str) -> None:
    assert field in _fields(check_calls([call], expected=expected))


def test_undecodable_data(expected: Expectation) -> None:
    call = ContractCall(chain="8453", to=HUB, data="0xdeadbeef")
    findings = check_calls([call], expected=expected)
    assert findings == [Finding("calls[0].data", "unknown function selector 0xdeadbeef")]


def test_empty_expectations_skip_those_checks() -> None:
    loose = Expectation(chain_id=8453, targets=[HUB])
    assert check_calls([calls.draw_credit(8453, HUB, USER, STRANGER, 5)], expected=loose) == []


def test_indexes_name_the_call(expected: Expectation) -> None:
    flow = [
        calls.erc20_approve(8453, USDC, HUB, 1_000_000),
        calls.contract_call(8453, HUB, "creditHub.repay", USER, 3),
    ]
    assert _fields(check_calls(flow, expected=expected)) == ["calls[1].args.amount"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chain_id": "8453", "targets": []}, "chain_id: must be an integer"),
        ({"chain_id": 1, "targets": "0xabc"}, "targets: must be a collection of addresses"),
        ({"chain_id": 1, "targets": ["0xabc"]}, "targets: must be a 0x-prefixed 20-byte"),
        ({"chain_id": 1, "targets": [], "amounts": [-1]}, "amounts: must be a collection of non"),
        ({"chain_id": 1, "targets": [], "account": "me"}, "account: must be a 0x-prefixed"),
    ],
)
def test_expectation_rejections(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Expectation(**kwargs)


def test_check_calls_rejections(expected: Expectation) -> None:
    with pytest.raises(InvalidInput, match="expected: must be an Expectation"):
        check_calls([], expected={})  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"calls\[0\]: must be a ContractCall"):
        check_calls([{"chain": "1"}], expected=expected)  # type: ignore[list-item]
