"""The idle limit between SSE events (issue 27 item 2): keep-alive comments do not reset it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from cursor_byok.providers.adapter import decode_stream
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.providers.sse import SseEvent

EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'


async def _body(first: list[bytes], comments: asyncio.Queue) -> AsyncIterator[bytes]:
    for chunk in first:
        yield chunk
    while True:  # then whatever the test feeds, for ever
        yield await comments.get()


class _State:
    """Counts events; never done."""

    done = False

    def __init__(self) -> None:
        self.events: list[SseEvent] = []

    def on_event(self, event: SseEvent) -> list:
        self.events.append(event)
        return [event.data]

    def on_eof(self) -> list:
        return []


async def test_comments_do_not_reset_the_idle_limit() -> None:
    feed: asyncio.Queue[bytes] = asyncio.Queue()
    for _ in range(50):
        feed.put_nowait(b": keep-alive\n\n")
    state = _State()
    got = []
    with pytest.raises(ProviderError) as caught:
        async for event in decode_stream(
            _body([EVENT], feed), state, provider="p", idle_timeout=0.2
        ):
            got.append(event)
    assert len(got) == 1
    error = caught.value
    assert error.kind == "timeout" and error.reason == "idle_timeout" and not error.retryable
    assert "50 keep-alive comments do not count" in error.message
    assert "idle_timeout in [providers.p]" in error.message


async def _events(count: int, gap: float) -> AsyncIterator[bytes]:
    for _ in range(count):
        if gap:
            await asyncio.sleep(gap)
        yield EVENT


async def test_one_timer_for_the_whole_stream(monkeypatch) -> None:
    """The idle deadline moves with every event without arming a timer per read (an
    asyncio.timeout per read cost ~5 % of the proxy's CPU at 20 streams)."""
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at = loop.call_at

    def counting(when, callback, *args, **kwargs):
        armed.append(when)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting)
    got = [e async for e in decode_stream(_events(200, 0), _State(), idle_timeout=60)]
    assert len(got) == 200
    assert len(armed) == 1, len(armed)


async def test_events_keep_the_stream_alive_past_the_first_deadline() -> None:
    """The timer armed at the first read finds the deadline moved on and follows it."""
    got = [e async for e in decode_stream(_events(14, 0.05), _State(), idle_timeout=0.5)]
    assert len(got) == 14  # 0.7 s of events, each well within 0.5 s of the last


async def test_a_cancelled_consumer_is_cancelled_not_idle() -> None:
    """A cancellation from outside (the user stopped the turn) stays a cancellation."""
    feed: asyncio.Queue[bytes] = asyncio.Queue()
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in decode_stream(_body([EVENT], feed), _State(), idle_timeout=30):
            started.set()

    task = asyncio.ensure_future(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
