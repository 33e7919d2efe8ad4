"""``Pool.swap`` against v3-core's pool swap snapshots, every figure wei-exact.

Source: Uniswap/v3-core ``test/UniswapV3Pool.swaps.spec.ts`` (commit
cb66ac217c67b8f12b6ac9e48d2a00a144c07107: the pools, positions and the 16 default swap cases)
and ``test/__snapshots__/UniswapV3Pool.swaps.spec.ts.snap`` (commit
8445f65e7d1b6714a92f287bfc8b0dcd4cc251e4: the results). Each pool is minted as the fixture
does, then each case swaps from that fresh state. A result row is ``(amount0Delta,
amount1Delta, feeGrowthGlobal0X128Delta, feeGrowthGlobal1X128Delta, tickAfter)``; ``SPL`` is
the snapshot's ``revert SPL``. The swap-to-price cases pass ``type(int256).max`` as
``TestUniswapV3Callee.swapToLowerSqrtPrice``/``swapToHigherSqrtPrice`` do; the other cases
default the limit to ``MIN_SQRT_RATIO + 1`` / ``MAX_SQRT_RATIO - 1``.

Transcribed: 8 whole pools (16 cases each) and 3 cases of a ninth, 131 swap vectors, plus the
pool balances after minting (``amount0Before``/``amount1Before``) of all nine.
"""

from __future__ import annotations

import pytest

from tests.amm.prices import encode_price_sqrt
from toolkit.amm import AmmError
from toolkit.amm.v3 import MAX_SQRT_RATIO, MAX_TICK, MIN_SQRT_RATIO, Pool
from toolkit.amm.v3.pool import tick_spacing_to_max_liquidity_per_tick

E18 = 10**18
MAX_INT256 = 2**255 - 1
SPACING = {500: 10, 3000: 60, 10000: 200}

# title -> (zero_for_one, exact_out, amount, price limit as (reserve1, reserve0) or None)
CASES: dict[str, tuple[bool, bool, int, tuple[int, int] | None]] = {
    "swap exactly 1.0000 token0 for token1": (True, False, E18, None),
    "swap exactly 1.0000 token1 for token0": (False, False, E18, None),
    "swap token0 for exactly 1.0000 token1": (True, True, E18, None),
    "swap token1 for exactly 1.0000 token0": (False, True, E18, None),
    "swap exactly 1.0000 token0 for token1 to price 0.50000": (True, False, E18, (50, 100)),
    "swap exactly 1.0000 token1 for token0 to price 2.0000": (False, False, E18, (200, 100)),
    "swap token0 for exactly 1.0000 token1 to price 0.50000": (True, True, E18, (50, 100)),
    "swap token1 for exactly 1.0000 token0 to price 2.0000": (False, True, E18, (200, 100)),
    "swap exactly 0.0000000000000010000 token0 for token1": (True, False, 1000, None),
    "swap exactly 0.0000000000000010000 token1 for token0": (False, False, 1000, None),
    "swap token0 for exactly 0.0000000000000010000 token1": (True, True, 1000, None),
    "swap token1 for exactly 0.0000000000000010000 token0": (False, True, 1000, None),
    "swap token1 for token0 to price 2.5000": (False, False, MAX_INT256, (5, 2)),
    "swap token0 for token1 to price 0.40000": (True, False, MAX_INT256, (2, 5)),
    "swap token0 for token1 to price 2.5000": (True, False, MAX_INT256, (5, 2)),
    "swap token1 for token0 to price 0.40000": (False, False, MAX_INT256, (2, 5)),
}
CASE_ORDER = list(CASES)  # the rows below follow this order

FULL = "full"  # getMinTick(spacing) .. getMaxTick(spacing)
SPL = None

Row = tuple[int, int, int, int, int] | None

# description -> (fee, start price, positions, (amount0Before, amount1Before), rows by CASE_ORDER)
POOLS: dict[
    str,
    tuple[int, tuple[int, int] | int, list[tuple[object, object, int]], tuple[int, int], list[Row]],
] = {
    "medium fee, 1:1 price, 2e18 max range liquidity": (
        3000,
        (1, 1),
        [(FULL, FULL, 2 * E18)],
        (2 * E18, 2 * E18),
        [
            (E18, -665331998665331998, 510423550381407695195061911147652317, 0, -8090),
            (-665331998665331998, E18, 0, 510423550381407695195061911147652317, 8089),
            (2006018054162487463, -E18, 1023918857334819954209013958517557896, 0, -13864),
            (-E18, 2006018054162487463, 0, 1023918857334819954209013958517557896, 13863),
            (
                830919884399388263,
                -585786437626904951,
                424121077477644648929101317621422688,
                0,
                -6932,
            ),
            (
                -585786437626904951,
                830919884399388263,
                0,
                424121077477644648929101317621422688,
                6931,
            ),
            (
                830919884399388263,
                -585786437626904951,
                424121077477644648929101317621422688,
                0,
                -6932,
            ),
            (
                -585786437626904951,
                830919884399388263,
                0,
                424121077477644648929101317621422688,
                6931,
            ),
            (1000, -996, 510423550381407695195, 0, -1),
            (-996, 1000, 0, 510423550381407695195, 0),
            (1005, -1000, 680564733841876926926, 0, -1),
            (-1000, 1005, 0, 680564733841876926926, 0),
            (
                -735088935932648267,
                1165774985123750584,
                0,
                595039006852697554786973994761078087,
                9163,
            ),
            (
                1165774985123750584,
                -735088935932648267,
                595039006852697554786973994761078087,
                0,
                -9164,
            ),
            SPL,
            SPL,
        ],
    ),
    "high fee, 1:1 price, 2e18 max range liquidity": (
        10000,
        (1, 1),
        [(FULL, FULL, 2 * E18)],
        (2 * E18, 2 * E18),
        [
            (E18, -662207357859531772, 1701411834604692317316873037158841057, 0, -8043),
            (-662207357859531772, E18, 0, 1701411834604692317316873037158841057, 8042),
            (2020202020202020203, -E18, 3437195625464025050172418213103875650, 0, -13864),
            (-E18, 2020202020202020203, 0, 3437195625464025050172418213103875650, 13863),
            (
                836795075501202120,
                -585786437626904951,
                1423733044596672457631004491657125052,
                0,
                -6932,
            ),
            (
                -585786437626904951,
                836795075501202120,
                0,
                1423733044596672457631004491657125052,
                6931,
            ),
            (
                836795075501202120,
                -585786437626904951,
                1423733044596672457631004491657125052,
                0,
                -6932,
            ),
            (
                -585786437626904951,
                836795075501202120,
                0,
                1423733044596672457631004491657125052,
                6931,
            ),
            (1000, -989, 1701411834604692317316, 0, -1),
            (-989, 1000, 0, 1701411834604692317316, 0),
            (1012, -1000, 1871553018065161549048, 0, -1),
            (-1000, 1012, 0, 1871553018065161549048, 0),
            (
                -735088935932648267,
                1174017838553918518,
                0,
                1997487844552658120479227965844634309,
                9163,
            ),
            (
                1174017838553918518,
                -735088935932648267,
                1997487844552658120479227965844634309,
                0,
                -9164,
            ),
            SPL,
            SPL,
        ],
    ),
    "medium fee, 1:1 price, 0 liquidity, all liquidity around current price": (
        3000,
        (1, 1),
        [(FULL, -60, 2 * E18), (60, FULL, 2 * E18)],
        (1994009290088178439, 1994009290088178439),
        [
            (E18, -662011820624678025, 510423550381407695195061911147652317, 0, -8130),
            (-662011820624678025, E18, 0, 510423550381407695195061911147652317, 8129),
            (2024171064311638316, -E18, 1033184581225259164735720748018047287, 0, -13984),
            (-E18, 2024171064311638316, 0, 1033184581225259164735720748018047287, 13983),
            (
                824893095908431542,
                -579795727715083389,
                421044862698692740725170743495410672,
                0,
                -6932,
            ),
            (
                -579795727715083389,
                824893095908431542,
                0,
                421044862698692740725170743495410672,
                6931,
            ),
            (
                824893095908431542,
                -579795727715083389,
                421044862698692740725170743495410672,
                0,
                -6932,
            ),
            (
                -579795727715083389,
                824893095908431542,
                0,
                421044862698692740725170743495410672,
                6931,
            ),
            (1000, -991, 510423550381407695195, 0, -61),
            (-991, 1000, 0, 510423550381407695195, 60),
            (1011, -1000, 680564733841876926926, 0, -61),
            (-1000, 1011, 0, 680564733841876926926, 60),
            (
                -729098226020826705,
                1159748196632793863,
                0,
                591962792073745646583043420635066071,
                9163,
            ),
            (
                1159748196632793863,
                -729098226020826705,
                591962792073745646583043420635066071,
                0,
                -9164,
            ),
            SPL,
            SPL,
        ],
    ),
    "medium fee, 1:1 price, additional liquidity around current price": (
        3000,
        (1, 1),
        [(FULL, FULL, 2 * E18), (FULL, -60, 2 * E18), (60, FULL, 2 * E18)],
        (3994009290088178439, 3994009290088178439),
        [
            (E18, -795933705287758544, 256749882580179971840679703106063897, 0, -4476),
            (-795933705287758544, E18, 0, 256749882580179971840679703106063897, 4475),
            (1342022152495072924, -E18, 344037963272993171369654596359692757, 0, -5794),
            (-E18, 1342022152495072924, 0, 344037963272993171369654596359692757, 5793),
            (E18, -795933705287758544, 256749882580179971840679703106063897, 0, -4476),
            (-795933705287758544, E18, 0, 256749882580179971840679703106063897, 4475),
            (1342022152495072924, -E18, 344037963272993171369654596359692757, 0, -5794),
            (-E18, 1342022152495072924, 0, 344037963272993171369654596359692757, 5793),
            (1000, -996, 510423550381407695195, 0, -1),
            (-996, 1000, 0, 510423550381407695195, 0),
            (1005, -1000, 680564733841876926926, 0, -1),
            (-1000, 1005, 0, 680564733841876926926, 0),
            (
                -1464187161953474971,
                2325523181756544449,
                0,
                595039006852697724928157455230309818,
                9163,
            ),
            (
                2325523181756544449,
                -1464187161953474971,
                595039006852697724928157455230309818,
                0,
                -9164,
            ),
            SPL,
            SPL,
        ],
    ),
    "medium fee, token1 liquidity only": (
        3000,
        (1, 1),
        [(-2000 * 60, 0, 2 * E18)],
        (0, 1995041008271423675),
        [
            (E18, -665331998665331998, 510423550381407695195061911147652317, 0, -8090),
            (0, 0, 0, 0, 887271),
            (2006018054162487463, -E18, 1023918857334819954209013958517557896, 0, -13864),
            (0, 0, 0, 0, 887271),
            (
                830919884399388263,
                -585786437626904951,
                424121077477644648929101317621422688,
                0,
                -6932,
            ),
            (0, 0, 0, 0, 6931),
            (
                830919884399388263,
                -585786437626904951,
                424121077477644648929101317621422688,
                0,
                -6932,
            ),
            (0, 0, 0, 0, 6931),
            (1000, -996, 510423550381407695195, 0, -1),
            (0, 0, 0, 0, 887271),
            (1005, -1000, 680564733841876926926, 0, -1),
            (0, 0, 0, 0, 887271),
            (0, 0, 0, 0, 9163),
            (
                1165774985123750584,
                -735088935932648267,
                595039006852697554786973994761078087,
                0,
                -9164,
            ),
            SPL,
            SPL,
        ],
    ),
    "close to max price": (
        3000,
        (2**127, 1),
        [(FULL, FULL, 2 * E18)],
        (1, 26087635650665564424699143612505016738),
        [
            (
                E18,
                -26087635650665564420687107504180041533,
                510423550381413479995299567101531162,
                0,
                13923,
            ),
            (0, E18, 0, 510423550381407695195061911147652317, 880340),
            (2, -E18, 170141183460469231731, 0, 880340),
            (
                0,
                10740898373457544742072477595619363803,
                0,
                5482407482066087054477299856254072312542046383926535301,
                887271,
            ),
            (
                E18,
                -26087635650665564420687107504180041533,
                510423550381413479995299567101531162,
                0,
                13923,
            ),
            SPL,
            (2, -E18, 170141183460469231731, 0, 880340),
            SPL,
            (1000, -26083549850867114346332688477747755628, 2381976568446569244235, 0, 705098),
            (0, 1000, 0, 510423550381407695195, 880340),
            (2, -1000, 170141183460469231731, 0, 880340),
            (
                0,
                10740898373457544742072477595619363803,
                0,
                5482407482066087054477299856254072312542046383926535301,
                887271,
            ),
            SPL,
            (
                3171793039286238109,
                -26087635650665564423434232548437664977,
                1618957864187523123655042148763283097,
                0,
                -9164,
            ),
            (
                1268717215714495281,
                -26087635650665564421536865952336637378,
                647583145675012618257449376796101507,
                0,
                9163,
            ),
            SPL,
        ],
    ),
    "close to min price": (
        3000,
        (1, 2**127),
        [(FULL, FULL, 2 * E18)],
        (26037782196502120275425782622539039026, 1),
        [
            (E18, 0, 170141183460469231731687303715884105728, 0, -880303),
            (
                -26037782196502120271413746514214063808,
                E18,
                0,
                510423550381413820277666488039994629,
                -13924,
            ),
            (
                10790901831095468191587263901270792610,
                0,
                5507930424444982259736347157352787128931407551935325049,
                0,
                -887272,
            ),
            (-E18, 2, 0, 170141183460469231731, -880303),
            SPL,
            (
                -26037782196502120271413746514214063808,
                E18,
                0,
                510423550381413820277666488039994629,
                -13924,
            ),
            SPL,
            (-E18, 2, 0, 170141183460469231731, -880303),
            (1000, 0, 170141183460469231731687, 0, -880303),
            (-26033697540846965126433148994127431276, 1000, 0, 2381976568446569244235, -705093),
            (
                10790901831095468191587263901270792610,
                0,
                5507930424444982259736347157352787128931407551935325049,
                0,
                -887272,
            ),
            (-1000, 2, 0, 170141183460469231731, -880303),
            (
                -26037782196502120274160871558471687260,
                3171793039286238112,
                0,
                1618957864187523634078592530170978294,
                9163,
            ),
            SPL,
            SPL,
            (
                -26037782196502120272263504962370659661,
                1268717215714495283,
                0,
                647583145675012958539816297734564973,
                -9164,
            ),
        ],
    ),
    "initialized at the max ratio": (
        3000,
        MAX_SQRT_RATIO - 1,
        [(FULL, FULL, 2 * E18)],
        (0, 36796311329002736532545403775337522448),
        [
            (
                E18,
                -36796311329002736528533367667012547243,
                510423550381413479995299567101531162,
                0,
                13923,
            ),
            SPL,
            (2, -E18, 170141183460469231731, 0, 887219),
            SPL,
            (
                E18,
                -36796311329002736528533367667012547243,
                510423550381413479995299567101531162,
                0,
                13923,
            ),
            SPL,
            (2, -E18, 170141183460469231731, 0, 887219),
            SPL,
            (1000, -36792225529204286454178948640580261338, 2381976568446569244235, 0, 705098),
            SPL,
            (2, -1000, 170141183460469231731, 0, 887219),
            SPL,
            SPL,
            (
                3171793039286238109,
                -36796311329002736531280492711270170687,
                1618957864187523123655042148763283097,
                0,
                -9164,
            ),
            (
                1268717215714495281,
                -36796311329002736529383126115169143088,
                647583145675012618257449376796101507,
                0,
                9163,
            ),
            SPL,
        ],
    ),
}

# a pool only partly transcribed: description -> (pool spec, {title: row})
MAX_LIQUIDITY_POOL = "max full range liquidity at 1:1 price with default fee"
MAX_LIQUIDITY_ROWS: dict[str, Row] = {
    "swap token1 for exactly 1.0000 token0 to price 2.0000": (
        -E18,
        1003009027081361094,
        0,
        88991975927793784300,
        0,
    ),
    "swap token1 for token0 to price 0.40000": SPL,
    "swap token1 for token0 to price 2.5000": (
        -4228872409409224753601131224936259,
        6706554036096900675845906992220230,
        0,
        595039006852697512464428097884749099,
        9163,
    ),
}


def _edge(tick: object, spacing: int, lower: bool) -> int:
    if tick == FULL:
        # getMinTick / getMaxTick of test/shared/utilities.ts
        return -(MAX_TICK // spacing) * spacing if lower else (MAX_TICK // spacing) * spacing
    assert isinstance(tick, int)
    return tick


def _build(
    fee: int, start: tuple[int, int] | int, positions: list[tuple[object, object, int]]
) -> tuple[Pool, tuple[int, int]]:
    spacing = SPACING[fee]
    sqrt_price = start if isinstance(start, int) else encode_price_sqrt(*start)
    pool = Pool(fee, spacing, sqrt_price)
    total0 = total1 = 0
    for lower, upper, liquidity in positions:
        amount0, amount1 = pool.mint(
            _edge(lower, spacing, True), _edge(upper, spacing, False), liquidity
        )
        total0 += amount0
        total1 += amount1
    return pool, (total0, total1)


def _run(pool: Pool, title: str) -> Row:
    zero_for_one, exact_out, amount, limit = CASES[title]
    if limit is None:
        sqrt_limit = MIN_SQRT_RATIO + 1 if zero_for_one else MAX_SQRT_RATIO - 1
    else:
        sqrt_limit = encode_price_sqrt(*limit)
    fg0, fg1 = pool.fee_growth_global0_x128, pool.fee_growth_global1_x128
    try:
        quoted = pool.quote(zero_for_one, -amount if exact_out else amount, sqrt_limit)
        amount0, amount1 = pool.swap(zero_for_one, -amount if exact_out else amount, sqrt_limit)
    except AmmError as error:
        assert str(error) == "SPL"
        return SPL
    assert quoted == (amount0, amount1)
    return (
        amount0,
        amount1,
        pool.fee_growth_global0_x128 - fg0,
        pool.fee_growth_global1_x128 - fg1,
        pool.tick,
    )


VECTORS = [
    pytest.param(description, title, rows[index], id=f"{description} | {title}")
    for description, (_, _, _, _, rows) in POOLS.items()
    for index, title in enumerate(CASE_ORDER)
]


@pytest.mark.parametrize(("description", "title", "expected"), VECTORS)
def test_pool_swap_matches_snapshot(description: str, title: str, expected: Row) -> None:
    fee, start, positions, minted, _ = POOLS[description]
    pool, amounts = _build(fee, start, positions)
    assert amounts == minted
    assert _run(pool, title) == expected


@pytest.mark.parametrize(("title", "expected"), list(MAX_LIQUIDITY_ROWS.items()))
def test_max_liquidity_pool_matches_snapshot(title: str, expected: Row) -> None:
    liquidity = tick_spacing_to_max_liquidity_per_tick(60)
    pool, amounts = _build(3000, (1, 1), [(FULL, FULL, liquidity)])
    assert amounts == (11505743598341114571255423385623647, 11505743598341114571255423385506404)
    assert _run(pool, title) == expected
    with pytest.raises(AmmError, match=r"^LO$"):
        pool.mint(-887220, 887220, 1)
