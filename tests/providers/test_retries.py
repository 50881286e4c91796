"""Retry policy: only before the first event, only retryable kinds, server delays honoured."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from fakes.mock_upstream import HandlerTransport
from fakes.mock_upstream import MockUpstream
from fakes.mock_upstream import Request
from fakes.mock_upstream import ScriptedResponse
from fakes.sse_wire import sse

from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers import backoff_delay
from cursor_byok.providers import make_provider
from cursor_byok.providers import stream_with_retries
from cursor_byok.providers.provider_error import parse_retry_after

REQ = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])
SETTINGS = ProviderSettings(
    kind="openai-chat", base_url="https://x.test/v1", api_key="sk-k", name="x"
)
OK = [
    sse({"choices": [{"index": 0, "delta": {"content": "hello"}}]}),
    sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    b"data: [DONE]\n\n",
]


def error_body(message: str, code: str) -> list[bytes]:
    return [f'{{"error":{{"message":"{message}","code":"{code}"}}}}'.encode()]


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def run(provider, **kw: Any) -> list[Any]:
    return [e async for e in stream_with_retries(provider, REQ, **kw)]


async def test_429_with_retry_after_then_success() -> None:
    up = MockUpstream()
    up.add(error_body("slow down", "rate_limit_exceeded"), status=429, headers={"retry-after": "2"})
    up.add(
        error_body("slow down", "rate_limit_exceeded"),
        status=429,
        headers={"retry-after-ms": "1500"},
    )
    up.add(OK)
    sleeps = Sleeps()
    calls: list[tuple[int, str, float]] = []

    async def on_retry(attempt: int, error: ProviderError, delay: float) -> None:
        calls.append((attempt, error.kind, delay))

    events = await run(up.provider(SETTINGS), max_retries=2, sleep=sleeps, on_retry=on_retry)
    assert events[0] == TextDelta("hello") and isinstance(events[-1], Finish)
    assert sleeps.delays == [2.0, 1.5]
    assert calls == [(1, "rate_limit", 2.0), (2, "rate_limit", 1.5)]
    assert len(up.requests) == 3


async def test_exponential_backoff_with_jitter_and_exhaustion() -> None:
    up = MockUpstream()
    for _ in range(4):
        up.add(error_body("boom", "server_error"), status=500)
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        await run(up.provider(SETTINGS), max_retries=3, sleep=sleeps, jitter=lambda: 0.0)
    assert info.value.kind == "server" and info.value.status == 500
    assert sleeps.delays == [0.5, 1.0, 2.0]
    assert len(up.requests) == 4


def test_backoff_formula() -> None:
    err = ProviderError("server", "x")
    assert [backoff_delay(err, n, jitter=lambda: 0.0) for n in range(6)] == [0.5, 1, 2, 4, 8, 8]
    assert backoff_delay(err, 0, jitter=lambda: 1.0) == 0.375  # at most 25 % less
    assert backoff_delay(ProviderError("rate_limit", "x", retry_after=0.0), 3) == 0.0


async def test_401_is_not_retried() -> None:
    up = MockUpstream()
    up.add(error_body("bad key sk-k", "invalid_api_key"), status=401)
    up.add(OK)
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as info:
        await run(up.provider(SETTINGS), max_retries=2, sleep=sleeps)
    assert info.value.kind == "auth" and sleeps.delays == [] and len(up.requests) == 1


async def test_quota_429_is_not_retried_even_with_retry_after() -> None:
    up = MockUpstream()
    up.add(error_body("quota", "insufficient_quota"), status=429, headers={"retry-after": "1"})
    with pytest.raises(ProviderError) as info:
        await run(up.provider(SETTINGS), max_retries=2, sleep=Sleeps())
    assert info.value.kind == "quota" and len(up.requests) == 1


async def test_failure_after_first_event_is_not_retried() -> None:
    up = MockUpstream()
    up.add([OK[0], sse({"error": {"message": "upstream died", "type": "server_error"}})])
    up.add(OK)
    sleeps = Sleeps()
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        async for event in stream_with_retries(
            up.provider(SETTINGS), REQ, max_retries=2, sleep=sleeps
        ):
            seen.append(event)
    assert info.value.retryable  # retryable kind, but output was already forwarded
    assert seen == [TextDelta("hello")] and sleeps.delays == [] and len(up.requests) == 1


async def test_cut_stream_before_any_event_is_retried() -> None:
    up = MockUpstream()
    up.add([b": keep-alive\n\n"])  # EOF without terminator and without events
    up.add(OK)
    sleeps = Sleeps()
    events = await run(up.provider(SETTINGS), max_retries=1, sleep=sleeps, jitter=lambda: 0.0)
    assert isinstance(events[-1], Finish) and sleeps.delays == [0.5]


async def test_long_retry_after_is_not_waited_for() -> None:
    up = MockUpstream()
    up.add(error_body("later", "rate_limit_exceeded"), status=429, headers={"retry-after": "3600"})
    with pytest.raises(ProviderError) as info:
        await run(up.provider(SETTINGS), max_retries=2, sleep=Sleeps())
    assert info.value.retry_after == 3600.0 and len(up.requests) == 1


async def test_connection_errors_are_retried_and_key_never_leaks() -> None:
    """Transport failures as the network gives them (aiohttp's exceptions, mapped by the real
    client's transport_error), retried by the loop's policy; the key never shows."""
    attempts = 0

    def handler(request: Request) -> ScriptedResponse | Exception:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            return aiohttp.ClientOSError(
                f"refused while using key {SETTINGS.api_key}xxxxxxxxxxxxxx"
            )
        if attempts == 2:
            return aiohttp.SocketTimeoutError("Timeout on reading data from socket")
        return ScriptedResponse(200, {"content-type": "text/event-stream"}, chunks(OK))

    sleeps = Sleeps()
    errors: list[ProviderError] = []
    provider = make_provider(SETTINGS, transport=HandlerTransport(handler))
    events = await run(
        provider, max_retries=2, sleep=sleeps, on_retry=lambda a, e, d: errors.append(e)
    )
    assert isinstance(events[-1], Finish)
    assert [e.kind for e in errors] == ["network", "timeout"]
    assert all("sk-k" not in e.message for e in errors)


async def chunks(items: list[bytes]) -> AsyncIterator[bytes]:
    for item in items:
        yield item


def test_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == 30.0
    assert parse_retry_after({"retry-after": "garbage"}) is None
    assert parse_retry_after({}) is None


class EndlessBody:
    """A body that sends one event and then waits forever."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield OK[0]
        self.started.set()
        await asyncio.Event().wait()


class Endless:
    def __init__(self) -> None:
        self.body = EndlessBody()
        self.transport = HandlerTransport(
            lambda request: ScriptedResponse(200, {}, aiter(self.body))  # type: ignore[arg-type]
        )

    @property
    def closed(self) -> bool:
        return bool(self.transport.responses) and self.transport.responses[0].closed


def endless_provider(body: Endless):
    return make_provider(SETTINGS, transport=body.transport)


async def test_closing_the_stream_early_closes_the_response() -> None:
    body = Endless()
    provider = endless_provider(body)
    async with contextlib.aclosing(stream_with_retries(provider, REQ, max_retries=0)) as events:
        async for event in events:
            assert event == TextDelta("hello")
            break
    assert body.closed


async def test_cancelling_the_consumer_closes_the_response() -> None:
    body = Endless()
    provider = endless_provider(body)

    async def consume() -> None:
        async for _ in stream_with_retries(provider, REQ, max_retries=2):
            pass

    task = asyncio.create_task(consume())
    await body.body.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert body.closed
