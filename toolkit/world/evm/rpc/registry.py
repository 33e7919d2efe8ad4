"""What a method is: a function of the dispatcher (:class:`Host`), one request's context
(:class:`Call`) and the params; each topic module keeps its methods in a table of its own
(:func:`registrar`), which the dispatcher joins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from toolkit.clock import OffsetClock
from toolkit.world.evm.chains import Chains
from toolkit.world.evm.ledger import Ledger


class Host(Protocol):
    """What a method reads of the dispatcher (:class:`~toolkit.world.evm.rpc.Rpc`)."""

    chains: Chains
    clock: OffsetClock


class Call:
    """One request's context: the chain, its ledger and the time."""

    __slots__ = ("chain_id", "ledger", "now")

    def __init__(self, chain_id: int, ledger: Ledger, now: float) -> None:
        self.chain_id = chain_id
        self.ledger = ledger
        self.now = now


Method = Callable[[Host, Call, list[Any]], Any]


def registrar(table: dict[str, Method]) -> Callable[..., Callable[[Method], Method]]:
    """A decorator that enters a method in ``table`` under each of the names it is given."""

    def method(*names: str) -> Callable[[Method], Method]:
        def register(fn: Method) -> Method:
            for name in names:
                table[name] = fn
            return fn

        return register

    return method
