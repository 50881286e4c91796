"""A produced stream started before its loopback request arrives (proxy/loopback/prefetch.py):
what it made is kept until claimed, in order; an early close or a release cancels it where it
waits; one never claimed is cancelled after its deadline."""

from __future__ import annotations

import asyncio

import pytest

from cursor_byok.proxy.loopback.prefetch import Prefetched


async def test_the_producer_runs_before_it_is_claimed_and_nothing_is_lost() -> None:
    started = asyncio.Event()

    async def producer():
        started.set()
        for n in range(3):
            yield b"%d" % n

    held = Prefetched(producer, unclaimed=30)
    await asyncio.wait_for(started.wait(), 10)  # running before anyone reads
    assert [chunk async for chunk in held.claim()] == [b"0", b"1", b"2"]


async def test_closing_the_reader_early_cancels_the_producer() -> None:
    cancelled = asyncio.Event()

    async def producer():
        yield b"first"
        try:
            await asyncio.Event().wait()  # a provider that never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise
        yield b"never"

    held = Prefetched(producer, unclaimed=30)
    chunks = held.claim()
    assert await anext(chunks) == b"first"
    await chunks.aclose()  # the client went away
    await asyncio.wait_for(cancelled.wait(), 10)


async def test_an_unclaimed_or_released_producer_is_cancelled() -> None:
    for release in (True, False):
        started, cancelled = asyncio.Event(), asyncio.Event()

        async def producer(started=started, cancelled=cancelled):
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            yield b""

        held = Prefetched(producer, unclaimed=30 if release else 0.05)
        await asyncio.wait_for(started.wait(), 10)
        if release:
            held.cancel()  # the flow ended before it reached the loopback server
        await asyncio.wait_for(cancelled.wait(), 10)
        await held.wait_closed()


async def test_the_producer_error_reaches_the_reader() -> None:
    async def producer():
        yield b"a"
        raise ValueError("broken")

    held = Prefetched(producer, unclaimed=30)
    chunks = held.claim()
    assert await anext(chunks) == b"a"
    with pytest.raises(ValueError, match="broken"):
        await anext(chunks)
