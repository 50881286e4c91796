"""When the run core must run next: one timer for every attempt and run (sans-IO).

The shell asks after every frame, and holding deltas for coalescing makes a deadline every few
milliseconds per run, so asking must cost O(1); see `Deadlines`.
"""

from __future__ import annotations

import heapq
import itertools
import math


class Deadlines[R]:
    """When `tick` must next run, kept so that asking costs O(1): the shell asks after every
    frame, and holding deltas for coalescing makes a deadline every few milliseconds per run.

    Coalescing releases are many, short and exact: each is an entry of a heap (one that was
    taken out early by another frame is skipped when it comes up). Every other timer (heartbeats,
    grace, linger, run-request, gap and exec time-outs) is few and long, and is covered by one
    lower bound, `scan_at`: whatever can bring a deadline forward lowers it (`due`), and the
    registry's `tick` scans everything and makes it exact again once it is reached. So the one
    timer may fire early for those, never late."""

    def __init__(self) -> None:
        self.scan_at = math.inf
        self._releases: list[tuple[float, int, R]] = []
        self._order = itertools.count()  # ties between runs never compare runs

    def due(self, when: float) -> None:
        """Something may need `tick` at `when`."""
        if when < self.scan_at:
            self.scan_at = when

    def release_at(self, when: float, run: R) -> None:
        """`run`'s held deltas may go out at `when`."""
        heapq.heappush(self._releases, (when, next(self._order), run))

    def next(self) -> float | None:
        when = self.scan_at
        releases = self._releases
        if releases and releases[0][0] < when:
            when = releases[0][0]
        return None if when == math.inf else when

    def releases_due(self, now: float) -> list[R]:
        """The runs whose release time has come (some may have been released already)."""
        releases = self._releases
        due = []
        while releases and releases[0][0] <= now:
            due.append(heapq.heappop(releases)[2])
        return due
