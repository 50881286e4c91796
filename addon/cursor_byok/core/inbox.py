"""Per-request ordering of BidiAppend uploads by `append_seqno` (protocol.md §5). Sans-IO.

The client sends BidiAppends concurrently, so they arrive in any order and may be retried. The
inbox releases each seqno exactly once, in order, starting at 0; gaps wait (bounded per inbox and
by a `Budget` shared by all inboxes), duplicates are dropped. Time is an input (`now`), never read
from a clock here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code

DEFAULT_MAX_BUFFERED = 1024
DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024


class Outcome(enum.Enum):
    RELEASED = "released"  # this seqno (and maybe buffered successors) went out now
    BUFFERED = "buffered"  # waits for an earlier seqno
    DUPLICATE = "duplicate"  # already released or already buffered; dropped


class InboxOverflow(ByokError):
    """Too many out-of-order messages are waiting for a gap to fill."""

    code = Code.RESOURCE_EXHAUSTED


class Budget:
    """Bytes of out-of-order uploads waiting, across every inbox that shares it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0


@dataclass(frozen=True, slots=True)
class Pushed[T]:
    outcome: Outcome
    released: list[T]


class Inbox[T]:
    def __init__(
        self,
        *,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        budget: Budget | None = None,
    ) -> None:
        self.next_seqno = 0
        self._waiting: dict[int, tuple[T, int]] = {}
        self._waiting_bytes = 0
        self._max_buffered = max_buffered
        self._max_buffered_bytes = max_buffered_bytes
        self._budget = budget
        self.gap_since: float | None = None
        self.duplicates = 0

    @property
    def buffered(self) -> int:
        return len(self._waiting)

    def push(self, seqno: int, item: T, *, size: int = 0, now: float = 0.0) -> Pushed[T]:
        """Offer one upload; returns what may be processed now, in seqno order."""
        if seqno < self.next_seqno or seqno in self._waiting:
            self.duplicates += 1
            return Pushed(Outcome.DUPLICATE, [])
        if seqno > self.next_seqno:
            self._check_room(size)
            self._waiting[seqno] = (item, size)
            self._take(size)
            if self.gap_since is None:
                self.gap_since = now
            return Pushed(Outcome.BUFFERED, [])
        released = [item]
        self.next_seqno += 1
        while self.next_seqno in self._waiting:
            waiting, waiting_size = self._waiting.pop(self.next_seqno)
            self._take(-waiting_size)
            released.append(waiting)
            self.next_seqno += 1
        self.gap_since = now if self._waiting else None
        return Pushed(Outcome.RELEASED, released)

    def _check_room(self, size: int) -> None:
        if len(self._waiting) >= self._max_buffered or (
            self._waiting_bytes + size > self._max_buffered_bytes
        ):
            raise InboxOverflow(
                f"{len(self._waiting)} uploads wait for append_seqno {self.next_seqno}"
            )
        budget = self._budget
        if budget is not None and budget.used + size > budget.limit:
            raise InboxOverflow(
                f"out-of-order uploads of all requests exceed {budget.limit} bytes "
                f"(this request waits for append_seqno {self.next_seqno})"
            )

    def _take(self, size: int) -> None:
        self._waiting_bytes += size
        if self._budget is not None:
            self._budget.used += size

    def clear(self) -> None:
        """Drop everything waiting (the request is gone or failed) and return its budget."""
        self._take(-self._waiting_bytes)
        self._waiting.clear()
        self.gap_since = None

    def gap_age(self, now: float) -> float:
        """Seconds the oldest unfilled gap has been open (0 when nothing waits)."""
        return 0.0 if self.gap_since is None else now - self.gap_since
