import dataclasses
import pickle
from pathlib import Path

import pytest

from toolkit.scenario import (
    API_KEY_ENV,
    SIGNER_KEY_ENV,
    ScenarioError,
    Secret,
    apply_environment,
    load_scenario,
    read_scenario,
    scenario_names,
    scenario_path,
)

OTHER_KEY = "0x" + "ab" * 32


def test_shipped_scenarios_are_listed():
    assert {"default", "single-pool"} <= set(scenario_names())


def test_default_onboards_usdc_and_weth_between_every_ordered_pair():
    s = load_scenario("default")
    chains = {1, 10, 8453, 42161}
    assert {c.id for c in s.chains} == chains
    expected = {(a, b, t) for a in chains for b in chains if a != b for t in ("USDC", "WETH")}
    assert {(r.src, r.dst, r.token) for r in s.routes} == expected


def test_default_pool_sizes_are_realistic():
    s = load_scenario("default")
    for pool in s.pools:
        decimals = s.token(pool.chain, pool.token).decimals
        whole = pool.balance // 10**decimals
        if pool.token == "USDC":
            assert 500_000 <= whole <= 10_000_000
        else:
            assert 100 <= whole <= 1_000


def test_single_pool_has_one_route_one_pool_one_tier():
    s = load_scenario("single-pool")
    assert len(s.routes) == 1 and len(s.pools) == 1
    assert len(s.routes[0].fee_tiers) == 1
    assert s.pools[0].balance == 15 * 1_000 * 10**6


def test_a_path_works_like_a_name(tmp_path: Path):
    copy = tmp_path / "mine.toml"
    copy.write_bytes(scenario_path("single-pool").read_bytes())
    assert load_scenario(copy) == load_scenario("single-pool")
    assert load_scenario(str(copy)).name == "single-pool"


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(
        ScenarioError, match=r"scenario: no scenario named 'nope' \(known: .*default"
    ):
        load_scenario("nope")


def test_missing_file_is_named(tmp_path: Path):
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "absent.toml")


def test_invalid_toml_names_the_file(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(ScenarioError, match=r"^bad.toml: \(document\): invalid TOML"):
        load_scenario(bad)


def test_errors_from_a_file_carry_its_name(tmp_path: Path):
    bad = tmp_path / "broken.toml"
    text = scenario_path("single-pool").read_text().replace("15_000_000_000", "0", 1)
    bad.write_text(text)
    with pytest.raises(ScenarioError) as info:
        read_scenario(bad)
    assert str(info.value) == "broken.toml: pools[0].balance: must be a positive integer"
    assert info.value.path == "pools[0].balance"


def test_api_key_defaults_to_demo_key():
    s = load_scenario("default")
    assert s.auth.accepts("demo-key")
    assert not s.auth.accepts("other")
    assert not s.auth.accepts(None)  # type: ignore[arg-type]


def test_environment_replaces_api_keys():
    s = load_scenario("default", env={API_KEY_ENV: " k1 , k2 "})
    assert s.auth.accepts("k1") and s.auth.accepts("k2")
    assert not s.auth.accepts("demo-key")


def test_blank_environment_values_are_ignored():
    base = read_scenario("default")
    assert apply_environment(base, {API_KEY_ENV: "", SIGNER_KEY_ENV: ""}) is base


def test_api_key_variable_of_commas_only_is_rejected():
    with pytest.raises(ScenarioError, match="TOOLKIT_API_KEY: must hold at least one"):
        load_scenario("default", env={API_KEY_ENV: " , "})


def test_environment_replaces_the_signer_key():
    s = load_scenario("default", env={SIGNER_KEY_ENV: OTHER_KEY})
    assert s.auth.signer_key.reveal() == OTHER_KEY
    assert read_scenario("default").auth.signer_key.reveal() != OTHER_KEY


def test_a_bad_signer_key_is_rejected_without_echoing_it():
    secret = "0x" + "zz" * 32
    with pytest.raises(ScenarioError) as info:
        load_scenario("default", env={SIGNER_KEY_ENV: secret})
    assert str(info.value).startswith("TOOLKIT_SIGNER_KEY: must be")
    assert secret not in str(info.value)
    zero = "0x" + "00" * 32
    with pytest.raises(ScenarioError, match="not a valid secp256k1 private key"):
        load_scenario("default", env={SIGNER_KEY_ENV: zero})


def test_secrets_never_appear_in_reprs():
    s = load_scenario("default", env={API_KEY_ENV: "super-secret-key"})
    key = s.auth.signer_key.reveal()
    text = repr(s) + str(s) + repr(s.auth)
    assert "super-secret-key" not in text and key not in text and key[2:] not in text
    assert "Secret('***')" in text


def test_secret_behaviour():
    secret = Secret("abc")
    assert repr(secret) == str(secret) == "Secret('***')"
    assert secret == Secret("abc") and secret != Secret("abd")
    assert hash(secret) == hash(Secret("abc"))
    assert secret.matches("abc") and not secret.matches(b"abc")  # type: ignore[arg-type]
    assert pickle.loads(pickle.dumps(secret)) == secret
    with pytest.raises(ValueError, match="secret: must be a non-empty string"):
        Secret("")


def test_scenarios_are_frozen_and_hashable_apart_from_their_index():
    s = load_scenario("single-pool")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.name = "x"  # type: ignore[misc]
    assert s == load_scenario("single-pool")


def test_scenarios_pickle_for_process_pools():
    s = load_scenario("default", env={API_KEY_ENV: "k"})
    copy = pickle.loads(pickle.dumps(s))
    assert copy == s and copy.route(1, 10, "USDC") == s.route(1, 10, "USDC")
    assert copy.auth.accepts("k")
