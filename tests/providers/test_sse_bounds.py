"""A line that never ends must fail the call with a clear error and bounded memory (issue 13)."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest
from fakes.fake_provider import FakeProvider
from fakes.sse_wire import decode_all

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import make_provider
from cursor_byok.providers.openai_chat import ChatStreamState
from cursor_byok.providers.sse import MAX_LINE_BYTES
from cursor_byok.providers.sse import SseParser
from cursor_byok.providers.sse import SseTooLarge

MiB = 1024 * 1024


def test_parser_refuses_a_line_longer_than_the_limit_before_buffering_more() -> None:
    parser = SseParser(max_line=4 * MiB)
    fed = 0
    with pytest.raises(SseTooLarge, match="SSE line larger than"):
        parser.feed(b"data: ")
        for _ in range(300):  # a 300 MiB line, in fresh 1 MiB chunks
            parser.feed(b"a" * MiB)
            fed += MiB
    assert fed <= 4 * MiB


def test_parser_refuses_an_oversized_line_that_arrives_in_one_chunk() -> None:
    parser = SseParser(max_line=1024)
    with pytest.raises(SseTooLarge):
        parser.feed(b"data: " + b"x" * 2000 + b"\n\n")


def test_parser_refuses_an_event_of_many_lines_over_the_event_limit() -> None:
    parser = SseParser(max_line=1024, max_event=4096)
    with pytest.raises(SseTooLarge, match="SSE event"):
        for _ in range(10):
            parser.feed(b"data: " + b"y" * 1000 + b"\n")


def test_an_event_of_empty_data_lines_is_bounded_by_what_it_holds() -> None:
    """6 bytes a line on the wire (a few hundred KB as gzip), yet each held line costs a list
    slot: the bound counts that, so such an event stops at about `max_event` of memory."""
    parser = SseParser(max_event=4 * MiB)
    piece = b"data:\n" * 10_000
    lines = 0
    with pytest.raises(SseTooLarge, match="SSE event"):
        for _ in range(1000):
            parser.feed(piece)
            lines += 10_000
    assert lines <= 4 * MiB // 40


def test_lines_and_events_under_the_limits_still_parse() -> None:
    parser = SseParser(max_line=1024, max_event=4096)
    events = parser.feed(b"data: " + b"z" * 1000 + b"\n\n")
    assert len(events) == 1 and len(events[0].data) == 1000


def test_decode_reports_an_oversized_line_as_a_protocol_error() -> None:
    state = ChatStreamState(provider="p", model="m")
    chunks = (b"data: " + b"a" * MiB for _ in range(MAX_LINE_BYTES // MiB + 2))
    events, error = decode_all(state, chunks)
    assert events == []
    assert error is not None and error.kind == "protocol" and not error.retryable
    assert "32 MiB" in error.message


@pytest.mark.timeout(120)
async def test_a_300_mib_line_fails_the_call_with_bounded_memory() -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.giant(300 * MiB)
        provider = make_provider(fp.settings("openai-chat", name="hugeline"))
        request = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])
        tracemalloc.start()
        try:
            with pytest.raises(ProviderError) as caught:
                async for _ in provider.stream(request):
                    pass
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            await provider.aclose()
        await asyncio.sleep(0)
        sent = fp.requests[0].sent_bytes
    error = caught.value
    assert error.kind == "protocol" and error.provider == "hugeline"
    assert "larger than 32 MiB" in error.message
    # the call stopped near the limit instead of reading all 300 MiB into memory
    assert peak < MAX_LINE_BYTES * 3 // 2, f"peak {peak / MiB:.0f} MiB"
    assert sent < 300 * MiB
