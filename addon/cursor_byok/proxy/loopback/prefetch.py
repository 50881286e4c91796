"""A produced stream started before its loopback request arrives.

A stream answered here (Cmd-K, terminal Cmd-K, Tab) is written by the loopback server, which
mitmproxy reaches only after the rest of its request hooks, a new TCP connection to 127.0.0.1
and the hop's request head. Started only then, the provider request waited for all of it: a few
milliseconds on every call, more on a loaded machine. `Prefetched` starts the producer at once
(when the addon hands it over) and keeps what it makes (bounded: the producer waits when the
reader is slow) until the loopback request claims it. Not claimed within `unclaimed` seconds
(the flow failed before reaching the loopback server), or released by the addon's error hook:
the producer is cancelled where it waits, as when the client goes away mid-stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable

QUEUED = 64  # chunks made ahead of the reader (Connect frames of a few deltas each)


class _End:
    """The producer's end (`error`: what it raised)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error


class Prefetched:
    def __init__(self, producer: Callable[[], AsyncIterator[bytes]], *, unclaimed: float) -> None:
        self._queue: asyncio.Queue[bytes | _End] = asyncio.Queue(maxsize=QUEUED)
        self._task = asyncio.ensure_future(self._run(producer))
        self._expiry = asyncio.get_running_loop().call_later(unclaimed, self.cancel)
        self.claimed = False

    async def _run(self, producer: Callable[[], AsyncIterator[bytes]]) -> None:
        end = _End()
        try:
            chunks = producer()
            try:
                async for chunk in chunks:
                    await self._queue.put(chunk)
            finally:
                aclose = getattr(chunks, "aclose", None)
                if aclose is not None:
                    await aclose()
        except Exception as exc:  # the reader raises it where it reads
            end = _End(exc)
        await self._queue.put(end)

    def claim(self) -> AsyncGenerator[bytes]:
        """The chunks, as made; closing this iterator early cancels the producer."""
        self.claimed = True
        self._expiry.cancel()
        return self._chunks()

    async def _chunks(self) -> AsyncGenerator[bytes]:
        try:
            while True:
                item = await self._queue.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    return
                yield item
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop the producer where it waits (a no-op once it has ended)."""
        self._expiry.cancel()
        self._task.cancel()

    async def wait_closed(self) -> None:
        """Until the producer has ended (tests, shutdown)."""
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._task)
