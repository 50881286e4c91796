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
