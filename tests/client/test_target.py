"""The one target configuration: environment and profile, validation, masking, the rule that
nothing falls back to the simulator, and credentials never shown."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest

from toolkit.client import (
    AsyncServiceClient,
    NoTarget,
    ServiceClient,
    SwapClient,
    Target,
    TargetError,
)

SERVED = {"TOOLKIT_BASE_URL": "http://127.0.0.1:8700", "TOOLKIT_API_KEY": "k-1"}


def test_every_variable_is_read_and_keys_are_masked() -> None:
    env = {
        **SERVED,
        "TOOLKIT_SWAP_URL": "https://desk:pw-9@swap.example/",
        "TOOLKIT_SWAP_USERNAME": "desk",
        "TOOLKIT_SWAP_API_KEY": "sk-2",
        "TOOLKIT_CREDIT_URL": "https://credit.example",
        "TOOLKIT_RPC_URL_8453": "https://node.example/v2/node-key",
    }
    target = Target.load(env=env)
    assert target.kind == "served"
    assert target.require("credit") == "https://credit.example"
    assert target.rpc(8453) == "https://node.example/v2/node-key"
    shown = dict(target.describe())
    assert shown["TOOLKIT_API_KEY"] == "*** (set)"
    assert shown["TOOLKIT_SWAP_URL"] == "https://swap.example"
    assert shown["TOOLKIT_RPC_URL_8453"] == "https://node.example/v2/***"
    for secret in ("k-1", "sk-2", "pw-9", "node-key"):
        assert secret not in repr(target)


def test_a_profile_is_read_and_the_environment_wins(tmp_path: Path) -> None:
    profile = tmp_path / "desk.toml"
    profile.write_text(
        '[target]\nbase_url = "https://svc.example"\nswap_url = "https://swap.example"\n'
        '[target.rpc_urls]\n1 = "https://eth.example"\n'
    )
    target = Target.load(env={"TOOLKIT_PROFILE": str(profile)})
    assert (target.kind, target.swap_url, target.rpc(1)) == (
        "real",
        "https://swap.example",
        "https://eth.example",
    )
    over = Target.load(profile=profile, env={"TOOLKIT_BASE_URL": "http://localhost:9"})
    assert over.base_url == "http://localhost:9" and over.kind == "served"
    profile.write_text('[target]\nbase = "x"\n')
    with pytest.raises(TargetError, match=r"--profile: \[target\] has unknown keys base"):
        Target.load(profile=profile, env={})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TOOLKIT_BASE_URL": "ftp://h"}, "TOOLKIT_BASE_URL: must be an absolute http(s) URL"),
        ({"TOOLKIT_RPC_URL_x": "http://h"}, "TOOLKIT_RPC_URL_x: the suffix must be a chain id"),
        ({"TOOLKIT_RPC_URL_1": "node"}, "TOOLKIT_RPC_URL_1: must be an absolute http(s) URL"),
    ],
)
def test_bad_values_name_their_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(TargetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Target.load(env=env)


def test_embedded_is_named_and_takes_no_url() -> None:
    assert Target.load(env={}, embedded=True).kind == "embedded"
    with pytest.raises(TargetError, match="--embedded: the simulated service takes no URL"):
        Target.load(env=SERVED, embedded=True)


def test_no_target_says_how_to_choose_and_nothing_starts() -> None:
    for build in (
        lambda: ServiceClient(env={}),
        lambda: AsyncServiceClient(env={}),
        lambda: SwapClient(env={}),
    ):
        with pytest.raises(NoTarget) as caught:
            build()
        text = str(caught.value)
        assert "TOOLKIT_BASE_URL" in text and "--embedded" in text
        assert "embedded=True" in text


def test_a_surface_left_unconfigured_is_an_error_naming_its_variable() -> None:
    with pytest.raises(TargetError, match="TOOLKIT_SWAP_URL: not set, while TOOLKIT_BASE_URL"):
        SwapClient(env=SERVED)


def test_credentials_in_a_url_are_used_and_never_shown() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404, json={"code": 404, "requestId": "r", "error": "no path"})

    client = SwapClient("https://user:secretpw@host/swap", transport=httpx.MockTransport(handler))
    assert repr(client) == "SwapClient('https://host/swap', api_key=Secret('***'))"
    assert client.url == "https://host/swap"
    with pytest.raises(Exception) as caught:
        client.route("base", amount_in=1, token_in="0x" + "11" * 20, token_out="0x" + "22" * 20)
    assert "secretpw" not in str(caught.value)
    assert (
        seen[0].headers["authorization"] == "Basic " + base64.b64encode(b"user:secretpw").decode()
    )
    assert "secretpw" not in str(seen[0].url)
    service = ServiceClient("https://a:b-pass@svc.example", transport=httpx.MockTransport(handler))
    assert "b-pass" not in repr(service) and service.base_url == "https://svc.example"


def test_the_embedded_service_is_an_explicit_choice() -> None:
    with ServiceClient(embedded=True, env={}) as client:
        assert client.embedded is not None
        assert client.health().status == "ok"
    with SwapClient(embedded=True, env={}) as swaps:
        assert swaps.url.endswith(".invalid/swap")
