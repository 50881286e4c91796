"""The spending caps (`[limits]`) for the editor's features beyond the Agent: Cmd-K, terminal
Cmd-K, commit messages, terminal autocomplete and Tab ask `SpendGate.check` before a model call
and, when a cap is reached, end the call with the error the Agent's turns end with
(`agent/spend.cap_error`: `resource_exhausted`, naming the cap, the spend and the reset), in the
call's own shape. Tab asks on nearly every keystroke: the usage database is read at most once a
`ttl` (a call that starts within it may still go out: caps are checked before calls, not metered).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from cursor_byok.agent.spend import cap_error
from cursor_byok.config import Config
from cursor_byok.config.spend import over_cap
from cursor_byok.wire import connect

TTL = 1.0  # seconds an answer of the usage database is reused


class SpendGate:
    def __init__(self, ttl: float = TTL) -> None:
        self.ttl = ttl
        self._key: tuple[int, Path] | None = None
        self._at = 0.0
        self._error: connect.EndStreamError | None = None

    async def check(self, config: Config, data_dir: Path) -> connect.EndStreamError | None:
        """The error to end a call with when a cap is reached, else None (no caps: no read)."""
        if not config.limits.caps():
            return None
        key, now = (id(config), data_dir), time.monotonic()
        if key != self._key or now - self._at >= self.ttl:
            status = await asyncio.to_thread(over_cap, config, data_dir, None)
            self._error = None if status is None else cap_error(status).end_stream()
            self._key, self._at = key, now
        return self._error
