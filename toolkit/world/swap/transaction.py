"""A swap route as a transaction: the Universal Router calldata of a split route, the choice
of the candidate delivering most net of gas, and the simulation of the chosen call on the
unchanged state (:func:`toolkit.world.swap.find_route`)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Final

from toolkit.amm.routing import Hop, SplitRoute
from toolkit.amm.v2 import Pair
from toolkit.codecs import universal_router as ur
from toolkit.world.evm import gas
from toolkit.world.evm.contracts import Execution, Revert
from toolkit.world.evm.ledger import Ledger
from toolkit.world.evm.router import router_gas
from toolkit.world.evm.tokens import ERC20
from toolkit.world.swap.pricing import NoSwapRoute

__all__ = ["SIMULATION_SENDER", "best_net_of_gas", "simulate"]

#: The stand-in sender the route is simulated from.
SIMULATION_SENDER: Final = "0x" + "5e" * 20


def _commands(
    route: SplitRoute, token_out: str, native_in: bool, native_out: bool, min_out: int
) -> list[ur.Command]:
    commands: list[ur.Command] = []
    if native_in:
        commands.append(ur.WrapEth(ur.ADDRESS_THIS, ur.CONTRACT_BALANCE))
    segments_of = []
    for split in route.splits:
        segments: list[list[Hop]] = []
        for hop in split.path:
            v2 = isinstance(hop.venue.pool, Pair)
            if segments and isinstance(segments[-1][0].venue.pool, Pair) == v2:
                segments[-1].append(hop)
            else:
                segments.append([hop])
        segments_of.append((split.amount_in, segments))
    direct = len(segments_of) == 1 and len(segments_of[0][1]) == 1 and not native_out
    for amount_in, segments in segments_of:
        for j, segment in enumerate(segments):
            recipient = ur.MSG_SENDER if direct else ur.ADDRESS_THIS
            amount_min = min_out if direct else 0
            amount = amount_in if j == 0 else ur.CONTRACT_BALANCE
            from_user = j == 0 and not native_in
            if isinstance(segment[0].venue.pool, Pair):
                path = (segment[0].token_in, *(hop.token_out for hop in segment))
                commands.append(ur.V2SwapExactIn(recipient, amount, amount_min, path, from_user))
            else:
                v3: list[str | int] = [segment[0].token_in]
                for hop in segment:
                    pool = hop.venue.pool
                    assert not isinstance(pool, Pair)
                    v3 += [pool.fee, hop.token_out]
                commands.append(
                    ur.V3SwapExactIn(recipient, amount, amount_min, tuple(v3), from_user)
                )
    if native_out:
        commands.append(ur.UnwrapWeth(ur.MSG_SENDER, min_out))
    elif not direct:
        commands.append(ur.Sweep(token_out, ur.MSG_SENDER, min_out))
    return commands


def simulate(
    ledger: Ledger,
    router: str,
    data: str,
    token_in: str,
    token_out: str,
    amount_in: int,
    native_in: bool,
    native_out: bool,
    timestamp: int,
    number: int,
    *,
    expected: int,
) -> None:
    """Run the transaction from a funded stand-in sender and undo it; ``RuntimeError`` when it
    reverts or delivers other than ``expected`` (a route the search built must go through, and
    deliver its ``amountOut`` to the wei)."""
    state = ledger.state
    run = Execution(state, timestamp=timestamp, number=number)
    sender = SIMULATION_SENDER
    try:
        if native_in:
            run.write(state.balances, sender, state.balances.get(sender, 0) + amount_in)
        else:
            token = state.contracts[token_in]
            assert isinstance(token, ERC20)
            token.mint(run, sender, amount_in)
            run.write(token.allowances, (sender, router), amount_in)
        out_token = state.contracts[token_out]
        assert isinstance(out_token, ERC20)

        def holding() -> int:
            if native_out:
                return state.balances.get(sender, 0)
            return out_token.balances.get(sender, 0)

        before = holding()
        try:
            run.call(sender, router, bytes.fromhex(data[2:]), amount_in if native_in else 0)
        except Revert as exc:
            raise RuntimeError(f"the route's transaction reverted in simulation ({exc})") from exc
        delivered = holding() - before
    finally:
        run.rollback()
    if delivered != expected:
        raise RuntimeError(f"simulation delivered {delivered}, the route {expected}")


def best_net_of_gas(
    candidates: Sequence[SplitRoute],
    token_out: str,
    native_in: bool,
    native_out: bool,
    slippage_bps: int,
    call_deadline: int,
    base_fee: int,
    eth_price: Decimal,
) -> tuple[SplitRoute, str, int]:
    """The candidate delivering most after its gas (``base_fee`` wei per gas, ``eth_price``
    tokenOut per wei), with its router call data and gas; the first of equals."""
    best: tuple[Decimal, SplitRoute, str, int] | None = None
    for route in candidates:
        min_out = route.amount_out * (10_000 - slippage_bps) // 10_000
        commands = _commands(route, token_out, native_in, native_out, min_out)
        data = ur.encode_execute(commands, deadline=call_deadline)
        gas_used = gas.intrinsic(bytes.fromhex(data[2:])) + router_gas(commands)
        net = route.amount_out - Decimal(gas_used * base_fee) * eth_price
        if best is None or net > best[0]:
            best = (net, route, data, gas_used)
    if best is None:
        raise NoSwapRoute("no candidate route")
    return best[1], best[2], best[3]
