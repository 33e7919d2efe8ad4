"""The log codec's fast path for plain static words agrees with eth_abi byte for byte, and
leaves to eth_abi (which refuses them) the values it does not take."""

from __future__ import annotations

from typing import Any

import eth_abi
import pytest
from eth_abi.exceptions import EncodingError
from eth_utils import to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.codecs import abi
from toolkit.codecs.events import EVENTS, encode_log

_PLAIN = {"address", "bool"} | {f"uint{n}" for n in range(8, 257, 8)}
STATIC = sorted(key for key, e in EVENTS.items() if all(t in _PLAIN for t, _, _ in e.params))

_addresses = st.binary(min_size=20, max_size=20).flatmap(
    lambda raw: st.sampled_from(
        ["0x" + raw.hex(), "0x" + raw.hex().upper(), to_checksum_address(raw)]
    )
)


def _value(type_: str) -> st.SearchStrategy[Any]:
    if type_ == "address":
        return _addresses
    if type_ == "bool":
        return st.booleans()
    bits = int(type_[4:])
    return st.integers(0, 2**bits - 1) | st.sampled_from([0, 2**bits - 1])


def _reference(key: str, args: tuple[Any, ...]) -> tuple[tuple[str, ...], str]:
    """eth_abi alone: each indexed value a word of its own, the rest one tuple."""
    event = EVENTS[key]
    topics = [event.topic0]
    plain: list[tuple[str, Any]] = []
    for (type_, _, indexed), value in zip(event.params, args, strict=True):
        if indexed:
            topics.append(abi.hexstr(eth_abi.encode([type_], [value])))
        else:
            plain.append((type_, value))
    data = eth_abi.encode([t for t, _ in plain], [v for _, v in plain])
    return tuple(topics), abi.hexstr(data)


@st.composite
def _emitted(draw: st.DrawFn) -> tuple[str, tuple[Any, ...]]:
    key = draw(st.sampled_from(STATIC))
    return key, tuple(draw(_value(t)) for t, _, _ in EVENTS[key].params)


def test_most_events_take_the_fast_path() -> None:
    assert {"erc20.Transfer", "erc20.Approval", "v2pair.Swap", "v2pair.Sync"} <= set(STATIC)


@settings(max_examples=300)
@given(_emitted())
def test_the_fast_path_gives_eth_abis_bytes(emitted: tuple[str, tuple[Any, ...]]) -> None:
    key, args = emitted
    assert encode_log(key, *args) == _reference(key, args)


@pytest.mark.parametrize(
    "args",
    [
        ("0x" + "11" * 20, "0x" + "22" * 20, -1),  # a negative uint256
        ("0x" + "11" * 20, "0x" + "22" * 20, 2**256),  # one past the largest
        ("0x" + "11" * 19, "0x" + "22" * 20, 5),  # 19 bytes
        ("0x" + "zz" * 20, "0x" + "22" * 20, 5),  # not hex
    ],
)
def test_values_outside_the_fast_path_are_refused_by_eth_abi(args: tuple[Any, ...]) -> None:
    with pytest.raises(EncodingError):
        encode_log("erc20.Transfer", *args)
