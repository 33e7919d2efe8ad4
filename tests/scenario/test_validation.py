import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from toolkit.scenario import FeeTier, Scenario, ScenarioError, check_tiers, parse_scenario

Doc = dict[str, Any]
Parse = Callable[[Doc], Scenario]


def _expect(parse: Parse, doc: Doc, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse(doc)
    assert str(info.value) == message


def test_non_positive_balance(parse: Parse, default_doc: Doc):
    default_doc["pools"][3]["balance"] = 0
    _expect(parse, default_doc, "pools[3].balance: must be a positive integer")


def test_balance_as_a_bad_string(parse: Parse, default_doc: Doc):
    default_doc["pools"][2]["balance"] = "12e3"
    _expect(parse, default_doc, "pools[2].balance: must be an integer or a string of digits")


def test_balance_as_a_digit_string_is_accepted(parse: Parse, default_doc: Doc):
    default_doc["pools"][0]["balance"] = "123456789012345678901234567890"
    assert parse(default_doc).pools[0].balance == 123456789012345678901234567890


def test_boolean_is_not_an_integer(parse: Parse, default_doc: Doc):
    default_doc["chains"][0]["fill_s"] = True
    _expect(parse, default_doc, "chains[0].fill_s: must be a non-negative integer")


def test_tiers_must_be_contiguous(parse: Parse, single_doc: Doc):
    single_doc["routes"][0]["fee_tiers"] = [
        {"fee_bps": 5, "min_amount": 1, "max_amount": 100},
        {"fee_bps": 3, "min_amount": 101, "max_amount": 1000},
    ]
    _expect(parse, single_doc, "routes[0].fee_tiers: tiers must be contiguous")


def test_schedule_errors_name_the_schedule(parse: Parse, default_doc: Doc):
    default_doc["fee_schedules"]["usdc"][1]["fee_bps"] = 10_000
    _expect(parse, default_doc, "fee_schedules.usdc[1].fee_bps: must be an integer from 0 to 9999")


def test_unknown_schedule(parse: Parse, default_doc: Doc):
    default_doc["routes"][5]["fee_tiers"] = "dai"
    _expect(parse, default_doc, "routes[5].fee_tiers: no fee schedule named 'dai'")


def test_empty_tiers(parse: Parse, single_doc: Doc):
    single_doc["routes"][0]["fee_tiers"] = []
    _expect(parse, single_doc, "routes[0].fee_tiers: must hold at least one fee tier")


def test_tier_max_above_min(parse: Parse, single_doc: Doc):
    single_doc["routes"][0]["fee_tiers"][0]["max_amount"] = 1_000_000
    _expect(parse, single_doc, "routes[0].fee_tiers[0].max_amount: must be greater than min_amount")


def test_fee_plus_premium_below_100_percent(parse: Parse, single_doc: Doc):
    single_doc["pricing"]["premium_max_bps"] = 9_999
    single_doc["routes"][0]["fee_tiers"][0]["fee_bps"] = 1
    _expect(parse, single_doc, "routes[0].fee_tiers: fee plus maximum premium must be below 10000")


def test_unknown_keys_are_errors(parse: Parse, default_doc: Doc):
    default_doc["pools"][1]["balanse"] = 5
    _expect(parse, default_doc, "pools[1].balanse: unknown key")
    del default_doc["pools"][1]["balanse"]
    default_doc["colour"] = "blue"
    _expect(parse, default_doc, "colour: unknown key")


def test_missing_keys(parse: Parse, default_doc: Doc):
    del default_doc["tokens"][4]["decimals"]
    _expect(parse, default_doc, "tokens[4].decimals: is required")
    del default_doc["filler"]
    _expect(parse, default_doc, "filler: is required")


def test_addresses(parse: Parse, default_doc: Doc):
    good = default_doc["tokens"][0]["address"]
    default_doc["tokens"][0]["address"] = good[:-1]
    _expect(parse, default_doc, "tokens[0].address: must be a 0x-prefixed 20-byte hex address")
    default_doc["tokens"][0]["address"] = good[:2] + good[2:].swapcase()
    _expect(parse, default_doc, "tokens[0].address: bad EIP-55 checksum")
    default_doc["tokens"][0]["address"] = good.lower()
    assert parse(default_doc).tokens[0].address == good


def test_pool_type_must_be_a_liquidity_api_type(parse: Parse, default_doc: Doc):
    default_doc["pools"][0]["type"] = "vault"
    _expect(
        parse,
        default_doc,
        "pools[0].type: must be one of aave, aave_v2, usdc, usdc_v2, aave_long_term, "
        "aave_long_term_v2",
    )


def test_references_must_resolve(parse: Parse, default_doc: Doc):
    default_doc["tokens"][0]["chain"] = 137
    _expect(parse, default_doc, "tokens[0].chain: chain 137 is not in chains")


def test_pool_token_must_exist(parse: Parse, default_doc: Doc):
    default_doc["pools"][0]["token"] = "DAI"
    _expect(parse, default_doc, "pools[0].token: no token 'DAI' on chain 1")


def test_route_needs_a_destination_pool(parse: Parse, default_doc: Doc):
    default_doc["pools"] = [p for p in default_doc["pools"] if p["chain"] != 10]
    index = next(i for i, r in enumerate(default_doc["routes"]) if r["dst"] == 10)
    token = default_doc["routes"][index]["token"]
    _expect(parse, default_doc, f"routes[{index}]: no pool holds {token} on chain 10")


def test_route_token_must_have_equal_decimals(parse: Parse, default_doc: Doc):
    for token in default_doc["tokens"]:
        if token["chain"] == 10 and token["symbol"] == "USDC":
            token["decimals"] = 18
    index = next(
        i
        for i, r in enumerate(default_doc["routes"])
        if 10 in (r["src"], r["dst"]) and r["token"] == "USDC"
    )
    _expect(
        parse, default_doc, f"routes[{index}]: the token has different decimals on the two chains"
    )


def test_duplicates(parse: Parse, default_doc: Doc):
    default_doc["routes"].append(dict(default_doc["routes"][0]))
    n = len(default_doc["routes"]) - 1
    _expect(parse, default_doc, f"routes[{n}]: route 1->10 USDC is listed twice")


def test_fill_cost_needs_a_price(parse: Parse, default_doc: Doc):
    del default_doc["amm"]  # its pools need the WETH price (tests/scenario/test_amm.py)
    del default_doc["prices"]["WETH"]
    _expect(
        parse,
        default_doc,
        "tokens[1].fill_cost: is required when [prices] has no WETH price to convert the "
        "chain's USD fill cost",
    )
    for token in default_doc["tokens"]:
        if token["symbol"] == "WETH":
            token["fill_cost"] = 123
    # The rebalancing policy's minimum transfer, in USD, needs the price too.
    _expect(parse, default_doc, "rebalancing.min_transfer_usd: needs a [prices] entry for WETH")
    default_doc["rebalancing"]["min_transfer_usd"] = 0
    scenario = parse(default_doc)
    assert scenario.fill_cost(1, "WETH") == 123


def test_prices_must_be_positive_decimals(parse: Parse, default_doc: Doc):
    default_doc["prices"]["WETH"] = "three thousand"
    _expect(parse, default_doc, "prices.WETH: must be a decimal number (string or number)")
    default_doc["prices"]["WETH"] = "-1"
    _expect(parse, default_doc, "prices.WETH: must be a positive decimal")


def test_windows(parse: Parse, default_doc: Doc):
    default_doc["windows"]["quote_s"] = 0
    _expect(parse, default_doc, "windows.quote_s: must be a positive integer")
    default_doc["windows"]["quote_s"] = 15
    default_doc["windows"]["quote_secs"] = 15
    _expect(parse, default_doc, "windows.quote_secs: unknown key")


def test_windows_default_to_the_spec(parse: Parse, single_doc: Doc):
    w = parse(single_doc).windows
    assert (w.quote_s, w.order_s, w.exclusive_s, w.open_s) == (
        15,
        60,
        60,
        300,
    )
    assert (w.same_chain_expiry_buffer_s, w.cross_chain_expiry_buffer_s) == (
        13 * 60,
        12 * 3600,
    )


def test_api_keys(parse: Parse, default_doc: Doc):
    default_doc["auth"]["api_keys"] = ["ok", ""]
    _expect(parse, default_doc, "auth.api_keys[1]: must be a non-empty string")
    default_doc["auth"]["api_keys"] = []
    _expect(parse, default_doc, "auth.api_keys: must hold at least one key")


def test_contracts_without_registry_or_table(default_doc: Doc):
    with pytest.raises(ScenarioError, match=r"chains\[0\].escrow: is required"):
        parse_scenario(default_doc)


def test_contracts_table_and_chain_override(default_doc: Doc):
    a, b = "0x" + "aa" * 20, "0x" + "bb" * 20
    default_doc["contracts"] = {"escrow": a, "output_settler": a, "oracle": a}
    default_doc["chains"][1]["escrow"] = b
    s = parse_scenario(default_doc)
    assert s.chain(1).escrow.lower() == a and s.chain(10).escrow.lower() == b


def test_replace_revalidates():
    from toolkit.scenario import load_scenario

    s = load_scenario("single-pool")
    pool = dataclasses.replace(s.pools[0], balance=-5)
    with pytest.raises(ScenarioError, match=r"^pools\[0\].balance: must be a positive integer$"):
        dataclasses.replace(s, pools=(pool,))
    bigger = dataclasses.replace(s, pools=(dataclasses.replace(s.pools[0], balance=20),))
    assert bigger.pools_for(8453, "USDC")[0].balance == 20


def test_check_tiers_directly():
    assert check_tiers((FeeTier(1, 0, 5),), "t") == (FeeTier(1, 0, 5),)
    with pytest.raises(ScenarioError, match=r"^t\[0\].min_amount: must be a non-negative integer$"):
        check_tiers((FeeTier(1, -1, 5),), "t")
    with pytest.raises(ScenarioError, match=r"^t\[0\]: must be a fee tier$"):
        check_tiers(((1, 0, 5),), "t")


def test_built_parts_keep_addresses_checksummed():
    from toolkit.scenario import load_scenario

    s = load_scenario("single-pool")
    pool = dataclasses.replace(s.pools[0], address=s.pools[0].address.lower())
    with pytest.raises(
        ScenarioError, match=r"^pools\[0\].address: must be stored in EIP-55 checksummed form$"
    ):
        dataclasses.replace(s, pools=(pool,))


def test_a_bad_signing_key_is_never_echoed_nor_chained(parse: Parse, default_doc: Doc):
    key = "0x" + "12" * 31 + "zz"
    default_doc["auth"]["signer_key"] = key
    with pytest.raises(ScenarioError) as info:
        parse(default_doc)
    assert str(info.value) == "auth.signer_key: must be a 0x-prefixed 32-byte hex private key"
    # pydantic's error holds the input: it must not ride along as the cause or the context
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize(
    ("credit", "message"),
    [
        (
            {"collateral": [{"symbol": "DOGE", "kind": "token"}]},
            "credit.collateral[0].ltv_bps: must be a non-negative integer "
            "(no product default for this symbol)",
        ),
        (
            {"collateral": [{"symbol": "yoBTC", "prices": [[10, "1"], [5, "2"]]}]},
            "credit.collateral[0].prices: times must increase strictly",
        ),
        (
            {"collateral": [{"symbol": "yoBTC", "prices": [[10, "one"]]}]},
            "credit.collateral[0].prices[0][1]: must be a decimal number (string or number)",
        ),
        ({"collateral": []}, "credit.collateral: must be a non-empty array of tables"),
        ({"chain": "base"}, "credit.chain: must be an integer or a string of digits"),
        ({"eure": 5}, "credit.eure: must be a table, or false for no EURe hub"),
        ({"book_acounts": 5}, "credit.book_acounts: unknown key"),
        ("yes", "credit: must be a table"),
    ],
)
def test_credit_faults_name_their_key_path(
    parse: Parse, default_doc: Doc, credit: Any, message: str
):
    default_doc["credit"] = credit
    _expect(parse, default_doc, message)


def test_a_document_that_is_not_a_table(parse: Parse):
    _expect(parse, [], "(document): must be a table")  # type: ignore[arg-type]
