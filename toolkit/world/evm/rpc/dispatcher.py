"""The dispatcher: :class:`Rpc` answers a request or a batch (envelope checks, errors as
responses) and runs a method from the topic modules' tables at the clock's time.

Thread safety: :class:`Rpc` may be called from several threads (the server runs it off its
event loop). Each method of a batch runs under ``lock`` (the state's lock, shared with
whatever else reads or writes the chains), taken and released per method so that a long batch
never keeps other clients waiting for more than one method; parsing and encoding run outside it.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any, Final

from toolkit.clock import OffsetClock
from toolkit.world.evm.chains import Chains
from toolkit.world.evm.rpc import calls, development, fees, logs, state, transactions
from toolkit.world.evm.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_ERROR,
    RpcError,
)
from toolkit.world.evm.rpc.limits import (
    MAX_BATCH,
    MAX_RESPONSE_BYTES,
    RESPONSE_TOO_LARGE,
    TooDeep,
    loads,
)
from toolkit.world.evm.rpc.params import request_params
from toolkit.world.evm.rpc.registry import Call, Method

_log: Final = logging.getLogger("toolkit.world.evm.rpc")

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
    """The JSON-RPC dispatcher of a scenario's chains (see :mod:`toolkit.world.evm.rpc`)."""

    def __init__(
        self,
        chains: Chains,
        clock: OffsetClock,
        before: Callable[[float], object] | None = None,
        lock: contextlib.AbstractContextManager[object] | None = None,
    ) -> None:
        self.chains = chains
        self.clock = clock
        #: Held while a method runs (see the module docstring); none by default.
        self.lock: contextlib.AbstractContextManager[object] = lock or contextlib.nullcontext()
        #: Called with the time before every method runs, and again after a method that moved
        #: the clock (``evm_increaseTime``, ``evm_mine``, ...) with the new time: the service's
        #: relay (chain events to the world, the filler's fills and settlements).
        self.before = before

    # -- entry points ---------------------------------------------------------------------------

    def handle_bytes(self, chain_id: int, body: bytes, *, held: bool = False) -> bytes | None:
        """Answer a raw request body (None: nothing to answer, only notifications).

        The body's nesting is checked before it is decoded (-32600 past the limit); the answer
        is encoded one response at a time and capped (-32003 past ``MAX_RESPONSE_BYTES``).
        ``held``: the caller holds ``lock`` already (it is not taken again).
        """
        lock = contextlib.nullcontext() if held else self.lock
        try:
            payload = loads(body)
        except TooDeep as exc:
            return _encode(_error_response(None, RpcError(INVALID_REQUEST, str(exc))))
        except (ValueError, UnicodeDecodeError):
            return _encode(_error_response(None, RpcError(PARSE_ERROR, "parse error")))
        if not isinstance(payload, list):
            answer = self._one(chain_id, payload, lock)
            return None if answer is None else _capped(answer)
        if not payload or len(payload) > MAX_BATCH:
            return _encode(_error_response(None, _batch_error(len(payload))))
        parts: list[bytes] = []
        size = 2
        for item in payload:
            if size > MAX_RESPONSE_BYTES:  # past the cap: the rest is refused unrun, as in geth
                ident = item.get("id") if isinstance(item, dict) else None
                parts.append(_encode(_error_response(_valid_id(ident), _too_large())))
                continue
            answer = self._one(chain_id, item, lock)
            if answer is None:
                continue
            part = _encode(answer)
            if size + len(part) + 1 > MAX_RESPONSE_BYTES:
                size = MAX_RESPONSE_BYTES + 1
                part = _encode(_error_response(answer.get("id"), _too_large()))
            size += len(part) + 1
            parts.append(part)
        return b"[" + b",".join(parts) + b"]" if parts else None

    def handle(self, chain_id: int, payload: Any) -> Any:
        """Answer a request dict or a batch list (None when nothing is to be answered)."""
        if isinstance(payload, list):
            if not payload or len(payload) > MAX_BATCH:
                return _error_response(None, _batch_error(len(payload)))
            answers = [self._one(chain_id, item, self.lock) for item in payload]
            kept = [a for a in answers if a is not None]
            return kept or None
        return self._one(chain_id, payload, self.lock)

    def _one(
        self, chain_id: int, request: Any, lock: contextlib.AbstractContextManager[object]
    ) -> dict[str, Any] | None:
        if not isinstance(request, dict):
            return _error_response(None, RpcError(INVALID_REQUEST, "invalid request"))
        ident = request.get("id")
        notification = "id" not in request
        if (
            request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
            or not (ident is None or (isinstance(ident, str | int) and not isinstance(ident, bool)))
        ):
            return _error_response(_valid_id(ident), RpcError(INVALID_REQUEST, "invalid request"))
        try:
            with lock:
                result = self.call(chain_id, request["method"], request_params(request))
        except RpcError as exc:
            return None if notification else _error_response(ident, exc)
        except Exception as exc:  # a bug: still a JSON-RPC answer, never an HTTP 500
            # Logged by type only: the message may carry request data.
            _log.error("unexpected %s in %s", type(exc).__name__, request["method"])
            error = RpcError(INTERNAL_ERROR, "internal error")
            return None if notification else _error_response(ident, error)
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


def _valid_id(ident: Any) -> Any:
    return ident if isinstance(ident, str | int) and not isinstance(ident, bool) else None


def _batch_error(size: int) -> RpcError:
    if not size:
        return RpcError(INVALID_REQUEST, "empty batch")
    return RpcError(INVALID_REQUEST, f"batch too large: {size} requests (the limit is {MAX_BATCH})")


def _too_large() -> RpcError:
    return RpcError(
        RESPONSE_TOO_LARGE,
        f"response too large: the limit is {MAX_RESPONSE_BYTES} bytes per answer "
        "(ask for less: fewer blocks, a narrower range, a smaller batch)",
    )


def _encode(answer: Any) -> bytes:
    return json.dumps(answer, separators=(",", ":")).encode()


def _capped(answer: dict[str, Any]) -> bytes:
    part = _encode(answer)
    if len(part) > MAX_RESPONSE_BYTES:
        return _encode(_error_response(answer.get("id"), _too_large()))
    return part
