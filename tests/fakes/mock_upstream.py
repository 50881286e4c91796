"""An `httpx.MockTransport` upstream for adapter tests: scripted chunked bodies, recorded
requests, optional per-request assertions. No sockets involved."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import make_provider


@dataclass
class Scripted:
    chunks: list[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    check: Callable[[dict[str, Any], httpx.Request], None] | None = None


@dataclass
class Recorded:
    url: str
    headers: dict[str, str]
    json: dict[str, Any]


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
        check: Callable[[dict[str, Any], httpx.Request], None] | None = None,
    ) -> None:
        if isinstance(chunks, bytes):
            chunks = [chunks]
        item = Scripted(list(chunks), status, check=check)
        if headers is not None:
            item.headers = headers
        self.queue.append(item)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(Recorded(str(request.url), dict(request.headers), body))
        item = self.queue.popleft()
        if item.check is not None:
            item.check(body, request)

        async def stream() -> AsyncIterator[bytes]:
            for chunk in item.chunks:
                await asyncio.sleep(0)
                yield chunk

        return httpx.Response(item.status, headers=item.headers, content=stream())

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

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
        [[type(e).__name__, dataclasses.asdict(e)] for e in events], ensure_ascii=False, indent=1
    )
    seen: dict[str, str] = {}
    return _GENERATED.sub(lambda m: seen.setdefault(m.group(0), f"<gen{len(seen)}>"), text)


def error_key(error: ProviderError | None) -> tuple[Any, ...] | None:
    if error is None:
        return None
    return (error.kind, error.status, error.retryable, error.message)
