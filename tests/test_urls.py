"""The one URL-redaction policy: a table of URLs and their shown forms, and no secret in any
client's repr or error, whatever the secret."""

from __future__ import annotations

import asyncio
import string

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.client import (
    AsyncServiceClient,
    ServiceClient,
    SwapClient,
    Target,
    TargetError,
    chain_web3,
)
from toolkit.store import StoreError, stored_url
from toolkit.urls import MASK, UrlError, has_credentials, redact_url, shown_url

INFURA = "9aa3d95b3bc440fa88ea12eaa4456161"
ALCHEMY = "Hc2OUlzTGL5V4Ve_vGWEJ8_mC2ZU3tc7"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://host", "https://host"),
        ("https://onlyuser@host/x", "https://host/x"),
        ("https://user:secretpw@host/swap", "https://host/swap"),
        (
            "https://u:p@host:8443/a/b?chain=1&api_key=k&X-Auth-Token=t#frag",
            "https://host:8443/a/b?chain=1&api_key=***&X-Auth-Token=***#frag",
        ),
        ("http://[::1]:8080/x?token=secret&page=2", "http://[::1]:8080/x?token=***&page=2"),
        ("wss://host/stream#access_token=abc&view=1", "wss://host/stream#access_token=***&view=1"),
        # Node providers keep the key in the path.
        (f"https://mainnet.infura.io/v3/{INFURA}", "https://mainnet.infura.io/v3/***"),
        (
            f"https://base-mainnet.g.alchemy.com/v2/{ALCHEMY}",
            "https://base-mainnet.g.alchemy.com/v2/***",
        ),
        ("https://node.example/v2/k3y", "https://node.example/v2/***"),
        (f"https://name.quiknode.pro/{INFURA}/", "https://name.quiknode.pro/***/"),
        ("https://rpc.example/eth/" + "ab12" * 16, "https://rpc.example/eth/***"),
        # What is not a credential stays as it is: service paths, chain ids, addresses.
        ("http://embedded-ab12.invalid/rpc/8453", "http://embedded-ab12.invalid/rpc/8453"),
        ("http://127.0.0.1:8700/swap", "http://127.0.0.1:8700/swap"),
        ("https://h/credit/0x" + "11" * 20, "https://h/credit/0x" + "11" * 20),
        (
            "https://h/liquidity/protocol/partner-escrow",
            "https://h/liquidity/protocol/partner-escrow",
        ),
        ("https://h/x?chain=1&tokenIn=0xab&q=a%20b", "https://h/x?chain=1&tokenIn=***&q=a%20b"),
    ],
)
def test_redacted_forms(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(shown) == shown  # redaction is idempotent
    assert not has_credentials(shown)
    assert has_credentials(url) == (url != shown)


@pytest.mark.parametrize("url", ["", "host/path", "user:pass@host/x", "https://host:nope/x"])
def test_what_is_not_an_absolute_url_is_refused_naming_the_field(url: str) -> None:
    with pytest.raises(UrlError, match=r"^rpc_url: "):
        redact_url(url, field="rpc_url")
    with pytest.raises(StoreError, match=r"^target_url: "):
        stored_url(url)
    assert shown_url(url) == "<invalid URL>" or url == ""


def test_a_malformed_url_is_refused_without_quoting_it() -> None:
    with pytest.raises(UrlError) as caught:
        redact_url("https://user:s3cret@host:99999999/x")
    assert "s3cret" not in str(caught.value)


_SECRET = st.text(string.ascii_letters + string.digits, min_size=8, max_size=40).filter(
    lambda s: any(c.isdigit() for c in s)
)
_PLACES = {
    "userinfo": "https://analyst:{s}@svc.example/api",
    "query": "https://svc.example/api?chain=1&apiKey={s}",
    "path": "https://node.example/v3/{s}",
    "fragment": "https://svc.example/cb#access_token={s}",
}


@settings(max_examples=60, deadline=None)
@given(secret=_SECRET, place=st.sampled_from(sorted(_PLACES)))
def test_no_secret_survives_redaction(secret: str, place: str) -> None:
    url = _PLACES[place].format(s=secret)
    shown = redact_url(url)
    assert secret not in shown
    assert MASK in shown or place == "userinfo"
    assert not has_credentials(shown)


def _async_mock() -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(200))


def _mock() -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(500, text="down"))


@settings(max_examples=25, deadline=None)
@given(secret=_SECRET)
def test_no_client_repr_shows_a_secret(secret: str) -> None:
    service_url = f"https://analyst:{secret}@svc.example/api"
    node_url = f"https://node.example/v3/{secret}"
    with ServiceClient(service_url, env={}, transport=_mock()) as client:
        assert secret not in repr(client) and secret not in client.base_url
    with SwapClient(service_url, env={}, transport=_mock()) as swaps:
        assert secret not in repr(swaps) and secret not in swaps.url
    provider = chain_web3(8453, url=node_url).provider
    assert secret not in repr(provider) and secret not in provider.public_url  # type: ignore[attr-defined]
    target = Target.load(env={"TOOLKIT_BASE_URL": service_url, "TOOLKIT_RPC_URL_8453": node_url})
    assert secret not in repr(target)
    assert all(secret not in value for _, value in target.describe())
    aclient = AsyncServiceClient(service_url, env={}, transport=_async_mock())
    try:
        assert secret not in repr(aclient)
    finally:
        asyncio.run(aclient.aclose())


@settings(max_examples=25, deadline=None)
@given(secret=_SECRET)
def test_no_client_error_shows_a_secret(secret: str) -> None:
    with pytest.raises(TargetError) as bad:
        ServiceClient(f"ftp://analyst:{secret}@svc.example", env={})
    assert secret not in str(bad.value)
    with pytest.raises(TargetError) as partial:
        Target.load(env={"TOOLKIT_BASE_URL": f"https://svc.example/v2/{secret}"}).require("swap")
    assert secret not in str(partial.value)
