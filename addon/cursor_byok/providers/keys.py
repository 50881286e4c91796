"""Key pools: the keys of one provider used in turn, resting the ones the provider pushed back.

Pure state, no clock of its own: every call takes `now` (time.monotonic() in the proxy, any number
in tests), so "the key comes back after retry-after" is tested without waiting. Keys are known by
`key_id` (a digest); the key itself is never stored here, nor logged anywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

RATE_LIMIT_REST = 60.0  # a 429 without retry-after: the key rests this long
QUOTA_REST = 3600.0  # a quota or billing error: an hour (it rarely clears sooner)


def key_id(key: str) -> str:
    """A stable name for a key that says nothing about it."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass
class KeyRing:
    """One provider's pool: `order(now)` is the keys to try for the next call, round robin from
    the one after the last call's first, without those resting or revoked."""

    ids: Sequence[str]
    _next: int = 0
    _resting: dict[str, float] = field(default_factory=dict)  # key id -> usable again at
    _revoked: set[str] = field(default_factory=set)

    def order(self, now: float) -> list[str]:
        n = len(self.ids)
        start, self._next = self._next, (self._next + 1) % max(n, 1)
        rotated = [self.ids[(start + i) % n] for i in range(n)]
        return [k for k in rotated if k not in self._revoked and self._resting.get(k, 0) <= now]

    def rest(self, key: str, now: float, seconds: float) -> None:
        """The provider said wait (429, quota): the key sits out `seconds`."""
        self._resting[key] = max(self._resting.get(key, 0.0), now + max(seconds, 0.0))

    def revoke(self, key: str) -> None:
        """The provider refused the key (401/403): out until the config changes."""
        self._revoked.add(key)

    def next_free(self, now: float) -> float | None:
        """Seconds until a resting key is usable again (None: none rests, or all revoked)."""
        waits = [t - now for k, t in self._resting.items() if k not in self._revoked and t > now]
        return min(waits) if waits else None

    def revoked(self) -> int:
        return len(self._revoked)


class KeyPools:
    """Every provider's ring, kept across turns; a new config snapshot starts them afresh (a
    revoked key is retried once the config changes)."""

    def __init__(self) -> None:
        self._rings: dict[tuple[str, tuple[str, ...]], KeyRing] = {}
        self._config: object | None = None

    def ring(self, config: object, provider: str, ids: Sequence[str]) -> KeyRing:
        if config is not self._config:
            self._config = config
            self._rings.clear()
        key = (provider, tuple(ids))
        ring = self._rings.get(key)
        if ring is None:
            ring = self._rings[key] = KeyRing(tuple(ids))
        return ring


def rest_for(kind: str, retry_after: float | None) -> float | None:
    """How long a key rests after an error of `kind` (None: the key is not to blame)."""
    if kind == "rate_limit":
        return RATE_LIMIT_REST if retry_after is None else retry_after
    if kind == "quota":
        return QUOTA_REST if retry_after is None else max(retry_after, 0.0)
    return None
