"""When a RunPoll answers (issue 38 item 1): what is readable when the poll comes goes at once;
a poll that waited stays open one coalescing window after its first frame, so one poll carries
the frames of that window instead of one flow per frame; a full poll goes at once."""

from __future__ import annotations

import asyncio

from cursor_byok.proxy.run_poll import GATHER_BYTES
from cursor_byok.proxy.run_poll import _Gather


async def test_frames_readable_when_the_poll_comes_are_answered_at_once() -> None:
    loop = asyncio.get_running_loop()
    until: asyncio.Future[None] = loop.create_future()
    gather = _Gather(loop, until, window=0.015)
    gather.wrote(100)  # the poll's first look, in the same step
    assert until.done()
    gather.cancel()


async def test_a_poll_that_waited_gathers_one_window_then_answers() -> None:
    loop = asyncio.get_running_loop()
    until: asyncio.Future[None] = loop.create_future()
    gather = _Gather(loop, until, window=0.015)
    await asyncio.sleep(0)  # the first look found nothing: the poll waits
    assert gather.waited
    gather.wrote(100)
    assert not until.done()  # a second frame within the window joins this answer
    gather.wrote(100)
    assert not until.done()
    await asyncio.wait_for(until, 5)  # the window's timer answers it
    gather.cancel()


async def test_a_poll_that_waited_answers_at_once_when_full_or_without_coalescing() -> None:
    loop = asyncio.get_running_loop()
    full: asyncio.Future[None] = loop.create_future()
    gather = _Gather(loop, full, window=60.0)
    await asyncio.sleep(0)
    gather.wrote(GATHER_BYTES)
    assert full.done()
    gather.cancel()
    plain: asyncio.Future[None] = loop.create_future()
    off = _Gather(loop, plain, window=0.0)  # cursor_byok_coalesce_ms=0: every frame at once
    await asyncio.sleep(0)
    off.wrote(10)
    assert plain.done()
    off.cancel()
