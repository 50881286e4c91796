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


def test_seal_keeps_the_joined_text_as_the_content() -> None:
    parts = TextParts()
    pieces = [f"{i:04d}" for i in range(5000)]
    for piece in pieces:
        parts.append(piece)
    text = parts.seal()
    assert text == "".join(pieces) and parts.chars == len(text)
    assert parts.view(0, len(text))[0] is text  # the string itself, not a copy
    assert parts.view(4, 12) == [text[4:12]]


def test_view_is_a_range_without_taking() -> None:
    parts = TextParts()
    pieces = [f"{i:07d}" + "y" * 1017 for i in range(1100)] + ["tail", "end"]  # large + current
    for piece in pieces:
        parts.append(piece)
    whole = "".join(pieces)
    ends = [(0, len(whole)), (5, 9), (LARGE - 3, LARGE + 3), (len(whole) - 5, len(whole))]
    for start, end in ends:
        assert "".join(parts.view(start, end)) == whole[start:end]
    assert parts.view(7, 7) == []
    assert parts.take() == whole  # untouched by the views


def test_a_view_is_ranges_of_its_sources_and_text_of_its_own() -> None:
    """Against a plain string: random deltas from two sources and none, truncations, and the
    sources sealed (as the adapters do when a part ends) or not."""
    import random

    from cursor_byok.conversation.text import TextView

    rng = random.Random(38)
    for round_ in range(200):
        view, expected = TextView(), ""
        sources = [TextParts(), TextParts()]
        for _ in range(rng.randrange(1, 40)):
            action = rng.random()
            text = "".join(rng.choices("abcé🙂 ", k=rng.randrange(0, 30)))
            if action < 0.6:
                source = rng.choice(sources)
                source.append(text)
                view.append(text, source, source.chars)
                expected += text
            elif action < 0.8:
                view.append(text)
                expected += text
            elif action < 0.9:
                keep = rng.randrange(0, len(expected) + 3)
                view.truncate(keep)
                expected = expected[:keep]
            else:
                sealed = rng.choice(sources)
                sealed.seal()
                sources[sources.index(sealed)] = TextParts()
            assert view.chars == len(expected)
        assert bool(view) == bool(expected)
        assert view.take() == expected, round_
        assert not view and view.take() == ""


def test_a_view_of_one_sealed_part_is_that_string() -> None:
    from cursor_byok.conversation.text import TextView

    source, view = TextParts(), TextView()
    for i in range(3000):
        source.append(f"{i:05d}")
        view.append(f"{i:05d}", source, source.chars)
    text = source.seal()
    assert view.take() is text  # the history's string: the UI's record made no copy
