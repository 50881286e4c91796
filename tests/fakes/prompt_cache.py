"""What a provider's prompt cache would see: the longest byte-identical prompt prefix.

Real providers cache exact prefixes in the order tools → system → messages (providers.md §8).
The fake serialises each request that way (cache-control markers removed: they steer the cache,
they are not prompt content) and compares it with the previous request of the same
conversation. The conversation is the request's `prompt_cache_key` when there is one, else the
first user message (Anthropic has no cache key).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def canonical_prompt(fmt: str, payload: dict[str, Any]) -> bytes:
    """The prompt in cache order, as bytes (what prefix matching runs over)."""
    if fmt == "chat":
        parts = [payload.get("tools") or [], payload.get("messages") or []]
    elif fmt == "responses":
        parts = [
            payload.get("tools") or [],
            payload.get("instructions") or "",
            payload.get("input") or [],
        ]
    else:
        parts = [
            payload.get("tools") or [],
            payload.get("system") or [],
            payload.get("messages") or [],
        ]
    return json.dumps(_strip(parts), ensure_ascii=False, separators=(",", ":")).encode()


def conversation_key(fmt: str, payload: dict[str, Any]) -> str:
    key = payload.get("prompt_cache_key")
    if isinstance(key, str) and key:
        return key
    messages = payload.get("input" if fmt == "responses" else "messages") or []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            text = json.dumps(message.get("content"), sort_keys=True)
            return "first-user:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return "none"


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (binary search over slices: fast in C)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo], a[:hi+1] != b[:hi+1]
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass
class PrefixReport:
    conversation: str
    prompt_bytes: int  # this request's canonical prompt
    previous_bytes: int  # the previous request of the conversation (0 = first)
    prefix_bytes: int  # longest byte-identical prefix shared with it


class PrefixTracker:
    def __init__(self) -> None:
        self._last: dict[str, bytes] = {}

    def observe(self, fmt: str, payload: dict[str, Any]) -> PrefixReport:
        key = conversation_key(fmt, payload)
        data = canonical_prompt(fmt, payload)
        previous = self._last.get(key, b"")
        self._last[key] = data
        return PrefixReport(key, len(data), len(previous), common_prefix(previous, data))


def tokens(nbytes: int) -> int:
    """The fake's tokenizer: 4 bytes per token, rounded up."""
    return -(-nbytes // 4)
