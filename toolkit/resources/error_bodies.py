"""Error bodies of the main surface and of the swap surface."""

from __future__ import annotations

from toolkit.resources.base import Resource
from toolkit.resources.types import Int, RequestId

__all__ = ["ErrorBody", "SwapErrorBody"]


class ErrorBody(Resource):
    """Main-surface error: ``{error, debug?}``.

    >>> ErrorBody(error="no route", debug="eip155:1 -> eip155:10").to_wire()["debug"]
    'eip155:1 -> eip155:10'
    """

    error: str
    debug: str | None = None


class SwapErrorBody(Resource):
    """Swap-surface error: ``{code, requestId, error}``; ``requestId`` repeats the header.

    >>> SwapErrorBody(code=404, request_id="0x" + "00" * 16, error="no route").code
    404
    """

    code: Int
    request_id: RequestId
    error: str
