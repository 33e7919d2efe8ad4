"""``toolkit.amm`` V3 math side by side with degenbot 0.3.0's port of the same libraries.

degenbot is the well-known Python port of the Uniswap V3 math. Its current release needs
Python >= 3.12 and web3 < 8, so it cannot share the project's virtualenv; 0.3.0 (Python >= 3.10,
web3 >= 7.6, < 8) installs on Python 3.11. Run with the project's interpreter and no degenbot,
this script builds a separate virtualenv once (``python3.11 -m venv`` and
``pip install degenbot==0.3.0`` under ``$XDG_CACHE_HOME/toolkit-bench/degenbot-0.3.0``, else
``~/.cache/...``), reuses it afterwards, and re-runs itself there with ``PYTHONPATH`` set to the
repository root (``toolkit.amm`` is stdlib only; the script checks what importing it loaded). If
the virtualenv cannot be built it prints why and exits 0: no well-known port installs here.

1. Parity, on the same seeded random inputs (5000 per function, edge values and out-of-range
   prices, ticks and amounts included): ``get_sqrt_ratio_at_tick``, ``get_tick_at_sqrt_ratio``,
   ``get_next_sqrt_price_from_input``/``output``, ``get_amount0_delta``/``1_delta`` and
   ``compute_swap_step``: how many results are identical, a revert on both sides (our
   ``AmmError``, degenbot's ``DegenbotError``) counting as identical. Differences where the
   contract takes its 256-bit overflow branch and degenbot (unbounded ints) does not are
   counted apart and do not fail the run (see :func:`skips_overflow_branch`).
2. Microseconds per call of each, both ports. degenbot memoises these functions
   (``functools.cache`` or ``lru_cache(1024)``): each call here takes an input not seen before
   and every cache is cleared before each run, so the figures are cache misses; the third
   column is a cache hit (the same input again), for scale.
3. V3 swaps per second crossing 0, 10 and 100 initialized ticks, with the layout of
   ``bench_amm.py`` (60-tick spacing, positions stacked below the price, zero for one down to
   just past the N-th tick). Ours through ``Pool.swap`` (a fresh copy each time, the copy
   subtracted). degenbot 0.3.0's ``UniswapV3Pool`` cannot be built offline (its constructor asks
   a registered web3 connection for the block number, factory and tokens), so both ports also go
   through one swap loop, :func:`swap_loop` (``UniswapV3Pool.swap``'s loop over the bitmap, as
   degenbot's ``_calculate_swap`` has it: no fee growth, no tick crossing writes), parameterised
   by each port's library functions. degenbot's bitmap step two ways: its word-by-word bitmap walk
   (``next_initialized_tick_within_one_word_legacy``) and the lookup in the tick data its pool
   uses for a sparse map (``next_initialized_tick_within_one_word``). Its caches are cleared
   before every swap (the clearing timed and subtracted), as a repeated swap would otherwise
   replay them. Every swap's ``(amount0, amount1)`` must equal ``Pool.swap``'s.

Each timing is the best of a few runs. No assertions: a parity mismatch prints the first
differing input of each function and makes the exit status 1 after all figures are printed.
Run: ``PYTHONPATH=$PWD .venv/bin/python bench/bench_amm_port.py``.
"""

from __future__ import annotations

import copy
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

PORT = "degenbot==0.3.0"
PYTHON = "python3.11"
REPO = Path(__file__).resolve().parent.parent
CHILD = "TOOLKIT_BENCH_DEGENBOT_CHILD"  # set in the re-run, so a broken venv cannot loop
SEED = 20251010
CASES = 5000
TIMED = 2000  # distinct inputs per timing run
SPACING = 60
FEE = 3000

Outcome = tuple[str, object]


def venv_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "toolkit-bench" / "degenbot-0.3.0"


def no_port(reason: str) -> None:
    print(f"no well-known port installs here: {reason}")
    raise SystemExit(0)


def failure(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [f"exit status {result.returncode}"])[-1].strip()


def rerun_with_degenbot() -> None:
    """Build the comparison virtualenv once, then run this script in it (never returns)."""
    if os.environ.get(CHILD):
        no_port(f"degenbot does not import with {sys.executable}")
    venv = venv_dir()
    python = venv / "bin" / "python"
    done = venv / ".installed"
    if not done.exists():
        interpreter = shutil.which(PYTHON)
        if interpreter is None:
            no_port(f"{PYTHON} is not on PATH ({PORT} needs Python >= 3.10, web3 < 8)")
        print(f"building {venv} once: {PYTHON} -m venv, pip install {PORT}", flush=True)
        steps = (
            [str(interpreter), "-m", "venv", "--clear", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PORT],
        )
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                no_port(f"`{' '.join(step[-2:])}` failed: {failure(result)}")
        done.write_text(PORT + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), CHILD: "1"}
    raise SystemExit(subprocess.call([str(python), __file__, *sys.argv[1:]], env=env))


def import_toolkit_amm() -> tuple[ModuleType, type[Exception], list[str]]:
    """``toolkit.amm.v3``, its ``AmmError``, and the non-stdlib top-level modules it loaded."""
    before = set(sys.modules)
    from toolkit.amm import AmmError, v3

    loaded = {name.partition(".")[0] for name in set(sys.modules) - before}
    foreign = sorted(loaded - set(sys.stdlib_module_names) - {"toolkit"})
    return v3, AmmError, foreign


class Ports(NamedTuple):
    """Each function under comparison, ours then degenbot's, and what counts as a revert."""

    functions: dict[str, tuple[Callable[..., Any], Callable[..., Any]]]
    reverts: tuple[type[Exception], ...]
    caches: list[Callable[[], None]]  # degenbot's cache_clear methods


def load_ports(v3: ModuleType, amm_error: type[Exception]) -> tuple[Ports, dict[str, ModuleType]]:
    from degenbot.exceptions import DegenbotError
    from degenbot.uniswap.v3_libraries import (
        bit_math,
        full_math,
        functions,
        sqrt_price_math,
        swap_math,
        tick_bitmap,
        tick_math,
        unsafe_math,
    )

    modules = [bit_math, full_math, functions, sqrt_price_math, swap_math, tick_bitmap]
    modules += [tick_math, unsafe_math]
    caches = [
        value.cache_clear
        for module in modules
        for value in vars(module).values()
        if callable(getattr(value, "cache_clear", None))
    ]
    names = ("get_sqrt_ratio_at_tick", "get_tick_at_sqrt_ratio")
    pairs = {name: (getattr(v3, name), getattr(tick_math, name)) for name in names}
    for name in (
        "get_next_sqrt_price_from_input",
        "get_next_sqrt_price_from_output",
        "get_amount0_delta",
        "get_amount1_delta",
    ):
        pairs[name] = (getattr(v3, name), getattr(sqrt_price_math, name))
    pairs["compute_swap_step"] = (v3.compute_swap_step, swap_math.compute_swap_step)
    ports = Ports(pairs, (amm_error, DegenbotError), caches)
    return ports, {"tick_math": tick_math, "swap_math": swap_math, "tick_bitmap": tick_bitmap}


# -- inputs ---------------------------------------------------------------------------------


def inputs(v3: ModuleType, rng: random.Random) -> dict[str, list[tuple[object, ...]]]:
    """``CASES`` argument tuples per function, in range of the Solidity types, from one seed."""
    low, high = v3.MIN_SQRT_RATIO, v3.MAX_SQRT_RATIO
    price_edges = [0, 1, low - 1, low, low + 1, high - 1, high, 2**160 - 1, 2**96]

    def tick() -> int:
        if rng.random() < 0.05:
            return rng.choice([v3.MIN_TICK - 1, v3.MIN_TICK, 0, v3.MAX_TICK, v3.MAX_TICK + 1])
        return rng.randint(v3.MIN_TICK, v3.MAX_TICK)

    def price() -> int:
        roll = rng.random()
        if roll < 0.05:
            return int(rng.choice(price_edges))
        if roll < 0.25:
            return rng.randrange(low, high)
        near = v3.get_sqrt_ratio_at_tick(rng.randint(v3.MIN_TICK, v3.MAX_TICK))
        return int(min(max(near + rng.randint(-1000, 1000), 0), 2**160 - 1))

    def liquidity() -> int:
        if rng.random() < 0.03:
            return int(rng.choice([0, 1, 2**128 - 1]))
        return rng.getrandbits(rng.randint(1, 128))

    def amount(bits: int = 256) -> int:
        if rng.random() < 0.03:
            return int(rng.choice([0, 1, 2**bits - 1]))
        return rng.getrandbits(rng.randint(1, bits))

    def remaining() -> int:
        magnitude = amount(255)
        return magnitude if rng.random() < 0.5 else -magnitude

    def fee() -> int:
        return int(rng.choice([100, 500, 3000, 10000, rng.randrange(10**6)]))

    flag = rng.random
    makers: dict[str, Callable[[], tuple[object, ...]]] = {
        "get_sqrt_ratio_at_tick": lambda: (tick(),),
        "get_tick_at_sqrt_ratio": lambda: (price(),),
        "get_next_sqrt_price_from_input": lambda: (price(), liquidity(), amount(), flag() < 0.5),
        "get_next_sqrt_price_from_output": lambda: (price(), liquidity(), amount(), flag() < 0.5),
        "get_amount0_delta": lambda: (price(), price(), liquidity(), flag() < 0.5),
        "get_amount1_delta": lambda: (price(), price(), liquidity(), flag() < 0.5),
        "compute_swap_step": lambda: (price(), price(), liquidity(), remaining(), fee()),
    }
    return {name: [make() for _ in range(CASES)] for name, make in makers.items()}


# -- parity -----------------------------------------------------------------------------------


def outcome(call: Callable[..., Any], args: Sequence[object], reverts: tuple[type, ...]) -> Outcome:
    try:
        return "value", call(*args)
    except reverts:
        return "revert", None
    except Exception as exc:  # anything else is not what the contract does: never identical
        return f"{type(exc).__name__}: {exc}"[:120], id(exc)


def skips_overflow_branch(name: str, args: Sequence[Any]) -> bool:
    """Whether ``getNextSqrtPriceFromAmount0RoundingUp(add=true)`` would wrap 256 bits here.

    The contract then falls back to ``divRoundingUp(numerator1, numerator1 / sqrtP + amount)``
    (``toolkit.amm`` too), which reverts if that sum passes ``2**256 - 1``; degenbot 0.3.0's
    unbounded ints never wrap, so it keeps the first formula: its price differs in the last
    places, or it returns a price where the contract reverts.
    """
    if name == "get_next_sqrt_price_from_input":
        sqrt_p, liquidity, amount, zero_for_one = args
    elif name == "compute_swap_step":
        sqrt_p, target, liquidity, remaining, fee = args
        zero_for_one = sqrt_p >= target and remaining >= 0
        amount = remaining * (10**6 - fee) // 10**6
    else:
        return False
    return bool(zero_for_one) and amount > 0 and (liquidity << 96) + amount * sqrt_p >= 2**256


def parity(
    ports: Ports, cases: dict[str, list[tuple[object, ...]]]
) -> tuple[dict[str, list[tuple[object, ...]]], list[str]]:
    """Print identical counts; return the inputs both ports compute a value for, and mismatches.

    A difference explained by :func:`skips_overflow_branch` is counted and printed, not a
    mismatch: there ours is the contract's result and degenbot's is not.
    """
    print(f"\nparity on {CASES} seeded random inputs per function (seed {SEED})")
    computed: dict[str, list[tuple[object, ...]]] = {}
    mismatches: list[str] = []
    for name, (ours, theirs) in ports.functions.items():
        same = reverted = overflow = overflow_reverts = 0
        okay = ("value", "revert")
        first = example = ""
        computed[name] = []
        for args in cases[name]:
            mine = outcome(ours, args, ports.reverts)
            other = outcome(theirs, args, ports.reverts)
            if mine == other:
                same += 1
                reverted += mine[0] == "revert"
                if mine[0] == "value":
                    computed[name].append(args)
            elif skips_overflow_branch(name, args) and other[0] == "value" and mine[0] in okay:
                overflow += 1
                overflow_reverts += mine[0] == "revert"
                example = example or f"{name}{args}: ours {mine[1]}, degenbot {other[1]}"
            elif not first:
                first = f"{name}{args}: ours {mine}, degenbot {other}"
        print(
            f"  {name:32s} {same:5d}/{len(cases[name])} identical "
            f"({reverted} of them reverts on both sides)"
        )
        if overflow:
            print(
                f"  {'':32s} {overflow:5d} differ where the contract's amount0 formula "
                "overflows 256 bits: it (and ours) takes the fallback branch, degenbot 0.3.0 "
                f"does not ({overflow_reverts} of them the fallback's add overflow reverting)"
            )
            print(f"  {'':32s} e.g. {example}")
        if first:
            mismatches.append(first)
    return computed, mismatches


# -- per-call timings -------------------------------------------------------------------------


def per_call_us(
    call: Callable[..., Any], args: list[tuple[object, ...]], before: Callable[[], None]
) -> float:
    best = float("inf")
    for _ in range(5):
        before()
        started = time.perf_counter()
        for item in args:
            call(*item)
        best = min(best, time.perf_counter() - started)
    return best / len(args) * 1e6


def timings(ports: Ports, computed: dict[str, list[tuple[object, ...]]]) -> None:
    def clear() -> None:
        for cache_clear in ports.caches:
            cache_clear()

    def nothing() -> None:
        pass

    print(
        f"\nmicroseconds per call, {TIMED} distinct inputs (both ports compute a value), "
        "degenbot's caches cleared before each run"
    )
    print(f"  {'function':32s} {'ours':>8s} {'degenbot':>9s} {'ratio':>6s} {'degenbot hit':>13s}")
    for name, (ours, theirs) in ports.functions.items():
        distinct = list(dict.fromkeys(computed[name]))[:TIMED]
        mine = per_call_us(ours, distinct, nothing)
        other = per_call_us(theirs, distinct, clear)
        hit = per_call_us(theirs, [distinct[0]] * len(distinct), nothing)
        print(f"  {name:32s} {mine:8.2f} {other:9.2f} {other / mine:5.2f}x {hit:13.2f}")


# -- swaps ------------------------------------------------------------------------------------


class Library(NamedTuple):
    """One port's functions the swap loop calls."""

    sqrt_ratio_at_tick: Callable[[int], int]
    tick_at_sqrt_ratio: Callable[[int], int]
    compute_swap_step: Callable[[int, int, int, int, int], tuple[int, int, int, int]]


def swap_loop(
    library: Library,
    next_tick: Callable[[int, bool], tuple[int, bool]],
    liquidity_net: dict[int, int],
    state: tuple[int, int, int],
    zero_for_one: bool,
    amount_specified: int,
    sqrt_price_limit: int,
) -> tuple[int, int]:
    """``UniswapV3Pool.swap``'s loop, as a quote: ``(amount0, amount1)`` from ``state``.

    ``state`` is ``(sqrt_price_x96, tick, liquidity)``; the price limit is not checked.
    """
    sqrt_price, tick, liquidity = state
    remaining, calculated = amount_specified, 0
    exact_input = amount_specified > 0
    while remaining != 0 and sqrt_price != sqrt_price_limit:
        start = sqrt_price
        tick_next, initialized = next_tick(tick, zero_for_one)
        tick_next = min(max(tick_next, -887272), 887272)
        sqrt_next = library.sqrt_ratio_at_tick(tick_next)
        if zero_for_one:
            target = sqrt_price_limit if sqrt_next < sqrt_price_limit else sqrt_next
        else:
            target = sqrt_price_limit if sqrt_next > sqrt_price_limit else sqrt_next
        sqrt_price, amount_in, amount_out, fee_amount = library.compute_swap_step(
            sqrt_price, target, liquidity, remaining, FEE
        )
        if exact_input:
            remaining -= amount_in + fee_amount
            calculated -= amount_out
        else:
            remaining += amount_out
            calculated += amount_in + fee_amount
        if sqrt_price == sqrt_next:
            if initialized:
                net = liquidity_net[tick_next]
                liquidity += -net if zero_for_one else net
            tick = tick_next - 1 if zero_for_one else tick_next
        elif sqrt_price != start:
            tick = library.tick_at_sqrt_ratio(sqrt_price)
    if zero_for_one == exact_input:
        return amount_specified - remaining, calculated
    return calculated, amount_specified - remaining


def pool_with_ticks(v3: ModuleType, count: int) -> Any:
    """``bench_amm.py``'s layout: a full-range position and ``count`` stacked below the price."""
    pool = v3.Pool(FEE, SPACING, v3.get_sqrt_ratio_at_tick(0))
    pool.mint(-887220, 887220, 10**18)
    for index in range(1, count + 1):
        pool.mint(-SPACING * index, -SPACING * (index - 1) if index > 1 else SPACING, 10**16)
    return pool


def best_us(call: Callable[[], object], number: int, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            call()
        best = min(best, time.perf_counter() - started)
    return best / number * 1e6


class Degenbot(NamedTuple):
    """degenbot's swap loop functions, its bitmap/tick types, and its cache clearing."""

    library: Library
    tick_bitmap: ModuleType
    word: type
    tick: type
    clear: Callable[[], None]


def swap_row(v3: ModuleType, port: Degenbot, count: int) -> tuple[list[float], list[str]]:
    """us/swap of each variant crossing ``count`` ticks, and any result differing from ours."""
    pool = pool_with_ticks(v3, count)
    limit = v3.get_sqrt_ratio_at_tick(-SPACING * count - 30)
    amount = 2**255 - 1
    state = (pool.sqrt_price_x96, pool.tick, pool.liquidity)
    liquidity_net = {tick: info.liquidity_net for tick, info in pool.ticks.items()}
    bitmap = dict(pool.tick_bitmap)
    words = range((-887272 // SPACING >> 8) - 1, (887272 // SPACING >> 8) + 2)
    d_words = {word: port.word() for word in words}
    for tick in pool.ticks:  # degenbot's own flip_tick builds its bitmap
        port.tick_bitmap.flip_tick(d_words, tick, SPACING)
    d_ticks = {
        tick: port.tick(info.liquidity_net, info.liquidity_gross)
        for tick, info in pool.ticks.items()
    }
    ours = Library(v3.get_sqrt_ratio_at_tick, v3.get_tick_at_sqrt_ratio, v3.compute_swap_step)

    def our_next(tick: int, lte: bool) -> tuple[int, bool]:
        return v3.next_initialized_tick_within_one_word(bitmap, tick, SPACING, lte)

    def walk_next(tick: int, lte: bool) -> tuple[int, bool]:
        walk = port.tick_bitmap.next_initialized_tick_within_one_word_legacy
        return walk(d_words, tick, SPACING, lte)

    def data_next(tick: int, lte: bool) -> tuple[int, bool]:
        lookup = port.tick_bitmap.next_initialized_tick_within_one_word
        return lookup(d_words, d_ticks, tick, SPACING, lte)

    def loop(library: Library, next_tick: Callable[[int, bool], tuple[int, bool]]) -> Any:
        return lambda: swap_loop(library, next_tick, liquidity_net, state, True, amount, limit)

    def nothing() -> None:
        pass

    variants = [
        ("loop: ours", loop(ours, our_next), nothing),
        ("loop: degenbot bitmap", loop(port.library, walk_next), port.clear),
        ("loop: degenbot ticks", loop(port.library, data_next), port.clear),
    ]
    expected = copy.deepcopy(pool).swap(True, amount, limit)
    number = max(5, 1000 // max(count, 1))
    copying = best_us(lambda: copy.deepcopy(pool), number)
    figures = [best_us(lambda: copy.deepcopy(pool).swap(True, amount, limit), number) - copying]
    mismatches = []
    for title, call, before in variants:
        port.clear()
        got = call()
        if got != expected:
            mismatches.append(f"{title}, {count} ticks: {got} != Pool.swap's {expected}")
        before_us = best_us(before, number)
        figures.append(
            best_us(lambda call=call, before=before: (before(), call()), number) - before_us
        )
    return figures, mismatches


def swaps(v3: ModuleType, ports: Ports, degenbot: dict[str, ModuleType]) -> list[str]:
    from degenbot.uniswap.types import UniswapV3BitmapAtWord, UniswapV3LiquidityAtTick

    def clear() -> None:
        for cache_clear in ports.caches:
            cache_clear()

    library = Library(
        degenbot["tick_math"].get_sqrt_ratio_at_tick,
        degenbot["tick_math"].get_tick_at_sqrt_ratio,
        degenbot["swap_math"].compute_swap_step,
    )
    port = Degenbot(
        library, degenbot["tick_bitmap"], UniswapV3BitmapAtWord, UniswapV3LiquidityAtTick, clear
    )
    print(
        "\nV3 swaps, zero for one, exact input down to just past the N-th initialized tick "
        "(us/swap, swaps/s)"
    )
    header = ["Pool.swap (ours)", "loop: ours", "loop: degenbot bitmap", "loop: degenbot ticks"]
    print(f"  {'ticks':>5s}" + "".join(f" {title:>23s}" for title in header))
    mismatches: list[str] = []
    for count in (0, 10, 100):
        figures, wrong = swap_row(v3, port, count)
        mismatches += wrong
        cells = "".join(f" {us:10.1f} us {1e6 / us:7.0f}/s" for us in figures)
        print(f"  {count:5d}{cells}")
    return mismatches


def main() -> None:
    if find_spec("degenbot") is None:
        rerun_with_degenbot()
    v3, amm_error, foreign = import_toolkit_amm()
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(
        f"degenbot {version('degenbot')} against toolkit.amm, Python {platform.python_version()} "
        f"({sys.prefix})"
    )
    if foreign:
        print(f"importing toolkit.amm loaded modules beyond the stdlib: {', '.join(foreign)}")
    else:
        print("importing toolkit.amm loaded the stdlib only")
    ports, modules = load_ports(v3, amm_error)
    computed, mismatches = parity(ports, inputs(v3, random.Random(SEED)))
    timings(ports, computed)
    mismatches += swaps(v3, ports, modules)
    print(
        "\nloop: the same swap loop (UniswapV3Pool.swap's) over each port's functions; degenbot "
        "0.3.0's UniswapV3Pool needs a web3 connection to be built, so it is not timed itself"
    )
    if mismatches:
        report(mismatches)


def report(mismatches: Iterable[str]) -> None:
    print("\nPARITY MISMATCH (first differing input of each):", file=sys.stderr)
    for line in mismatches:
        print(f"  {line}", file=sys.stderr)
    raise SystemExit(1)


if __name__ == "__main__":
    main()
