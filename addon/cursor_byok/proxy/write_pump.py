"""The writer of one response stream (`RunRegistry.stream_to`): whoever makes frames readable
(the turn's emit, the flush timer, a client message) calls it, and it writes them at once, so
no reader task is woken per frame.

Its lifecycle is `PUMP_TRANSITIONS`:

    WRITING ─full→ BLOCKED ─drained→ WRITING        (the transport's buffer is full)
    WRITING ─end→ ENDED                              (its end-stream frame, or its writer failed)
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable
from collections.abc import Callable

from cursor_byok.core.states import step
from cursor_byok.wire import connect


class PumpState(enum.Enum):
    WRITING = "writing"  # writes whatever becomes readable, when it does
    BLOCKED = "blocked"  # the transport is full: nothing is written until it drains
    ENDED = "ended"  # wrote its end-stream frame, or its writer failed: nothing more


class PumpEvent(enum.Enum):
    FULL = "full"
    DRAINED = "drained"
    END = "end"


_P, _PE = PumpState, PumpEvent
PUMP_TRANSITIONS: dict[tuple[PumpState, PumpEvent], PumpState] = {
    (_P.WRITING, _PE.FULL): _P.BLOCKED,
    (_P.BLOCKED, _PE.DRAINED): _P.WRITING,
    (_P.WRITING, _PE.END): _P.ENDED,
}

Read = Callable[[], tuple[list[bytes], bool]]  # frames readable now, and whether they end it


class WritePump:
    """Writes what `read` gives to `write`; stops while `full()` until `drain()` returns."""

    def __init__(
        self,
        read: Read,
        write: Callable[[bytes], None],
        *,
        full: Callable[[], bool],
        drain: Callable[[], Awaitable[None]] | None,
        read_bytes: int | None = None,
    ) -> None:
        self._read = read
        self._write = write
        self._full = full
        self._drain = drain
        # `read` stops after about this many bytes (None: it gives all that is readable), so
        # the pump reads again until it has all or the transport is full: a run's long frames
        # made from the data dir are read one by one as the transport takes them, not at once
        self._read_bytes = read_bytes
        self.state = PumpState.WRITING
        self.chunks = 0  # writes made
        loop = asyncio.get_running_loop()
        self._ended: asyncio.Future[None] = loop.create_future()  # done when ENDED
        self._kick: asyncio.Future[None] | None = None  # wakes `run` when it BLOCKS

    def _step(self, event: PumpEvent) -> None:
        self.state = step(PUMP_TRANSITIONS, self.state, event, "write pump")

    def __call__(self) -> None:
        """Write what is readable now (nothing while BLOCKED or ENDED)."""
        if self.state is not PumpState.WRITING:
            return
        try:
            more = True
            while more:
                frames, end = self._read()
                size = 0
                for piece in connect.write_batches(frames):
                    self._write(piece)
                    self.chunks += 1
                    size += len(piece)
                if end:
                    self._step(PumpEvent.END)
                    self._ended.set_result(None)
                    return
                if frames and self._full():
                    self._step(PumpEvent.FULL)
                    kick = self._kick
                    if kick is not None and not kick.done():
                        kick.set_result(None)
                    return
                more = self._read_bytes is not None and size >= self._read_bytes
        except Exception as exc:  # the writer's failure ends this stream, not the turn
            self._step(PumpEvent.END)
            self._ended.set_exception(exc)

    async def run(self, until: asyncio.Future) -> None:
        """Write until the end-stream frame (or the writer's failure, raised here) or until
        `until` completes (the client went away)."""
        loop = asyncio.get_running_loop()
        self()
        while self.state is not PumpState.ENDED and not until.done():
            if self.state is PumpState.BLOCKED and self._drain is not None:
                await self._drain()
                self._step(PumpEvent.DRAINED)
                self()
                continue
            self._kick = loop.create_future()
            await asyncio.wait(
                {self._ended, until, self._kick}, return_when=asyncio.FIRST_COMPLETED
            )
            self._kick = None
        if self._ended.done():
            self._ended.result()
