"""The guard for a swap route's transaction: Universal Router calldata against its quote.

:func:`check_swap_route` decodes the route's ``callData`` (:mod:`toolkit.codecs.universal_router`)
and checks it does what the answer of ``GET {swap_url}/{network}/v1/route`` says, for the
request that was made: the call goes to the router; it takes exactly ``amountIn`` of
``tokenIn`` from the caller (by allowance, or as ``value`` for the native coin, wrapped first)
and nothing else; every swap starts from the token it should; the proceeds go to the caller
only (no third-party recipient), in ``tokenOut``, with a minimum of ``minAmountOut`` (a
``SWEEP``, an ``UNWRAP_WETH`` for native output, or the single swap itself); ``minAmountOut``
does not exceed ``amountOut`` and, given ``slippage_bps``, is what the slippage allows; the
deadline has not passed. Re-exported by :mod:`toolkit.chain.guard`.

>>> from toolkit.codecs import universal_router as ur
>>> usdc, weth = ur.USDC, ur.WETH
>>> data = ur.encode_execute(
...     [ur.V3SwapExactIn(ur.MSG_SENDER, 10**6, 99, (usdc, 500, weth), True)], deadline=10
... )
>>> check_swap_route(ur.UNIVERSAL_ROUTER, data, token_in=usdc, token_out=weth, weth=weth,
...                  amount_in=10**6, amount_out=100, min_amount_out=99)
[]
>>> [str(f) for f in check_swap_route(ur.UNIVERSAL_ROUTER, data, token_in=usdc,
...  token_out=weth, weth=weth, amount_in=2 * 10**6, amount_out=100, min_amount_out=99)]
['error: callData: takes 1000000 of tokenIn from the caller, the quote is for 2000000']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from toolkit.chain.finding import Finding
from toolkit.codecs import universal_router as ur
from toolkit.codecs.errors import InvalidValue

__all__ = ["check_swap_route"]

_NATIVE: Final = "0x" + "00" * 20
_CALLER: Final = ur.MSG_SENDER.lower()
_ROUTER_SELF: Final = ur.ADDRESS_THIS.lower()


def _first_token(command: ur.V3SwapExactIn | ur.V2SwapExactIn) -> str:
    return str(command.path[0]).lower()


def _last_token(command: ur.V3SwapExactIn | ur.V2SwapExactIn) -> str:
    return str(command.path[-1]).lower()


def check_swap_route(
    target: str,
    call_data: str,
    *,
    token_in: str,
    token_out: str,
    weth: str,
    amount_in: int,
    amount_out: int,
    min_amount_out: int,
    value: int | None = None,
    slippage_bps: int | None = None,
    now: int | None = None,
    router: str = ur.UNIVERSAL_ROUTER,
) -> list[Finding]:
    """Findings about a route's transaction (module docstring); empty when it is sound.

    ``token_in``/``token_out`` as requested (the zero address for the native coin), ``weth``
    the chain's wrapped native coin, ``value`` the value the transaction will carry (checked
    when given), ``now`` a Unix time the deadline must not precede.
    """
    findings: list[Finding] = []
    token_in, token_out, weth = token_in.lower(), token_out.lower(), weth.lower()
    if target.lower() != router.lower():
        findings.append(Finding("target", f"is {target}, not the Universal Router {router}"))
    try:
        commands, deadline = ur.decode_execute(call_data)
    except InvalidValue as exc:
        return [*findings, Finding("callData", f"not a supported router call ({exc})")]
    if now is not None and deadline < now:
        findings.append(Finding("callData", f"deadline {deadline} has passed ({now})"))
    findings += _minimum_findings(amount_out, min_amount_out, slippage_bps)
    native_in, native_out = token_in == _NATIVE, token_out == _NATIVE
    start = weth if native_in else token_in
    end = weth if native_out else token_out
    swaps = [c for c in commands if isinstance(c, ur.V3SwapExactIn | ur.V2SwapExactIn)]
    if not swaps:
        findings.append(Finding("callData", "holds no swap"))
    findings += _funding_findings(commands, swaps, native_in, amount_in, value)
    findings += _recipient_findings(commands, swaps, start)
    findings += _delivery_findings(commands, swaps, native_out, end, min_amount_out)
    return findings


def _minimum_findings(
    amount_out: int, min_amount_out: int, slippage_bps: int | None
) -> list[Finding]:
    findings = []
    if min_amount_out > amount_out:
        findings.append(
            Finding("minAmountOut", f"{min_amount_out} is more than amountOut {amount_out}")
        )
    if slippage_bps is not None and min_amount_out != amount_out * (10_000 - slippage_bps) // (
        10_000
    ):
        findings.append(
            Finding("minAmountOut", f"{min_amount_out} is not amountOut less {slippage_bps} bps")
        )
    return findings


def _funding_findings(
    commands: Sequence[ur.Command],
    swaps: Sequence[ur.V3SwapExactIn | ur.V2SwapExactIn],
    native_in: bool,
    amount_in: int,
    value: int | None,
) -> list[Finding]:
    """How the input reaches the router: a native input wrapped first from the value sent, a
    token input pulled from the caller, exactly the quoted amount either way."""
    findings = []
    pulled = sum(c.amount_in for c in swaps if c.payer_is_user)
    wraps = [c for c in commands if isinstance(c, ur.WrapEth)]
    if native_in:
        if pulled:
            findings.append(Finding("callData", "pulls tokens from the caller for a native input"))
        if not wraps or commands[0] != wraps[0]:
            findings.append(Finding("callData", "does not wrap the native input first"))
        if value is not None and value != amount_in:
            findings.append(Finding("value", f"is {value}, the quote is for {amount_in}"))
    else:
        if pulled != amount_in:
            findings.append(
                Finding(
                    "callData",
                    f"takes {pulled} of tokenIn from the caller, the quote is for {amount_in}",
                )
            )
        if wraps:
            findings.append(Finding("callData", "wraps native coin for a token input"))
        if value:
            findings.append(Finding("value", f"is {value} for a token input"))
    return findings


def _recipient_findings(
    commands: Sequence[ur.Command],
    swaps: Sequence[ur.V3SwapExactIn | ur.V2SwapExactIn],
    start: str,
) -> list[Finding]:
    """Nothing taken from the caller but tokenIn, nothing paid to anyone but the caller or the
    router itself."""
    findings = []
    for command in swaps:
        if command.payer_is_user and _first_token(command) != start:
            findings.append(
                Finding("callData", f"takes {_first_token(command)} from the caller, not tokenIn")
            )
        if command.recipient.lower() not in (_CALLER, _ROUTER_SELF):
            findings.append(Finding("callData", f"pays a third party {command.recipient}"))
    for other in commands:
        if isinstance(other, ur.Sweep | ur.UnwrapWeth | ur.WrapEth) and (
            other.recipient.lower() not in (_CALLER, _ROUTER_SELF)
        ):
            findings.append(Finding("callData", f"pays a third party {other.recipient}"))
    return findings


def _delivery_findings(
    commands: Sequence[ur.Command],
    swaps: Sequence[ur.V3SwapExactIn | ur.V2SwapExactIn],
    native_out: bool,
    end: str,
    min_amount_out: int,
) -> list[Finding]:
    """The last command delivers tokenOut to the caller with the quote's minimum, and no swap
    pays the caller in another token."""
    findings = []
    last = commands[-1]
    minimum: int | None
    if native_out:
        delivered = isinstance(last, ur.UnwrapWeth) and last.recipient.lower() == _CALLER
        minimum = last.amount_min if isinstance(last, ur.UnwrapWeth) else None
    elif isinstance(last, ur.Sweep):
        delivered = last.token.lower() == end and last.recipient.lower() == _CALLER
        minimum = last.amount_min
    elif isinstance(last, ur.V3SwapExactIn | ur.V2SwapExactIn) and len(swaps) == 1:
        delivered = _last_token(last) == end and last.recipient.lower() == _CALLER
        minimum = last.amount_out_min
    else:
        delivered, minimum = False, None
    if not delivered:
        findings.append(Finding("callData", "does not deliver tokenOut to the caller"))
    elif minimum != min_amount_out:
        findings.append(
            Finding(
                "callData", f"guarantees {minimum}, the quote's minAmountOut is {min_amount_out}"
            )
        )
    for command in swaps:
        if command.recipient.lower() == _CALLER and _last_token(command) != end:
            findings.append(Finding("callData", f"pays the caller in {_last_token(command)}"))
    return findings
