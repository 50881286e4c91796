"""The limit on unattended model calls (agent/attended.py), against a stand-in run channel."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from cursor_byok.agent.attended import attended


class Channel:
    """What `attended` reads of a run: since when it has no stream, and a wake-up on change."""

    def __init__(self) -> None:
        self.detached_since: float | None = None
        self._watchers: list[asyncio.Future[None]] = []

    def clock(self) -> float:
        return asyncio.get_running_loop().time()

    def watch_streams(self) -> asyncio.Future[None]:
        watcher = asyncio.get_running_loop().create_future()
        self._watchers.append(watcher)
        return watcher

    def set(self, detached: bool) -> None:
        self.detached_since = self.clock() if detached else None
        watchers, self._watchers = self._watchers, []
        for w in watchers:
            if not w.done():
                w.set_result(None)


class FakeTurn:
    def __init__(self, limit: float) -> None:
        self.live = Channel()
        self.options = SimpleNamespace(detached_call_limit=limit)
        self.request_id = "r1"
        self.shown: list[str] = []
        self.ui = self

    def mark(self) -> int:
        return len(self.shown)

    def rewind(self, mark: int) -> None:
        del self.shown[mark:]


async def test_an_attended_call_is_left_alone() -> None:
    turn = FakeTurn(limit=0.01)

    async def call() -> str:
        await asyncio.sleep(0)  # yields: a call that takes its time while a stream reads it
        return "answer"

    assert await attended(turn, call) == "answer"


async def test_an_unread_call_is_aborted_then_made_again_when_a_stream_attaches() -> None:
    turn = FakeTurn(limit=0.05)
    started: list[int] = []
    aborted = asyncio.Event()

    async def call() -> str:
        started.append(1)
        turn.shown.append(f"partial {len(started)}")
        if len(started) == 1:
            try:
                await asyncio.Event().wait()  # streams forever: only an abort ends it
            except asyncio.CancelledError:
                aborted.set()
                raise
        return "answer"

    turn.live.set(detached=True)
    task = asyncio.ensure_future(attended(turn, call))
    async with asyncio.timeout(5):
        await aborted.wait()
    for _ in range(3):
        await asyncio.sleep(0)  # let attended see the abort through
    assert len(started) == 1 and not task.done()  # no new call while nobody reads
    turn.live.set(detached=False)
    async with asyncio.timeout(5):
        assert await task == "answer"
    assert len(started) == 2 and turn.shown == ["partial 2"]  # the abandoned text forgotten


async def test_a_reconnect_within_the_limit_keeps_the_call() -> None:
    turn = FakeTurn(limit=5.0)
    release = asyncio.Event()

    async def call() -> str:
        await release.wait()
        return "answer"

    turn.live.set(detached=True)
    task = asyncio.ensure_future(attended(turn, call))
    await asyncio.sleep(0)
    turn.live.set(detached=False)  # the stream is back long before the limit
    release.set()
    async with asyncio.timeout(5):
        assert await task == "answer"
