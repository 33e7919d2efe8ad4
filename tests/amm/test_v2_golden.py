"""V2 against Uniswap's own test vectors.

- Uniswap/v2-core ``test/UniswapV2Pair.spec.ts`` (commit 00873c4a3226d2d58c44d5f9c317a23d00ef15c2):
  the ``getInputPrice`` table ``[swapAmount, token0Amount, token1Amount, expectedOutputAmount]``
  (7 rows; one more wei reverts 'UniswapV2: K'), the ``optimistic`` table (4 rows), and
  ``swap:token0`` / ``swap:token1``.
- Uniswap/v2-periphery ``test/UniswapV2Router02.spec.ts`` (commit
  5a8eb440293986a324b9b6c85c08128e8041ba4f): ``getAmountOut``/``getAmountIn`` values and reverts;
  ``test/UniswapV2Router01.spec.ts`` (commit 1d6faef5df111b576e2cdf118573c2d0da5dcd57):
  ``swapTokensForExactTokens`` (557227237267357629 in for 1e18 out of 5e18/10e18).
"""

from __future__ import annotations

import pytest

from toolkit.amm import AmmError
from toolkit.amm.v2 import Pair, get_amount_in, get_amount_out
from toolkit.arguments import ArgumentError

E18 = 10**18

GET_INPUT_PRICE = [
    (1 * E18, 5 * E18, 10 * E18, 1662497915624478906),
    (1 * E18, 10 * E18, 5 * E18, 453305446940074565),
    (2 * E18, 5 * E18, 10 * E18, 2851015155847869602),
    (2 * E18, 10 * E18, 5 * E18, 831248957812239453),
    (1 * E18, 10 * E18, 10 * E18, 906610893880149131),
    (1 * E18, 100 * E18, 100 * E18, 987158034397061298),
    (1 * E18, 1000 * E18, 1000 * E18, 996006981039903216),
]


@pytest.mark.parametrize(("swap", "reserve0", "reserve1", "expected"), GET_INPUT_PRICE)
def test_get_input_price(swap: int, reserve0: int, reserve1: int, expected: int) -> None:
    assert get_amount_out(swap, reserve0, reserve1) == expected
    pair = Pair(reserve0, reserve1)
    with pytest.raises(AmmError, match="UniswapV2: K"):
        pair.swap_raw(amount0_in=swap, amount1_out=expected + 1)
    pair.swap_raw(amount0_in=swap, amount1_out=expected)
    assert (pair.reserve0, pair.reserve1) == (reserve0 + swap, reserve1 - expected)


OPTIMISTIC = [  # [outputAmount, token0Amount, token1Amount, inputAmount]
    (997000000000000000, 5 * E18, 10 * E18, 1 * E18),
    (997000000000000000, 10 * E18, 5 * E18, 1 * E18),
    (997000000000000000, 5 * E18, 5 * E18, 1 * E18),
    (1 * E18, 5 * E18, 5 * E18, 1003009027081243732),
]


@pytest.mark.parametrize(("output", "reserve0", "reserve1", "input_"), OPTIMISTIC)
def test_optimistic(output: int, reserve0: int, reserve1: int, input_: int) -> None:
    # token0 is sent in and taken back out: only the fee stays
    pair = Pair(reserve0, reserve1)
    with pytest.raises(AmmError, match="UniswapV2: K"):
        pair.swap_raw(amount0_in=input_, amount0_out=output + 1)
    pair.swap_raw(amount0_in=input_, amount0_out=output)


def test_swap_token0_and_token1() -> None:
    pair = Pair(5 * E18, 10 * E18)
    assert pair.swap(E18, zero_for_one=True) == 1662497915624478906
    assert (pair.reserve0, pair.reserve1) == (6 * E18, 10 * E18 - 1662497915624478906)
    pair = Pair(5 * E18, 10 * E18)
    assert pair.swap(E18, zero_for_one=False) == 453305446940074565
    assert (pair.reserve0, pair.reserve1) == (5 * E18 - 453305446940074565, 11 * E18)


def test_router_get_amount_out_and_in() -> None:
    assert get_amount_out(2, 100, 100) == 1
    assert get_amount_in(1, 100, 100) == 2
    pair = Pair(5 * E18, 10 * E18)
    assert pair.get_amount_in(E18, zero_for_one=True) == 557227237267357629
    assert pair.swap_for_exact(E18, zero_for_one=True) == 557227237267357629
    assert (pair.reserve0, pair.reserve1) == (5 * E18 + 557227237267357629, 9 * E18)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: get_amount_out(0, 100, 100), "UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT"),
        (lambda: get_amount_out(2, 0, 100), "UniswapV2Library: INSUFFICIENT_LIQUIDITY"),
        (lambda: get_amount_out(2, 100, 0), "UniswapV2Library: INSUFFICIENT_LIQUIDITY"),
        (lambda: get_amount_in(0, 100, 100), "UniswapV2Library: INSUFFICIENT_OUTPUT_AMOUNT"),
        (lambda: get_amount_in(1, 0, 100), "UniswapV2Library: INSUFFICIENT_LIQUIDITY"),
        (lambda: get_amount_in(1, 100, 0), "UniswapV2Library: INSUFFICIENT_LIQUIDITY"),
        (lambda: get_amount_out(2**250, 1, 1), "ds-math-mul-overflow"),
        (lambda: Pair(10, 10).swap_raw(amount0_in=1), "UniswapV2: INSUFFICIENT_OUTPUT_AMOUNT"),
        (lambda: Pair(10, 10).swap_raw(amount1_out=10), "UniswapV2: INSUFFICIENT_LIQUIDITY"),
        (lambda: Pair(10, 10).swap_raw(amount1_out=1), "UniswapV2: INSUFFICIENT_INPUT_AMOUNT"),
    ],
)
def test_reverts(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(AmmError) as raised:
        call()
    assert str(raised.value) == message


def test_bad_arguments() -> None:
    with pytest.raises(ArgumentError, match="reserve0: must be a uint112"):
        Pair(2**112, 1)
    with pytest.raises(ArgumentError, match="amount_in"):
        get_amount_out(-1, 100, 100)
    with pytest.raises(ArgumentError, match="fee_bps"):
        get_amount_out(1, 100, 100, fee_bps=10_000)


def test_other_fees_round_the_same_way() -> None:
    assert get_amount_out(100, 10_000, 10_000, fee_bps=5) == (100 * 9995 * 10_000) // (
        10_000 * 10_000 + 100 * 9995
    )
    assert get_amount_out(10**6, 10**12, 10**12, fee_bps=0) == 10**18 // (10**12 + 10**6)
