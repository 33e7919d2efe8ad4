"""The dispatcher: :class:`Rpc` answers a request or a batch (envelope checks, errors as
responses) and runs a method from the topic modules' tables at the clock's time."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from toolkit.world.chain.chains import Chains
from toolkit.world.chain.rpc import calls, development, fees, logs, state, transactions
from toolkit.world.chain.rpc.clocks import DevClock
from toolkit.world.chain.rpc.errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_ERROR,
    RpcError,
)
from toolkit.world.chain.rpc.params import request_params
from toolkit.world.chain.rpc.registry import Call, Method

MAX_BATCH: Final = 1000

#: Every method by name, in the order they are listed in the package docstring.
METHODS: Final[dict[str, Method]] = {
    **state.METHODS,
    **calls.METHODS,
    **fees.METHODS,
    **transactions.METHODS,
    **logs.METHODS,
    **development.METHODS,
}


class Rpc:
    """The JSON-RPC dispatcher of a scenario's chains (see :mod:`toolkit.world.chain.rpc`)."""

    def __init__(
        self, chains: Chains, clock: DevClock, before: Callable[[float], object] | None = None
    ) -> None:
        self.chains = chains
        self.clock = clock
        #: Called with the time before every method runs, and again after a method that moved
        #: the clock (``evm_increaseTime``, ``evm_mine``, ...) with the new time: the service's
        #: relay (chain events to the world, the filler's fills and settlements).
        self.before = before

    # -- entry points ---------------------------------------------------------------------------

    def handle_bytes(self, chain_id: int, body: bytes) -> bytes | None:
        """Answer a raw request body (None: nothing to answer, only notifications)."""
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            response: Any = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": PARSE_ERROR, "message": "parse error"},
            }
        else:
            response = self.handle(chain_id, payload)
        if response is None:
            return None
        return json.dumps(response, separators=(",", ":")).encode()

    def handle(self, chain_id: int, payload: Any) -> Any:
        """Answer a request dict or a batch list (None when nothing is to be answered)."""
        if isinstance(payload, list):
            if not payload:
                return _error_response(None, RpcError(INVALID_REQUEST, "empty batch"))
            if len(payload) > MAX_BATCH:
                return _error_response(
                    None, RpcError(INVALID_REQUEST, f"batch too large (max {MAX_BATCH})")
                )
            answers = [self._one(chain_id, item) for item in payload]
            kept = [a for a in answers if a is not None]
            return kept or None
        return self._one(chain_id, payload)

    def _one(self, chain_id: int, request: Any) -> dict[str, Any] | None:
        if not isinstance(request, dict):
            return _error_response(None, RpcError(INVALID_REQUEST, "invalid request"))
        ident = request.get("id")
        notification = "id" not in request
        if (
            request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
            or not (ident is None or (isinstance(ident, str | int) and not isinstance(ident, bool)))
        ):
            return _error_response(
                None if not isinstance(ident, str | int) else ident,
                RpcError(INVALID_REQUEST, "invalid request"),
            )
        try:
            result = self.call(chain_id, request["method"], request_params(request))
        except RpcError as exc:
            return None if notification else _error_response(ident, exc)
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def call(self, chain_id: int, method: str, params: list[Any]) -> Any:
        """Run one method; :class:`RpcError` on failure (nothing changed)."""
        fn = METHODS.get(method)
        if fn is None:
            raise RpcError(METHOD_NOT_FOUND, f"the method {method} does not exist/is not available")
        try:
            ledger = self.chains.ledger(chain_id)
        except KeyError:
            raise RpcError(SERVER_ERROR, f"chain {chain_id} is not in the scenario") from None
        now = self.clock.now()
        if self.before is not None:
            self.before(now)
        result = fn(self, Call(chain_id, ledger, now), params)
        if self.before is not None:
            after = self.clock.now()
            if after != now:  # the method moved the clock: what fell due acts at once
                self.before(after)
        return result


def _error_response(ident: Any, exc: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": exc.body()}
