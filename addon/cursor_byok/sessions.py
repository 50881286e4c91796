"""The async shell around the sans-IO `Session`: futures for pending requests, wake-ups for RunSSE
readers, the turn task, and a registry with one ticker that drives every session's timers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable

from cursor_byok.connect import EndStreamError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.session import CancelTurn
from cursor_byok.session import Command
from cursor_byok.session import Expire
from cursor_byok.session import FailTurn
from cursor_byok.session import PendingKey
from cursor_byok.session import PendingKind
from cursor_byok.session import Resolve
from cursor_byok.session import RunState
from cursor_byok.session import Session
from cursor_byok.session import SessionConfig
from cursor_byok.session import StartTurn
from cursor_byok.session import StreamEvent
from cursor_byok.session import Subscriber

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class TurnCancelled(Exception):
    """Raised inside a turn when it is cancelled (user stop, client gone, superseded)."""

    def __init__(self, reason: str, action: pb.CancelAction | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = action


class TurnFailed(Exception):
    """Raised inside a turn when the transport fails it (seqno gap, overflow)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


TurnRunner = Callable[["LiveSession", pb.AgentRunRequest], Awaitable[None]]


class LiveSession:
    """One request's session plus the asyncio plumbing around it."""

    def __init__(self, core: Session, clock: Clock, runner: TurnRunner) -> None:
        self.core = core
        self.clock = clock
        self._runner = runner
        self._changed = asyncio.Event()
        self._waiters: dict[PendingKey, asyncio.Future] = {}
        self._streams: dict[int, asyncio.Queue[pb.ExecClientMessage]] = {}
        self.task: asyncio.Task | None = None
        self.turn: object | None = None  # the running Turn, for the status display
        self._interrupt: BaseException | None = None

    @property
    def request_id(self) -> str:
        return self.core.request_id

    # --- wake-ups ---------------------------------------------------------------------------

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def frames(self, sub: Subscriber) -> AsyncIterator[bytes]:
        """Every frame for one RunSSE subscriber, live, until the end-stream frame."""
        while True:
            changed = self._changed
            frames, ended = self.core.read(sub)
            for frame in frames:
                yield frame
            if ended:
                return
            if not frames:
                await changed.wait()

    # --- inputs -----------------------------------------------------------------------------

    def receive(self, seqno: int, message: pb.AgentClientMessage | None, size: int = 0) -> None:
        self.apply(self.core.receive(seqno, message, size=size, now=self.clock()))

    def subscribe(self, encoding: str | None) -> Subscriber:
        sub = self.core.subscribe(encoding=encoding, now=self.clock())
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.core.unsubscribe(sub, now=self.clock())

    def tick(self) -> list[Command]:
        commands = self.core.tick(self.clock())
        self.apply(commands)
        self._notify()
        return commands

    def apply(self, commands: list[Command]) -> None:
        for command in commands:
            match command:
                case StartTurn(run_request):
                    self.task = asyncio.get_running_loop().create_task(
                        self._run(run_request), name=f"turn-{self.request_id}"
                    )
                case Resolve(key, message):
                    waiter = self._waiters.pop(key, None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message)
                case StreamEvent(exec_id, message):
                    queue = self._streams.get(exec_id)
                    if queue is not None:
                        queue.put_nowait(message)
                case CancelTurn(reason, action):
                    self.interrupt(TurnCancelled(reason, action))
                case FailTurn(code, message):
                    self.interrupt(TurnFailed(code, message))
                case Expire():
                    pass
        self._notify()

    def interrupt(self, exc: BaseException) -> None:
        """Stop the running turn: its current await raises `exc` (via task cancellation)."""
        if self.task is None or self.task.done() or self._interrupt is not None:
            return
        self._interrupt = exc
        self.task.cancel()

    async def _run(self, run_request: pb.AgentRunRequest) -> None:
        try:
            await self._runner(self, run_request)
        except asyncio.CancelledError:
            if self._interrupt is None:
                raise
        except Exception:
            log.exception("request %s: turn crashed", self.request_id)
            self.finish(EndStreamError("internal", "cursor-byok internal error; see proxy log"))
        finally:
            self._fail_waiters()
            self._notify()

    def take_interrupt(self) -> BaseException | None:
        """The reason the turn was interrupted, once (the runner converts CancelledError)."""
        exc, self._interrupt = self._interrupt, None
        return exc

    def _fail_waiters(self) -> None:
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.cancel()
        self._waiters.clear()
        self._streams.clear()

    # --- outputs used by the turn ------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.core.emit(message, now=self.clock())
        self._notify()

    def finish(self, error: EndStreamError | None = None) -> None:
        self.core.finish(error, now=self.clock())
        self._notify()

    async def _await(self, key: PendingKey):
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[key] = waiter
        self._notify()
        try:
            return await waiter
        finally:
            # A resolved request already left `pending`; an interrupted one stays there so
            # `abort_pending` can abort it on the client.
            self._waiters.pop(key, None)

    async def exec(
        self,
        message: pb.ExecServerMessage,
        on_event: Callable[[pb.ExecClientMessage], None] | None = None,
    ) -> pb.ExecClientMessage:
        """Send an exec request and wait for its final result; stream events go to `on_event`."""
        ident = self.core.open_exec(message, now=self.clock())
        if on_event is None:
            return await self._await((PendingKind.EXEC, ident))
        queue: asyncio.Queue[pb.ExecClientMessage] = asyncio.Queue()
        self._streams[ident] = queue
        result = asyncio.ensure_future(self._await((PendingKind.EXEC, ident)))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, result}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    on_event(getter.result())
                    continue
                getter.cancel()
                while not queue.empty():
                    on_event(queue.get_nowait())
                return result.result()
        finally:
            result.cancel()
            self._streams.pop(ident, None)

    async def kv(self, message: pb.KvServerMessage) -> pb.KvClientMessage:
        ident = self.core.open_kv(message, now=self.clock())
        return await self._await((PendingKind.KV, ident))

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse:
        ident = self.core.open_interaction(query, now=self.clock())
        return await self._await((PendingKind.INTERACTION, ident))

    def abort_pending(self) -> None:
        self.core.abort_pending(now=self.clock())
        self._fail_waiters()
        self._notify()


class SessionRegistry:
    """All live sessions by request_id, and the ticker that drives their timers."""

    def __init__(
        self,
        runner: TurnRunner,
        *,
        config: SessionConfig | None = None,
        recorder: object | None = None,
        clock: Clock = time.monotonic,
        tick_interval: float = 0.5,
    ) -> None:
        self.runner = runner
        self.config = config or SessionConfig()
        self.recorder = recorder  # capture.Recorder: gets every server frame when set
        self.clock = clock
        self.tick_interval = tick_interval
        self.sessions: dict[str, LiveSession] = {}
        self._ticker: asyncio.Task | None = None

    def get(self, request_id: str) -> LiveSession | None:
        return self.sessions.get(request_id)

    def get_or_create(self, request_id: str) -> LiveSession:
        live = self.sessions.get(request_id)
        if live is None:
            core = Session(request_id, created_at=self.clock(), config=self.config)
            if self.recorder is not None:
                recorder = self.recorder
                core.on_frame = lambda payload, end: recorder.server(request_id, payload, end)
            live = LiveSession(core, self.clock, self.runner)
            self.sessions[request_id] = live
            log.debug("request %s: session created", request_id)
        return live

    def start(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self.tick_interval)
            self.tick()

    def tick(self) -> None:
        for request_id, live in list(self.sessions.items()):
            commands = live.tick()
            if any(isinstance(c, Expire) for c in commands):
                self.sessions.pop(request_id, None)
                log.debug("request %s: session expired", request_id)

    def running_for(self, conversation_id: str) -> list[LiveSession]:
        """Live turns of one conversation (a new run for it supersedes them)."""
        return [
            s
            for s in self.sessions.values()
            if s.core.state is RunState.RUNNING
            and s.core.run_request is not None
            and s.core.run_request.conversation_id == conversation_id
        ]

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        tasks = [s.task for s in self.sessions.values() if s.task and not s.task.done()]
        for live in self.sessions.values():
            live.interrupt(TurnCancelled("the proxy is shutting down"))
        if tasks:
            await asyncio.wait(tasks, timeout=5)
