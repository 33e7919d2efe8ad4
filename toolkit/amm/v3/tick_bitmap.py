"""TickBitmap of v3-core: one bit per initializable tick, 256 ticks to a word.

A bitmap is a ``dict`` from the int16 word position to its uint256 word; absent words are 0.

>>> bitmap: dict[int, int] = {}
>>> flip_tick(bitmap, -60, 60); flip_tick(bitmap, 600, 60)
>>> next_initialized_tick_within_one_word(bitmap, -1, 60, True)
(-60, True)
>>> next_initialized_tick_within_one_word(bitmap, 0, 60, False)
(600, True)
>>> next_initialized_tick_within_one_word(bitmap, -120, 60, True)  # to the word's start
(-15360, False)
"""

from __future__ import annotations

from toolkit.amm.errors import AmmError

__all__ = ["flip_tick", "next_initialized_tick_within_one_word", "position"]


def position(tick: int) -> tuple[int, int]:
    """``(wordPos, bitPos)`` of a compressed tick: ``(tick >> 8, tick % 256)``."""
    return tick >> 8, tick & 0xFF


def flip_tick(bitmap: dict[int, int], tick: int, tick_spacing: int) -> None:
    """``TickBitmap.flipTick``: toggle ``tick``'s bit; reverts unless spaced."""
    if tick % tick_spacing:
        raise AmmError("TickBitmap: require(tick % tickSpacing == 0)")
    compressed = tick // tick_spacing
    word_pos, bit_pos = compressed >> 8, compressed & 0xFF
    word = bitmap.get(word_pos, 0) ^ (1 << bit_pos)
    if word:
        bitmap[word_pos] = word
    else:
        bitmap.pop(word_pos, None)


def next_initialized_tick_within_one_word(
    bitmap: dict[int, int], tick: int, tick_spacing: int, lte: bool
) -> tuple[int, bool]:
    """``nextInitializedTickWithinOneWord``: the next initialized tick in the same word.

    Searching left (``lte``) includes ``tick``; searching right starts after it. When none is
    initialized, returns the last tick of the word searched, with ``False``.
    """
    compressed = tick // tick_spacing  # rounds towards negative infinity, as the contract
    if lte:
        word_pos, bit_pos = compressed >> 8, compressed & 0xFF
        masked = bitmap.get(word_pos, 0) & ((2 << bit_pos) - 1)
        if masked:
            msb = masked.bit_length() - 1
            return (compressed - (bit_pos - msb)) * tick_spacing, True
        return (compressed - bit_pos) * tick_spacing, False
    compressed += 1
    word_pos, bit_pos = compressed >> 8, compressed & 0xFF
    masked = bitmap.get(word_pos, 0) >> bit_pos << bit_pos
    if masked:
        lsb = (masked & -masked).bit_length() - 1
        return (compressed + (lsb - bit_pos)) * tick_spacing, True
    return (compressed + (255 - bit_pos)) * tick_spacing, False
