"""v3 libraries against v3-core's own spec files (Uniswap/v3-core).

- ``test/TickMath.spec.ts`` (commit cb66ac217c67b8f12b6ac9e48d2a00a144c07107) and its snapshot
  ``test/__snapshots__/TickMath.spec.ts.snap`` (commit e1f8fe58d3e340e05df848c0ee4a6361a92056ee);
- ``test/SqrtPriceMath.spec.ts`` (commit a5975eb3c8a6706d60fb924fc452eaef09c0f43e);
- ``test/SwapMath.spec.ts`` (commit f224ad3d9714d17022ba2239741031405424d0ac).
"""

from __future__ import annotations

import pytest

from tests.amm.prices import encode_price_sqrt
from toolkit.amm import AmmError
from toolkit.amm.v3 import (
    MAX_SQRT_RATIO,
    MAX_TICK,
    MIN_SQRT_RATIO,
    MIN_TICK,
    add_delta,
    compute_swap_step,
    get_amount0_delta,
    get_amount1_delta,
    get_next_sqrt_price_from_input,
    get_next_sqrt_price_from_output,
    get_sqrt_ratio_at_tick,
    get_tick_at_sqrt_ratio,
    mul_div,
    mul_div_rounding_up,
    to_int128,
    to_int256,
    to_uint160,
)
from toolkit.arguments import ArgumentError

E18 = 10**18
MAX_UINT128 = 2**128 - 1
MAX_UINT256 = 2**256 - 1

# -- TickMath ---------------------------------------------------------------------------------

SQRT_RATIO_SNAPSHOT = {
    -50: 79030349367926598376800521322,
    -100: 78833030112140176575862854579,
    -250: 78244023372248365697264290337,
    -500: 77272108795590369356373805297,
    -1000: 75364347830767020784054125655,
    -2500: 69919044979842180277688105136,
    -3000: 68192822843687888778582228483,
    -4000: 64867181785621769311890333195,
    -5000: 61703726247759831737814779831,
    -50000: 6504256538020985011912221507,
    -150000: 43836292794701720435367485,
    -250000: 295440463448801648376846,
    -500000: 1101692437043807371,
    -738203: 7409801140451,
    50: 79426470787362580746886972461,
    100: 79625275426524748796330556128,
    250: 80224679980005306637834519095,
    500: 81233731461783161732293370115,
    1000: 83290069058676223003182343270,
    2500: 89776708723587163891445672585,
    3000: 92049301871182272007977902845,
    4000: 96768528593268422080558758223,
    5000: 101729702841318637793976746270,
    50000: 965075977353221155028623082916,
    150000: 143194173941309278083010301478497,
    250000: 21246587762933397357449903968194344,
    500000: 5697689776495288729098254600827762987878,
    738203: 847134979253254120489401328389043031315994541,
    # the spec's hand-written cases
    MIN_TICK: 4295128739,
    MIN_TICK + 1: 4295343490,
    MAX_TICK - 1: 1461373636630004318706518188784493106690254656249,
    MAX_TICK: 1461446703485210103287273052203988822378723970342,
}

TICK_SNAPSHOT = {
    4295128739: -887272,
    79228162514264337593543: -276325,
    79228162514264337593543950: -138163,
    9903520314283042199192993792: -41591,
    28011385487393069959365969113: -20796,
    56022770974786139918731938227: -6932,
    79228162514264337593543950336: 0,
    112045541949572279837463876454: 6931,
    224091083899144559674927752909: 20795,
    633825300114114700748351602688: 41590,
    79228162514264337593543950336000: 138162,
    79228162514264337593543950336000000: 276324,
    1461446703485210103287273052203988822378723970341: 887271,
    4295343490: MIN_TICK + 1,
    1461373636630004318706518188784493106690254656249: MAX_TICK - 1,
}


@pytest.mark.parametrize(("tick", "expected"), list(SQRT_RATIO_SNAPSHOT.items()))
def test_get_sqrt_ratio_at_tick(tick: int, expected: int) -> None:
    assert get_sqrt_ratio_at_tick(tick) == expected


@pytest.mark.parametrize(("ratio", "expected"), list(TICK_SNAPSHOT.items()))
def test_get_tick_at_sqrt_ratio(ratio: int, expected: int) -> None:
    tick = get_tick_at_sqrt_ratio(ratio)
    assert tick == expected
    assert get_sqrt_ratio_at_tick(tick) <= ratio < get_sqrt_ratio_at_tick(tick + 1)


def test_tick_math_bounds_and_reverts() -> None:
    assert (MIN_SQRT_RATIO, MAX_SQRT_RATIO) == (
        4295128739,
        1461446703485210103287273052203988822378723970342,
    )
    assert encode_price_sqrt(10**12, 1) == 79228162514264337593543950336000000  # a snapshot key
    for tick in (MIN_TICK - 1, MAX_TICK + 1):
        with pytest.raises(AmmError, match=r"^T$"):
            get_sqrt_ratio_at_tick(tick)
    for ratio in (MIN_SQRT_RATIO - 1, MAX_SQRT_RATIO):
        with pytest.raises(AmmError, match=r"^R$"):
            get_tick_at_sqrt_ratio(ratio)
    with pytest.raises(ArgumentError, match="tick: must be an int24"):
        get_sqrt_ratio_at_tick(1.5)  # type: ignore[arg-type]


# -- SqrtPriceMath ----------------------------------------------------------------------------

P1 = encode_price_sqrt(1, 1)
V = "20282409603651670423947251286016"  # the spec's price with virtual reserves 4 / 262144


def test_next_sqrt_price_from_input() -> None:
    assert get_next_sqrt_price_from_input(1, 1, 2**255, True) == 1
    assert get_next_sqrt_price_from_input(P1, E18 // 10, 0, True) == P1
    assert get_next_sqrt_price_from_input(P1, E18 // 10, 0, False) == P1
    max_amount_no_overflow = MAX_UINT256 - (MAX_UINT128 << 96) // (2**160 - 1)
    assert (
        get_next_sqrt_price_from_input(2**160 - 1, MAX_UINT128, max_amount_no_overflow, True) == 1
    )
    assert (
        get_next_sqrt_price_from_input(P1, E18, E18 // 10, False) == 87150978765690771352898345369
    )
    assert get_next_sqrt_price_from_input(P1, E18, E18 // 10, True) == 72025602285694852357767227579
    assert get_next_sqrt_price_from_input(P1, 10 * E18, 2**100, True) == 624999999995069620
    assert get_next_sqrt_price_from_input(P1, 1, MAX_UINT256 // 2, True) == 1
    # 'sqrtP * sqrtQ overflows'
    sqrt_p = 1025574284609383690408304870162715216695788925244
    liquidity = 50015962439936049619261659728067971248
    sqrt_q = get_next_sqrt_price_from_input(sqrt_p, liquidity, 406, True)
    assert sqrt_q == 1025574284609383582644711336373707553698163132913
    assert get_amount0_delta(sqrt_q, sqrt_p, liquidity, True) == 406


@pytest.mark.parametrize(
    ("price", "liquidity", "amount", "zero_for_one"),
    [
        (0, 0, E18 // 10, False),  # price is zero
        (1, 0, E18 // 10, True),  # liquidity is zero
        (2**160 - 1, 1024, 1024, False),  # input amount overflows the price
    ],
)
def test_next_sqrt_price_from_input_reverts(
    price: int, liquidity: int, amount: int, zero_for_one: bool
) -> None:
    with pytest.raises(AmmError):
        get_next_sqrt_price_from_input(price, liquidity, amount, zero_for_one)


def test_next_sqrt_price_from_output() -> None:
    assert get_next_sqrt_price_from_output(int(V), 1024, 262143, True) == 77371252455336267181195264
    assert get_next_sqrt_price_from_output(P1, E18 // 10, 0, True) == P1
    assert get_next_sqrt_price_from_output(P1, E18 // 10, 0, False) == P1
    assert (
        get_next_sqrt_price_from_output(P1, E18, E18 // 10, False) == 88031291682515930659493278152
    )
    assert (
        get_next_sqrt_price_from_output(P1, E18, E18 // 10, True) == 71305346262837903834189555302
    )


@pytest.mark.parametrize(
    ("price", "liquidity", "amount", "zero_for_one"),
    [
        (0, 0, E18 // 10, False),  # price is zero
        (1, 0, E18 // 10, True),  # liquidity is zero
        (int(V), 1024, 4, False),  # exactly the virtual reserves of token0
        (int(V), 1024, 5, False),  # more than the virtual reserves of token0
        (int(V), 1024, 262145, True),  # more than the virtual reserves of token1
        (int(V), 1024, 262144, True),  # exactly the virtual reserves of token1
        (P1, 1, MAX_UINT256, True),  # impossible in zero for one
        (P1, 1, MAX_UINT256, False),  # impossible in one for zero
    ],
)
def test_next_sqrt_price_from_output_reverts(
    price: int, liquidity: int, amount: int, zero_for_one: bool
) -> None:
    with pytest.raises(AmmError):
        get_next_sqrt_price_from_output(price, liquidity, amount, zero_for_one)


def test_amount_deltas() -> None:
    assert get_amount0_delta(P1, encode_price_sqrt(2, 1), 0, True) == 0
    assert get_amount0_delta(P1, P1, 0, True) == 0
    up = get_amount0_delta(P1, encode_price_sqrt(121, 100), E18, True)
    assert up == 90909090909090910
    assert get_amount0_delta(P1, encode_price_sqrt(121, 100), E18, False) == up - 1
    # 'works for prices that overflow'
    low, high = encode_price_sqrt(2**90, 1), encode_price_sqrt(2**96, 1)
    assert get_amount0_delta(low, high, E18, True) == get_amount0_delta(low, high, E18, False) + 1
    assert get_amount1_delta(P1, encode_price_sqrt(2, 1), 0, True) == 0
    up = get_amount1_delta(P1, encode_price_sqrt(121, 100), E18, True)
    assert up == 100000000000000000
    assert get_amount1_delta(P1, encode_price_sqrt(121, 100), E18, False) == up - 1
    with pytest.raises(AmmError):
        get_amount0_delta(0, P1, E18, True)


# -- SwapMath ---------------------------------------------------------------------------------

SWAP_STEPS = {  # name: (price, target, liquidity, amount, fee) -> (sqrtQ, in, out, fee)
    "exact amount in that gets capped at price target in one for zero": (
        (P1, encode_price_sqrt(101, 100), 2 * E18, E18, 600),
        (encode_price_sqrt(101, 100), 9975124224178055, 9925619580021728, 5988667735148),
    ),
    "exact amount out that gets capped at price target in one for zero": (
        (P1, encode_price_sqrt(101, 100), 2 * E18, -E18, 600),
        (encode_price_sqrt(101, 100), 9975124224178055, 9925619580021728, 5988667735148),
    ),
    "exact amount in that is fully spent in one for zero": (
        (P1, encode_price_sqrt(1000, 100), 2 * E18, E18, 600),
        (
            get_next_sqrt_price_from_input(P1, 2 * E18, E18 - 600000000000000, False),
            999400000000000000,
            666399946655997866,
            600000000000000,
        ),
    ),
    "exact amount out that is fully received in one for zero": (
        (P1, encode_price_sqrt(10000, 100), 2 * E18, -E18, 600),
        (
            get_next_sqrt_price_from_output(P1, 2 * E18, E18, False),
            2000000000000000000,
            E18,
            1200720432259356,
        ),
    ),
    "amount out is capped at the desired amount out": (
        (
            417332158212080721273783715441582,
            1452870262520218020823638996,
            159344665391607089467575320103,
            -1,
            1,
        ),
        (417332158212080721273783715441581, 1, 1, 1),
    ),
    "target price of 1 uses partial input amount": (
        (2, 1, 1, 3915081100057732413702495386755767, 1),
        (1, 39614081257132168796771975168, 0, 39614120871253040049813),
    ),
    "entire input amount taken as fee": (
        (2413, 79887613182836312, 1985041575832132834610021537970, 10, 1872),
        (2413, 0, 0, 10),
    ),
    "handles intermediate insufficient liquidity in zero for one exact output case": (
        (int(V), int(V) * 11 // 10, 1024, -4, 3000),
        (int(V) * 11 // 10, 26215, 0, 79),
    ),
    "handles intermediate insufficient liquidity in one for zero exact output case": (
        (int(V), int(V) * 9 // 10, 1024, -263000, 3000),
        (int(V) * 9 // 10, 1, 26214, 1),
    ),
}


@pytest.mark.parametrize("name", list(SWAP_STEPS))
def test_compute_swap_step(name: str) -> None:
    arguments, expected = SWAP_STEPS[name]
    assert compute_swap_step(*arguments) == expected


def test_compute_swap_step_relations() -> None:
    # the spec's side conditions of the first four cases
    sqrt_q, amount_in, _, fee = compute_swap_step(*SWAP_STEPS[next(iter(SWAP_STEPS))][0])
    assert amount_in + fee < E18
    assert sqrt_q < get_next_sqrt_price_from_input(P1, 2 * E18, E18, False)


# -- FullMath, SafeCast, LiquidityMath (the requires) ------------------------------------------


def test_full_math_and_casts() -> None:
    assert mul_div(MAX_UINT256, MAX_UINT256, MAX_UINT256) == MAX_UINT256
    with pytest.raises(AmmError):
        mul_div(1, 1, 0)
    with pytest.raises(AmmError):
        mul_div(MAX_UINT256, MAX_UINT256, MAX_UINT256 - 1)
    with pytest.raises(AmmError):
        mul_div_rounding_up(
            535006138814359, 432862656469423142931042426214547535783388063929571229938474969, 2
        )
    with pytest.raises(AmmError):
        to_uint160(2**160)
    with pytest.raises(AmmError):
        to_int128(2**127)
    with pytest.raises(AmmError):
        to_int256(2**255)
    with pytest.raises(AmmError, match=r"^LA$"):
        add_delta(MAX_UINT128, 1)
    with pytest.raises(AmmError, match=r"^LS$"):
        add_delta(0, -1)
    with pytest.raises(ArgumentError, match="liquidity: must be a uint128"):
        get_amount1_delta(P1, P1, -1, True)
