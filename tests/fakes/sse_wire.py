"""Helpers to write SSE bodies and to cut them into chunks, for fixtures and fakes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

from cursor_byok.providers.adapter import StreamState
from cursor_byok.providers.adapter import too_large
from cursor_byok.providers.base import ProviderEvent
from cursor_byok.providers.provider_error import ProviderError
from cursor_byok.providers.sse import SseParser
from cursor_byok.providers.sse import SseTooLarge


def sse(data: Any, event: str | None = None, *, eol: str = "\n") -> bytes:
    """One SSE event. `data` that is not a str is JSON-encoded (compact, UTF-8)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines = [f"event: {event}"] if event else []
    lines += [f"data: {line}" for line in text.split("\n")]
    return (eol.join(lines) + eol + eol).encode("utf-8")


def random_split(data: bytes, rng: random.Random, *, max_pieces: int = 12) -> list[bytes]:
    """`data` cut at random byte offsets (possibly inside UTF-8 sequences or CRLF)."""
    if len(data) < 2:
        return [data]
    count = rng.randint(1, min(max_pieces, len(data) - 1))
    cuts = sorted(rng.sample(range(1, len(data)), count))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def splits(data: bytes, *, seed: int = 1234, rounds: int = 200) -> Iterator[list[bytes]]:
    """Deterministic family of splits: whole, every single-byte cut near the edges, byte by
    byte, then `rounds` random multi-way splits."""
    rng = random.Random(seed)
    yield [data]
    yield [data[i : i + 1] for i in range(len(data))]
    for i in range(1, min(len(data), 40)):
        yield [data[:i], data[i:]]
    for _ in range(rounds):
        yield random_split(data, rng)


def decode_all(
    state: StreamState, chunks: Iterable[bytes]
) -> tuple[list[ProviderEvent], ProviderError | None]:
    """An adapter's `decode_stream`, synchronously: all events, and the error if any."""
    parser = SseParser()
    events: list[ProviderEvent] = []
    try:
        received = False
        for chunk in chunks:
            received = received or bool(chunk)
            try:
                parsed = parser.feed(chunk)
            except SseTooLarge as exc:
                raise too_large(exc, "") from None
            for sse in parsed:
                events.extend(state.on_event(sse))
                if state.done:
                    return events, None
        for sse in parser.close():
            events.extend(state.on_event(sse))
            if state.done:
                return events, None
        if not received:
            raise ProviderError(
                "protocol", "empty response body (HTTP 200 without events)", retryable=False
            )
        events.extend(state.on_eof())
    except ProviderError as error:
        return events, error
    return events, None
