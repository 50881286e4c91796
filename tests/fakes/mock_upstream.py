"""A scripted upstream for adapter tests: the HTTP client's `Transport` seam, scripted chunked
bodies, recorded requests, optional per-request assertions. No sockets involved (the network
side, aiohttp, is tested over real sockets in tests/providers/test_http_client.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections import deque
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import event_fields
from cursor_byok.providers import make_provider
from cursor_byok.providers.http import MAX_ERROR_BODY
from cursor_byok.providers.http import HttpResponse


@dataclass
class Request:
    """What the client sent: the URL, lower-cased headers, the body bytes."""

    url: str
    headers: dict[str, str]
    content: bytes


@dataclass
class Scripted:
    chunks: list[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    check: Callable[[dict[str, Any], Request], None] | None = None


@dataclass
class Recorded:
    url: str
    headers: dict[str, str]
    json: dict[str, Any]


class ScriptedResponse:
    """An `HttpResponse` whose body is a list of chunks (or any async iterator of them)."""

    def __init__(self, status: int, headers: dict[str, str], body: AsyncIterator[bytes]) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self._body = body
        self.closed = False

    async def iter_bytes(self) -> AsyncGenerator[bytes]:
        async for chunk in self._body:
            yield chunk

    async def read_capped(self, limit: int = MAX_ERROR_BODY) -> bytes:
        parts = [chunk async for chunk in self._body]
        return b"".join(parts)[:limit]


Handler = Callable[[Request], "ScriptedResponse | Exception"]


class HandlerTransport:
    """A `Transport` answering each POST with `handler(request)`: a response, or an exception
    to raise as the network would (a ProviderError, or an aiohttp error that is mapped by the
    real client's `transport_error`)."""

    def __init__(self, handler: Callable[[Request], Any]) -> None:
        self.handler = handler
        self.responses: list[ScriptedResponse] = []

    @contextlib.asynccontextmanager
    async def post(
        self, url: str, headers: dict[str, str], content: bytes
    ) -> AsyncIterator[HttpResponse]:
        from cursor_byok.providers.http import transport_error

        result = self.handler(Request(url, dict(headers), content))
        if asyncio.iscoroutine(result):
            result = await result
        if isinstance(result, ProviderError):
            raise result
        if isinstance(result, Exception):
            raise transport_error(result, "mock", host="mock") from result
        self.responses.append(result)
        try:
            yield result
        finally:
            result.closed = True

    async def aclose(self) -> None:
        pass


class MockUpstream:
    def __init__(self) -> None:
        self.queue: deque[Scripted] = deque()
        self.requests: list[Recorded] = []

    def add(
        self,
        chunks: list[bytes] | bytes,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        check: Callable[[dict[str, Any], Request], None] | None = None,
    ) -> None:
        if isinstance(chunks, bytes):
            chunks = [chunks]
        item = Scripted(list(chunks), status, check=check)
        if headers is not None:
            item.headers = headers
        self.queue.append(item)

    def _handle(self, request: Request) -> ScriptedResponse:
        body = json.loads(request.content)
        self.requests.append(Recorded(request.url, request.headers, body))
        item = self.queue.popleft()
        if item.check is not None:
            item.check(body, request)

        async def stream() -> AsyncIterator[bytes]:
            for chunk in item.chunks:
                await asyncio.sleep(0)
                yield chunk

        return ScriptedResponse(item.status, item.headers, stream())

    def transport(self) -> HandlerTransport:
        return HandlerTransport(self._handle)

    def provider(self, settings: ProviderSettings):
        return make_provider(settings, transport=self.transport())


async def collect(provider, request: ModelRequest) -> tuple[list[Any], ProviderError | None]:
    """All events of one call, and the error that ended it (if any)."""
    events: list[Any] = []
    try:
        async for event in provider.stream(request):
            events.append(event)
    except ProviderError as error:
        return events, error
    return events, None


_GENERATED = re.compile(r"(call|toolu)_[0-9a-f]{24}")


def canon(events: list[Any]) -> str:
    """Events as JSON with generated ids numbered by first appearance (for comparisons)."""
    text = json.dumps(
        [[type(e).__name__, event_fields(e)] for e in events], ensure_ascii=False, indent=1
    )
    seen: dict[str, str] = {}
    return _GENERATED.sub(lambda m: seen.setdefault(m.group(0), f"<gen{len(seen)}>"), text)


def error_key(error: ProviderError | None) -> tuple[Any, ...] | None:
    if error is None:
        return None
    return (error.kind, error.status, error.retryable, error.message)
