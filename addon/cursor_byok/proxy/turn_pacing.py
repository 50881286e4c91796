"""Turn starts and closes take turns with the streams already running: one per pass of the loop.

A turn's set-up (its history, its journal, the provider request) and its close (the checkpoint,
the blob SETs) each run for a few milliseconds in one step of the event loop. asyncio runs
everything that is ready in the order it became ready, so twenty turns starting together put
twenty such steps in one pass, and every delta of the streams already running waits behind all
of them (bench/README.md, rounds 13 and 15: the first and last deltas of a turn were the late
ones). A turn that first waits here for its slot runs its step in a pass of its own: a slot is
given once per pass, by a timer due at once, which asyncio runs after the I/O that was ready, so
the streams' deltas go between the steps. A turn alone waits one pass (microseconds).
"""

from __future__ import annotations

import asyncio
from collections import deque


class Pacer:
    """Gives `slot()` to one waiter per pass of the event loop, first come first served."""

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.given = 0  # slots given so far (the tests read it)

    async def slot(self) -> None:
        """Return in a pass of the loop no other waiter of this pacer returns in."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop (tests run several): the old one's timer is gone
            self._loop, self._timer = loop, None
            self._waiting.clear()
        waiter = loop.create_future()
        self._waiting.append(waiter)
        if self._timer is None:
            self._timer = loop.call_at(loop.time(), self._give)
        await waiter

    def _give(self) -> None:
        self._timer = None
        waiting = self._waiting
        while waiting:
            waiter = waiting.popleft()
            if not waiter.done():  # a turn cancelled while it waited is skipped
                waiter.set_result(None)
                self.given += 1
                break
        if waiting and self._loop is not None:
            self._timer = self._loop.call_at(self._loop.time(), self._give)
