"""TextParts: the text of many small pieces, kept in few large strings."""

from __future__ import annotations

import sys

from cursor_byok.conversation.text import BLOCK
from cursor_byok.conversation.text import LARGE
from cursor_byok.conversation.text import TextParts


def test_take_is_the_pieces_joined_and_empties_it() -> None:
    parts = TextParts()
    pieces = [f"piece {i}; " for i in range(5000)] + ["", "é✓", "x" * 20000]
    for piece in pieces:
        parts.append(piece)
    assert parts and parts.chars == sum(map(len, pieces))
    assert parts.take() == "".join(pieces)
    assert not parts and parts.take() == ""


def test_small_pieces_cost_about_their_characters() -> None:
    parts = TextParts()
    for _ in range(50_000):
        parts.append("a" * 20)  # one million characters
    held = sys.getsizeof(parts._current) + sum(sys.getsizeof(piece) for piece in parts._pieces)
    assert held < 1.1 * 1_000_000  # a list of the pieces: ~3.5 MB
    assert len(parts._pieces) * 20 < BLOCK


def test_truncate_forgets_what_came_after_a_mark() -> None:
    parts = TextParts()
    for i in range(3000):
        parts.append(f"{i:05d}")
    mark = parts.chars
    parts.append("abandoned " * 2000)
    parts.truncate(mark)
    parts.truncate(mark + 5)  # past the end: nothing changes
    assert parts.take() == "".join(f"{i:05d}" for i in range(3000))


def test_blocks_are_joined_into_large_strings_that_glibc_gives_back() -> None:
    """Past LARGE characters the current string (grown from heap blocks to pages of its own)
    is set aside and a new one begins; what is held stays one large string short."""
    parts = TextParts()
    pieces = [f"{i:07d}" + "y" * 1017 for i in range(3000)]  # ~3 MiB of 1 KiB deltas
    for piece in pieces:
        parts.append(piece)
    assert len(parts._large) == 2 and all(len(s) >= LARGE for s in parts._large)
    assert len(parts._current) < LARGE
    assert parts.take() == "".join(pieces)
    assert parts._large == [] and parts._current == ""


def test_take_of_a_long_text_never_holds_it_twice() -> None:
    """`take` grows one string in place, letting each block go: a long answer is never in
    memory twice at once (`"".join` held the blocks and the whole: issue 38)."""
    import tracemalloc

    tracemalloc.start()
    try:
        parts = TextParts()
        for _ in range(8 * 1024):
            parts.append("x" * 1024)  # 8 MiB, in blocks
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        text = parts.take()
        peak = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    assert len(text) == 8 * 1024 * 1024
    assert peak < 0.3 * len(text)  # "".join: the whole beside its blocks, 1x more


def test_the_large_strings_grow_without_a_second_copy() -> None:
    """Blocks go into the current large string as they are made, which grows in place: no
    moment holds a large string's blocks and the string made of them (issue 38)."""
    import tracemalloc

    tracemalloc.start()
    try:
        parts = TextParts()
        peak_over = 0
        for _ in range(3 * LARGE // 1000):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            parts.append("y" * 1000)
            peak_over = max(peak_over, tracemalloc.get_traced_memory()[1] - before)
    finally:
        tracemalloc.stop()
    assert parts.chars == 3 * LARGE // 1000 * 1000
    assert len(parts._large) == 2
    assert peak_over < LARGE // 4  # joining a large string's blocks at once: LARGE more
