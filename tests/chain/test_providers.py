"""The providers' refusals: every message of the table is read as its kind, by the chain
collector's range check too, and a rate limit is never taken for a range to halve."""

from __future__ import annotations

import re

import pytest

from toolkit.chain.providers import PROVIDER_MESSAGES, ProviderMessage, refusal_kind
from toolkit.collect.rpc import RpcFailure, range_too_large


@pytest.mark.parametrize("entry", PROVIDER_MESSAGES, ids=lambda m: f"{m.provider}-{m.kind}")
def test_every_message_of_the_table_is_read_as_its_kind(entry: ProviderMessage) -> None:
    message, data = entry.text(first=0x1000, last=0x17FF, allowed=3000)
    assert refusal_kind(entry.code, message, data) == entry.kind
    refused = RpcFailure("eth_getLogs", entry.code, message, data)
    assert range_too_large(refused) is (entry.kind != "rate")


@pytest.mark.parametrize("entry", PROVIDER_MESSAGES, ids=lambda m: f"{m.provider}-{m.kind}")
def test_every_message_names_where_it_was_found(entry: ProviderMessage) -> None:
    assert entry.sources
    for source in entry.sources:
        assert re.match(r"https://\S+|github\.com/[\w.-]+/[\w.-]+ \S+ @[0-9a-f]{8}", source)
    assert entry.http_status in (200, 413, 429)


def test_answers_that_are_no_refusal_are_left_alone() -> None:
    for code, message in (
        (3, "execution reverted"),
        (-32602, "invalid argument 0: hex string without 0x prefix"),
        (-32000, "header not found"),
        (-32601, "the method eth_foo does not exist/is not available"),
    ):
        assert refusal_kind(code, message) is None
        assert not range_too_large(RpcFailure("eth_getLogs", code, message))


def test_a_rate_limit_is_read_before_a_size_refusal_that_shares_its_code() -> None:
    # Infura answers both with -32005: the words decide.
    assert refusal_kind(-32005, "daily request count exceeded, request rate limited") == "rate"
    assert refusal_kind(-32005, "query returned more than 10000 results") == "size"
    assert refusal_kind(-32005, "limit exceeded") == "size"
