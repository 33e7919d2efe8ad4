"""The chain/token/contract registry: contents, lookups, and validation of the TOML file."""

from __future__ import annotations

import copy
import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from eth_utils import is_checksum_address

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry import DEFAULT_PATH, Registry, default_registry
from toolkit.codecs import caip2
from toolkit.codecs.errors import InvalidValue


@pytest.fixture
def raw() -> dict[str, Any]:
    with DEFAULT_PATH.open("rb") as handle:
        return tomllib.load(handle)


def test_the_default_registry_is_package_data() -> None:
    assert files("toolkit.chain") / "registry.toml" == DEFAULT_PATH
    assert DEFAULT_PATH.is_file()
    assert default_registry() is default_registry()


def test_every_address_in_the_file_is_checksummed(raw: dict[str, Any]) -> None:
    addresses = [t["address"] for t in raw["tokens"]] + list(raw["contracts"].values())
    assert len(addresses) >= 18
    for address in addresses:
        assert is_checksum_address(address), address


def test_chains() -> None:
    reg = default_registry()
    assert [c.chain_id for c in reg.chains()] == [1, 10, 130, 8453, 42161]
    names = {c.chain_id: c.name for c in reg.chains()}
    assert names == {
        1: "Ethereum",
        10: "Optimism",
        130: "Unichain",
        8453: "Base",
        42161: "Arbitrum",
    }
    for chain in reg.chains():
        assert caip2.parse(chain.caip2) == chain.chain_id
        assert chain.native_symbol == "ETH"
        assert chain.eip1559 is True


@pytest.mark.parametrize(
    ("chain_id", "symbol", "address", "decimals"),
    [
        (1, "USDC", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6),
        (10, "USDC", "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85", 6),
        (8453, "USDC", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6),
        (42161, "USDC", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", 6),
        (130, "USDC", "0x078D782b760474a361dDA0AF3839290b0EF57AD6", 6),
        (1, "WETH", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", 18),
        (10, "WETH", "0x4200000000000000000000000000000000000006", 18),
        (8453, "WETH", "0x4200000000000000000000000000000000000006", 18),
        (130, "WETH", "0x4200000000000000000000000000000000000006", 18),
        (42161, "WETH", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", 18),
        (1, "WBTC", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", 8),
        (10, "WBTC", "0x68f180fcCe6836688e9084f035309E29Bf0A2095", 8),
        (42161, "WBTC", "0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f", 8),
        (8453, "WBTC", "0x0555E30da8f98308EdB960aa94C0Db47230d2B9c", 8),
        (1, "EURe", "0x39b8B6385416f4cA36a20319F70D28621895279D", 18),
        (42161, "EURe", "0x0c06cCF38114ddfc35e07427B9424adcca9F44F8", 18),
        (8453, "EURe", "0xbf6e2966A9C3D99C9E4D069E04f7Bdb9C8aa762C", 18),
    ],
)
def test_tokens(chain_id: int, symbol: str, address: str, decimals: int) -> None:
    reg = default_registry()
    token = reg.token(chain_id, symbol)
    assert (token.address, token.decimals) == (address, decimals)
    assert reg.token(chain_id, symbol.lower()) == token
    assert reg.token_by_address(chain_id, address.lower()) == token
    assert reg.token_by_address(chain_id, address.upper().replace("0X", "0x")) == token


def test_tokens_per_chain() -> None:
    reg = default_registry()
    assert [t.symbol for t in reg.tokens(1)] == ["USDC", "WETH", "WBTC", "EURe"]
    assert [t.symbol for t in reg.tokens(130)] == ["USDC", "WETH"]


@pytest.mark.parametrize("chain_id", [1, 10, 8453, 42161, 130])
def test_contracts_are_the_same_on_every_chain(chain_id: int) -> None:
    reg = default_registry()
    assert reg.escrow(chain_id) == "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
    assert reg.output_settler(chain_id) == "0x0000000000eC36B683C2E6AC89e9A75989C22a2e"
    assert reg.oracle(chain_id) == "0x0000003E06000007A224AeE90052fA6bb46d43C9"


def test_unknown_lookups_name_what_was_asked() -> None:
    reg = default_registry()
    with pytest.raises(NotInRegistry, match=r"^chain 999: not in the registry$"):
        reg.chain(999)
    with pytest.raises(LookupError, match="chain 999: not in the registry"):
        reg.escrow(999)
    with pytest.raises(NotInRegistry, match=r"^token DAI on chain 1: not in the registry$"):
        reg.token(1, "DAI")
    with pytest.raises(NotInRegistry, match="token EURe on chain 10: not in the registry"):
        reg.token(10, "EURe")
    with pytest.raises(NotInRegistry, match=f"token {'0x' + '12' * 20} on chain 1"):
        reg.token_by_address(1, "0x" + "12" * 20)
    with pytest.raises(NotInRegistry, match="chain 5: not in the registry"):
        reg.tokens(5)


def test_lookup_arguments_are_checked() -> None:
    reg = default_registry()
    with pytest.raises(InvalidValue, match="chainId: must be an integer"):
        reg.chain("1")  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="symbol: must be a string"):
        reg.token(1, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="address: must be a 0x-prefixed 20-byte hex address"):
        reg.token_by_address(1, "USDC")


def test_per_chain_contract_override(raw: dict[str, Any]) -> None:
    raw["chains"]["10"]["contracts"] = {"escrow": "0x00fC00edbe7C003b006f870068c548940000223e"}
    reg = Registry.from_mapping(raw)
    assert reg.escrow(10) == "0x00fC00edbe7C003b006f870068c548940000223e"
    assert reg.escrow(1) == "0x000025c3226C00B2Cdc200005a1600509f4e00C0"
    assert reg.oracle(10) == "0x0000003E06000007A224AeE90052fA6bb46d43C9"


def test_load_from_a_path(tmp_path: Path) -> None:
    text = DEFAULT_PATH.read_text().replace('name = "Unichain"', 'name = "Uni"')
    path = tmp_path / "reg.toml"
    path.write_text(text)
    assert Registry.load(path).chain(130).name == "Uni"
    assert Registry.load(str(path)).chain(1).name == "Ethereum"


def _broken(raw: dict[str, Any], edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(raw)
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["tokens"][2].update(address=d["tokens"][2]["address"].lower()),
            r"tokens\[2\]\.address: must be an EIP-55 checksummed address",
        ),
        (
            lambda d: d["tokens"][0].update(decimals=-1),
            r"tokens\[0\]\.decimals: must be an integer between 0 and 36",
        ),
        (lambda d: d["tokens"][0].update(decimals="6"), r"tokens\[0\]\.decimals: must be an int"),
        (lambda d: d["tokens"][0].update(chain=0), r"tokens\[0\]\.chain: must be a positive"),
        (lambda d: d["tokens"][0].pop("symbol"), r"tokens\[0\]\.symbol: is required"),
        (lambda d: d["tokens"][0].update(colour="blue"), r"tokens\[0\]\.colour: unknown key"),
        (lambda d: d["tokens"][0].update(chain=5), "tokens.USDC: chain 5 is not in the chains"),
        (lambda d: d["tokens"].append(dict(d["tokens"][0])), "tokens.USDC: duplicate symbol"),
        (lambda d: d["chains"]["1"].update(caip2="eip155:2"), "chains.1.caip2: must be eip155:1"),
        (lambda d: d["chains"]["1"].update(eip1559="yes"), "chains.1.eip1559: must be true or"),
        (lambda d: d["chains"]["1"].update(name=""), "chains.1.name: must be a non-empty"),
        (lambda d: d["chains"].update({"01": d["chains"]["1"]}), "chains.01: chain table keys"),
        (lambda d: d["contracts"].pop("oracle"), "contracts.oracle: is required"),
        (lambda d: d["contracts"].update(escrow="0x12"), "contracts.escrow: must be an EIP-55"),
        (lambda d: d.pop("chains"), "^chains: is required"),
        (lambda d: d.update(extra=1), "^extra: unknown key"),
        (
            lambda d: d["chains"]["1"].update(contracts={"vault": "0x"}),
            "chains.1.contracts.vault: unknown key",
        ),
    ],
)
def test_validation_names_the_key_path(raw: dict[str, Any], edit: Any, message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        Registry.from_mapping(_broken(raw, edit))


def test_repr_is_a_summary() -> None:
    assert repr(default_registry()) == "Registry(chains=[1, 10, 130, 8453, 42161], tokens=17)"
