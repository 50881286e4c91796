"""append_seqno ordering: exactly once, in order, whatever the arrival order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cursor_byok.core.inbox import Inbox
from cursor_byok.core.inbox import InboxOverflow
from cursor_byok.core.inbox import Outcome


@given(st.permutations(range(40)), st.lists(st.integers(0, 39), max_size=30), st.randoms())
def test_any_order_with_duplicates_releases_each_once_in_order(order, dups, rnd) -> None:
    arrivals = list(order) + list(dups)
    rnd.shuffle(arrivals)
    inbox: Inbox[int] = Inbox()
    out: list[int] = []
    for seqno in arrivals:
        out += inbox.push(seqno, seqno).released
    assert out == list(range(40))
    assert inbox.buffered == 0


def test_many_random_permutations() -> None:
    rnd = random.Random(1234)
    for _ in range(2000):
        n = rnd.randint(1, 30)
        arrivals = list(range(n)) * rnd.randint(1, 3)
        rnd.shuffle(arrivals)
        inbox: Inbox[int] = Inbox()
        out = [x for s in arrivals for x in inbox.push(s, s).released]
        assert out == list(range(n))


def test_outcomes_and_first_copy_wins() -> None:
    inbox: Inbox[str] = Inbox()
    assert inbox.push(1, "first").outcome is Outcome.BUFFERED
    assert inbox.push(1, "second").outcome is Outcome.DUPLICATE
    pushed = inbox.push(0, "zero")
    assert pushed.outcome is Outcome.RELEASED
    assert pushed.released == ["zero", "first"]
    assert inbox.push(0, "again").outcome is Outcome.DUPLICATE
    assert inbox.duplicates == 2


def test_gap_age_tracks_the_oldest_open_gap() -> None:
    inbox: Inbox[int] = Inbox()
    assert inbox.gap_age(100.0) == 0.0
    inbox.push(2, 2, now=10.0)
    inbox.push(3, 3, now=12.0)
    assert inbox.gap_age(15.0) == 5.0
    inbox.push(0, 0, now=16.0)  # seqno 1 still missing: the gap stays open
    assert inbox.gap_age(20.0) == 4.0
    inbox.push(1, 1, now=21.0)
    assert inbox.gap_age(30.0) == 0.0


def test_bounded_by_count_and_bytes() -> None:
    inbox: Inbox[int] = Inbox(max_buffered=3)
    for s in (1, 2, 3):
        inbox.push(s, s)
    with pytest.raises(InboxOverflow):
        inbox.push(4, 4)
    small: Inbox[int] = Inbox(max_buffered_bytes=100)
    small.push(1, 1, size=60)
    with pytest.raises(InboxOverflow):
        small.push(2, 2, size=60)
