"""What the three adapters share: POST, check the status, feed SSE events to a state machine.

Each wire format is a sans-IO `StreamState`: it takes parsed `SseEvent`s and returns
normalised events (raising `ProviderError` for in-band errors), and is told about EOF. This
module is the thin IO loop around it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from typing import Any
from typing import Protocol
from typing import cast

from .base import ModelRequest
from .base import ProviderEvent
from .base import ProviderSettings
from .http import HttpClient
from .http import HttpResponse
from .http import Transport
from .provider_error import ProviderError
from .provider_error import error_from_payload
from .provider_error import error_from_response
from .provider_error import scrub
from .retries import stream_started
from .sse import SseEvent
from .sse import SseParser
from .sse import SseTooLarge

log = logging.getLogger(__name__)


class StreamState(Protocol):
    """A wire format's stream decoder; `done` turns true at the format's terminator."""

    done: bool

    def on_event(self, event: SseEvent) -> list[ProviderEvent]: ...

    def on_eof(self) -> list[ProviderEvent]: ...


async def decode_stream(
    chunks: AsyncIterable[bytes],
    state: StreamState,
    *,
    provider: str = "",
    idle_timeout: float | None = None,
) -> AsyncIterator[ProviderEvent]:
    """Bytes → SSE events → normalised events. Stops reading at the terminator (the server
    may keep the connection open); raises for an empty body or a premature EOF, and when
    `idle_timeout` seconds pass without an SSE event (keep-alive comments reset the read
    timeout, not this one). Only the reads are timed, never the caller's work between them."""
    reads = _SseReads(chunks, provider, idle_timeout)
    try:
        while (parsed := await reads.next()) is not None:
            for sse in parsed:
                for event in state.on_event(sse):
                    yield event
                if state.done:
                    return
    finally:
        reads.stop()
    if not reads.received:
        raise ProviderError(
            "protocol",
            "empty response body (HTTP 200 without events)",
            provider=provider,
            retryable=False,
        )
    for event in state.on_eof():
        yield event


class _SseReads:
    """The reads of one stream: chunks in, SSE events out a batch at a time. Each batch moves
    the idle deadline on; the first tells the retry policy the provider answered.

    The deadline bounds each read, on one timer for the whole stream rather than an
    `asyncio.timeout` per read (which armed and cancelled a timer per delta: ~5 % of the
    proxy's CPU at 20 streams). Moving the deadline is a float; the timer, armed by a read, wakes
    at most once per `idle_timeout`: if the deadline moved on it follows it, if it passed while a
    read waits it cancels that read, which then raises the idle error. Whether the cancellation
    was the timer's is told as `asyncio.timeout` tells it (the task's cancel count)."""

    def __init__(
        self, chunks: AsyncIterable[bytes], provider: str, idle_timeout: float | None
    ) -> None:
        self.parser = SseParser()
        self.iterator = aiter(chunks)
        self.provider = provider
        self.idle_timeout = idle_timeout
        self.loop = asyncio.get_running_loop()
        self.deadline = None if idle_timeout is None else self.loop.time() + idle_timeout
        self.received = False  # a non-empty chunk came
        self.started = False
        self.ended = False
        self._timer: asyncio.TimerHandle | None = None
        self._reader: asyncio.Task[Any] | None = None  # the task waiting in a read, if any
        self._cancelling = 0  # its cancel requests before the read (asyncio.timeout's rule)
        self._expired = False  # the timer cancelled the read in progress

    async def next(self) -> list[SseEvent] | None:
        """The events of the next chunk that completes any; at the end of the body what the
        parser still held, once; then None. The idle deadline bounds each read."""
        while not self.ended:
            try:
                if self.deadline is None:
                    chunk = await anext(self.iterator)
                else:
                    chunk = await self._read(self.deadline)
            except StopAsyncIteration:
                self.ended = True
                return self.parser.close()
            except TimeoutError:
                assert self.idle_timeout is not None
                raise idle_error(self.provider, self.idle_timeout, self.parser.comments) from None
            if chunk and (parsed := self._feed(chunk)):
                return parsed
        return None

    async def _read(self, deadline: float) -> bytes:
        """One read, TimeoutError once `deadline` passes while it waits."""
        task = asyncio.current_task()
        if task is None or self.loop.time() >= deadline:
            # Past already (the caller's work between reads took the rest): as asyncio.timeout
            # does it, a chunk that is there is still taken, a wait ends at once.
            async with asyncio.timeout_at(deadline):
                return await anext(self.iterator)
        self._reader, self._cancelling, self._expired = task, task.cancelling(), False
        if self._timer is None:
            self._timer = self.loop.call_at(deadline, self._check)
        try:
            return await anext(self.iterator)
        except asyncio.CancelledError:
            if self._expired and task.uncancel() <= self._cancelling:
                raise TimeoutError from None
            raise
        finally:
            self._reader = None

    def _check(self) -> None:
        """The timer: follow a deadline that moved on, or cancel the read that outlived it."""
        self._timer = None
        if self._reader is None or self.deadline is None:
            return  # no read waits: the next one arms the timer again
        if self.loop.time() < self.deadline:
            self._timer = self.loop.call_at(self.deadline, self._check)
        elif not self._expired:
            self._expired = True
            self._reader.cancel()

    def stop(self) -> None:
        """The stream is over (or abandoned): its timer goes."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _feed(self, chunk: bytes) -> list[SseEvent]:
        self.received = True
        try:
            parsed = self.parser.feed(chunk)
        except SseTooLarge as exc:
            raise too_large(exc, self.provider) from None
        if parsed:  # an event: the idle deadline starts again; the provider answered
            if self.idle_timeout is not None and self.deadline is not None:
                self.deadline = self.loop.time() + self.idle_timeout
            if not self.started:
                self.started = True
                stream_started()
        return parsed


def idle_error(provider: str, idle_timeout: float, comments: int) -> ProviderError:
    """The stream went `idle_timeout` seconds without an event: its turn ends, saying so."""
    only = f" ({comments} keep-alive comments do not count)" if comments else ""
    table = f"[providers.{provider}]" if provider else "the provider's table"
    return ProviderError(
        "timeout",
        f"no event from the provider for {idle_timeout:g} s{only}, the idle limit: the stream "
        f"was given up. Raise idle_timeout in {table} of the config to wait longer",
        provider=provider,
        retryable=False,
        reason="idle_timeout",
    )


def too_large(exc: SseTooLarge, provider: str) -> ProviderError:
    """An oversized line/event: the stream is unusable (not retried: it would happen again)."""
    return ProviderError(
        "protocol",
        f"the provider sent an {exc.what} larger than {exc.limit // (1024 * 1024)} MiB; "
        "stream abandoned",
        provider=provider,
        retryable=False,
    )


_raw_decode = json.JSONDecoder().raw_decode


def loads(text: str) -> Any:
    """`json.loads` for one event's data, minus its two whitespace regex scans when the
    document starts at the first character (as providers send it): ~35% less per delta."""
    try:
        obj, end = _raw_decode(text)
    except ValueError:
        return json.loads(text)  # leading whitespace, or the error message json.loads gives
    if end != len(text) and text[end:].strip():
        return json.loads(text)  # trailing data: raises as json.loads does
    return obj


def parse_json_event(event: SseEvent, provider: str) -> dict[str, Any]:
    """The JSON object in an event's data; anything else is a protocol error."""
    try:
        obj = loads(event.data)
    except ValueError:
        raise ProviderError(
            "protocol",
            f"invalid JSON in stream: {event.data[:200]!r}",
            provider=provider,
            retryable=False,
        ) from None
    if not isinstance(obj, dict):
        raise ProviderError(
            "protocol",
            f"unexpected stream data: {event.data[:200]!r}",
            provider=provider,
            retryable=False,
        )
    return obj


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one: payload fields are read loosely."""
    return value if isinstance(value, dict) else {}


METADATA_HEADER = "x-cursor-byok-"  # + conversation / mode / kind


def attribute(
    kind: str, metadata: dict[str, str], headers: dict[str, str], body: dict[str, Any]
) -> None:
    """Name the call for a team gateway (LiteLLM records these with each request): headers
    `x-cursor-byok-<field>`; for the OpenAI formats `metadata` (the fields, and `tags` a gateway
    groups spend by) and `user` (the conversation); for Anthropic's format `metadata.user_id`."""
    for name, value in metadata.items():
        headers[METADATA_HEADER + name] = value
    conversation = metadata.get("conversation", "")
    if kind == "anthropic":
        if conversation:
            body.setdefault("metadata", {})["user_id"] = conversation
        return
    tags = [
        f"cursor-byok:{name}:{value}" for name, value in metadata.items() if name != "conversation"
    ]
    body["metadata"] = {
        **{f"cursor_byok_{name}": value for name, value in metadata.items()},
        "tags": tags,
    }
    if conversation:
        body["user"] = conversation


class SseProvider:
    """Base of the adapters: subclasses build the request and the stream state."""

    kind = ""

    def __init__(self, settings: ProviderSettings, *, transport: object | None = None) -> None:
        if settings.kind != self.kind:
            raise ValueError(
                f"{type(self).__name__} needs kind {self.kind!r}, got {settings.kind!r}"
            )
        self.settings = settings
        self.label = settings.label
        self._http = HttpClient(
            provider=self.label,
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            proxy=settings.proxy,
            proxy_auth=settings.proxy_auth,
            proxy_from_env=settings.proxy_from_env,
            ca_file=settings.ca_file,
            transport=cast("Transport | None", transport),
        )

    def build(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        """(url, headers, JSON body) for a request."""
        raise NotImplementedError

    def new_state(self, request: ModelRequest) -> StreamState:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent]:
        url, headers, body = self.build(request)
        if self.settings.send_metadata and request.metadata:
            attribute(self.kind, request.metadata, headers, body)
        secrets = self.settings.secrets()
        log.debug(
            "%s: POST %s model=%s messages=%d tools=%d",
            self.label,
            scrub(url, secrets),
            request.model,
            len(request.messages),
            len(request.tools),
        )
        try:
            async with self._http.post_stream(url, headers, body) as response:
                await self._check_response(response, secrets)
                state = self.new_state(request)
                async with contextlib.aclosing(response.iter_bytes()) as chunks:
                    async for event in decode_stream(
                        chunks,
                        state,
                        provider=self.label,
                        idle_timeout=self.settings.idle_timeout,
                    ):
                        yield event
        except ProviderError as error:
            error.provider = error.provider or self.label
            raise error.redact(secrets) from error.__cause__

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _check_response(self, response: HttpResponse, secrets: list[str]) -> None:
        if 300 <= response.status < 400:
            # Not followed: a POST with the key must not go wherever a server points it.
            location = response.headers.get("location", "")
            where = f" to {scrub(location, secrets)[:200]}" if location else ""
            raise ProviderError(
                "other",
                f"the provider answered HTTP {response.status} (a redirect{where}); redirects "
                "are not followed: set base_url to the address it points to",
                status=response.status,
                provider=self.label,
                retryable=False,
            )
        if not 200 <= response.status < 300:
            body = await response.read_capped()
            raise error_from_response(
                response.status, response.headers, body, provider=self.label, secrets=secrets
            )
        ctype = response.headers.get("content-type", "")
        if "json" in ctype and "event-stream" not in ctype:
            # A gateway answering a streaming request with one JSON document: usually an error.
            body = await response.read_capped()
            try:
                payload = json.loads(body) if body.strip() else None
            except ValueError:
                payload = None
            if isinstance(payload, dict) and (
                "error" in payload or payload.get("object") == "error"
            ):
                raise error_from_payload(payload, provider=self.label)
            raise ProviderError(
                "protocol",
                f"expected an event stream, got {ctype}: {body[:200].decode('utf-8', 'replace')!r}",
                provider=self.label,
                retryable=False,
            )
