"""Helpers to write SSE bodies and to cut them into chunks, for fixtures and fakes."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any


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
