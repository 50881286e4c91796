"""The async shell around the sans-IO run core (`core/attempts.py`, `core/runs.py`):
futures for pending client requests, wake-ups for response streams, the turn task of each run,
one timer at the core's next deadline, the log lines the core returns as notes, and observers
(the recorder) that see every frame a run queues.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING

from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.agent.turn import TurnFailed
from cursor_byok.core.attempts import Registry
from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.runs import CancelTurn
from cursor_byok.core.runs import Command
from cursor_byok.core.runs import DropRun
from cursor_byok.core.runs import EndStreams
from cursor_byok.core.runs import FailTurn
from cursor_byok.core.runs import LiveAction
from cursor_byok.core.runs import Note
from cursor_byok.core.runs import PendingKey
from cursor_byok.core.runs import PendingKind
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import Resolve
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.core.runs import StreamEvent
from cursor_byok.core.runs import Unresolved
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import memory
from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError

if TYPE_CHECKING:
    from cursor_byok.agent.turn import Turn

log = logging.getLogger(__name__)
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}

Clock = Callable[[], float]


TurnRunner = Callable[["LiveRun", pb.AgentRunRequest], Awaitable[None]]
FrameObserver = Callable[[str, bytes, bool], None]  # (run id, payload, is end-stream)


class LiveRun:
    """One run plus the asyncio plumbing a turn needs: what `Turn` talks to."""

    def __init__(self, core: Run, registry: RunRegistry) -> None:
        self.core = core
        self.registry = registry
        self.clock = registry.clock
        self._waiters: dict[PendingKey, asyncio.Future] = {}
        self._streams: dict[int, asyncio.Queue[pb.ExecClientMessage]] = {}
        self.task: asyncio.Task | None = None
        self.turn: Turn | None = None  # the running Turn, for the status display
        self.route = ""  # how the run's calls reached the proxy (mode, transport), for usage
        self.parent: tuple[str, str] | None = None  # a subagent's parent request, tool call
        self._interrupt: BaseException | None = None
        self._observed = 0  # frames handed to observers so far
        # Waiting for `detached_since` to change (the agent's limit on unattended model calls).
        self._stream_watchers: list[asyncio.Future[None]] = []
        self._seen_detached = self.detached_since

    @property
    def request_id(self) -> str:
        """The first attempt's request id (logs and captures; usually the run id too)."""
        return self.core.first_request_id

    # --- commands ---------------------------------------------------------------------------

    def start(self, run_request: pb.AgentRunRequest, runner: TurnRunner) -> None:
        self.task = asyncio.get_running_loop().create_task(
            self._run(run_request, runner), name=f"turn-{self.request_id}"
        )

    def resolve(self, key: PendingKey, message) -> None:
        waiter = self._waiters.pop(key, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(message)

    def stream_event(self, exec_id: int, message: pb.ExecClientMessage) -> None:
        queue = self._streams.get(exec_id)
        if queue is not None:
            queue.put_nowait(message)

    def interrupt(self, exc: BaseException) -> None:
        """Stop the running turn: its current await raises `exc` (via task cancellation)."""
        if self.task is None or self.task.done() or self._interrupt is not None:
            return
        self._interrupt = exc
        self.task.cancel()

    async def _run(self, run_request: pb.AgentRunRequest, runner: TurnRunner) -> None:
        try:
            await runner(self, run_request)
        except asyncio.CancelledError:
            if self._interrupt is None:
                raise
        except Exception:
            log.exception("run %s: turn crashed", self.request_id)
            self.finish(EndStreamError("internal", "cursor-byok internal error; see proxy log"))
        finally:
            self._fail_waiters()
            self.deliver()

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

    @property
    def detached_since(self) -> float | None:
        """Since when no response stream of any attempt reads this run (None while one does),
        on `clock()`: how long a turn without a reader may keep paying for a model call."""
        return self.core.detached_since if self.core.detached else None

    def watch_streams(self) -> asyncio.Future[None]:
        """A future that completes the next time `detached_since` changes (a stream of this
        run opened while none was, or its last one closed)."""
        watcher = asyncio.get_running_loop().create_future()
        self._stream_watchers.append(watcher)
        return watcher

    def streams_changed(self) -> None:
        """Wake the watchers when `detached_since` changed since they were last woken."""
        since = self.detached_since
        if since == self._seen_detached:
            return
        self._seen_detached = since
        watchers, self._stream_watchers = self._stream_watchers, []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    def deliver(self) -> None:
        """Frames became readable: every stream of the run writes what it has now, inside this
        call (no reader task is woken for it); then observers see what is final (what the
        streams just took included), and the one timer follows the core's next deadline."""
        self.registry.wake_run(self.core)
        self.observe()
        self.registry.reschedule()

    def observe(self) -> None:
        """Hand every entry that turned final since the last call to the observers, once."""
        core = self.core
        final = core.final()
        if self._observed >= final:
            return
        observers = self.registry.observers
        if not observers:
            self._observed = final
            return
        entries = core.entries
        while self._observed < final:
            entry = entries[self._observed]
            self._observed += 1
            payload = entry.payload
            for observer in observers:
                try:
                    observer(self.request_id, payload, entry.end_stream)
                except Exception:
                    log.exception("run %s: frame observer failed", self.request_id)

    # --- outputs used by the turn ------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage) -> None:
        """One pass: the core queues it (a delta held for coalescing is news for nobody until
        its window is over: the core's next deadline) and, if streams have news, they write
        it now."""
        if self.core.emit(message, now=self.clock()):
            self.deliver()
        else:
            self.observe()  # a delta tail another delta closed is final
            self.registry.reschedule()  # a hold may have begun: its release is a deadline

    def finish(self, error: EndStreamError | None = None) -> None:
        self.core.finish(error, now=self.clock())
        self.deliver()

    @property
    def transport(self) -> str:
        """How the attempt that started the run came: "run" (HTTP/2 `Run`) or "bidi"."""
        attempt = self.registry._core.attempts.get(self.core.first_request_id)
        return attempt.transport if attempt is not None else "bidi"

    @property
    def finished(self) -> bool:
        """Whether the run's end-stream frame is queued (nothing may follow it)."""
        return not self.core.running

    @property
    def has_streams(self) -> bool:
        """Whether any response stream of any attempt is reading this run now."""
        return self.core.streams > 0

    @property
    def state(self) -> str:
        """The run's state for the status display: running (stream or none) or finished."""
        return "running" if self.core.running else self.core.state.value

    def describe_pending(self, keys) -> str:
        """`kv 3 (set_blob_args, 12 s)` for each key still pending, for error messages."""
        return self.core.describe_pending(keys, now=self.clock())

    @property
    def client_last_seen(self) -> float:
        """When any attempt of this run last heard from the client (heartbeats included)."""
        return self.core.last_client_at

    def _waiter(self, key: PendingKey) -> asyncio.Future:
        """Register for the answer, then let the request go out (no answer comes before)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[key] = waiter
        self.deliver()
        return waiter

    async def _await(self, key: PendingKey, waiter: asyncio.Future | None = None):
        waiter = waiter if waiter is not None else self._waiter(key)
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
        key = (PendingKind.EXEC, ident)
        result = asyncio.ensure_future(self._await(key, self._waiter(key)))
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

    def open_kv(self, message: pb.KvServerMessage) -> tuple[PendingKey, Awaitable]:
        """Send a KV request; returns its key and an awaitable of the answer."""
        ident = self.core.open_kv(message, now=self.clock())
        key = (PendingKind.KV, ident)
        return key, self._await(key, self._waiter(key))

    def open_set_blob(self, blob_id: bytes, data: bytes) -> tuple[PendingKey, Awaitable]:
        key = (PendingKind.KV, self.core.open_set_blob(blob_id, data, now=self.clock()))
        return key, self._await(key, self._waiter(key))

    async def kv(self, message: pb.KvServerMessage) -> pb.KvClientMessage:
        _, answer = self.open_kv(message)
        return await answer

    async def interact(self, query: pb.InteractionQuery) -> pb.InteractionResponse:
        ident = self.core.open_interaction(query, now=self.clock())
        return await self._await((PendingKind.INTERACTION, ident))

    def abort_pending(self) -> None:
        self.core.abort_pending(now=self.clock())
        self._fail_waiters()
        self.deliver()


class RunRegistry:
    """Every attempt and run, the turns they start, and one timer for all their deadlines."""

    def __init__(
        self,
        runner: TurnRunner,
        *,
        config: RunConfig | None = None,
        clock: Clock = time.monotonic,
        supersedes: Callable[[pb.AgentRunRequest], bool] = lambda _request: True,
        live_action: Callable[[LiveRun, pb.ConversationAction], None] | None = None,
    ) -> None:
        self.runner = runner
        self._core = Registry(config, supersedes=supersedes)
        self.live_action = live_action  # serves mid-run actions (cancel one subagent, …)
        self.on_unresolved: Callable[[str, str], None] | None = None  # the census
        # request id → the parent its run request's headers name, for its run when it starts
        self.parents: dict[str, tuple[str, str]] = {}
        self.clock = clock
        self.observers: list[FrameObserver] = []
        self.runs: dict[str, LiveRun] = {}
        # request id → the writers of that attempt's response streams (see stream_to)
        self._pumps: dict[str, list[Callable[[], None]]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._stopped = False

    @property
    def config(self) -> RunConfig:
        return self._core.config

    @config.setter
    def config(self, config: RunConfig) -> None:
        self._core.configure(config)

    def live(self, run: Run) -> LiveRun:
        live = self.runs.get(run.run_id)
        if live is None or live.core is not run:
            live = self.runs[run.run_id] = LiveRun(run, self)
        return live

    def knows(self, request_id: str) -> bool:
        """Whether a request id has an attempt here (a stream, an upload or a poll opened it)."""
        return request_id in self._core.attempts

    def run_for(self, request_id: str) -> LiveRun | None:
        run = self._core.run_of(request_id)
        return None if run is None else self.live(run)

    # --- inputs -----------------------------------------------------------------------------

    def open_attempt(
        self, request_id: str, *, owner: bytes = b"", transport: str = "bidi", client: str = ""
    ) -> None:
        """Make sure the attempt of a request id exists before its body or stream comes (the
        edge does this as the request arrives); raises `Refused` for another client's request
        id, or when every attempt is busy. Its run-request time-out starts now."""
        _, notes = self._core.open_attempt(
            request_id, owner=owner, now=self.clock(), transport=transport, client=client
        )
        self.apply(notes)
        self.reschedule()

    def receive(
        self,
        request_id: str,
        seqno: int | None,
        message: pb.AgentClientMessage | None,
        *,
        raw: bytes = b"",
        owner: bytes = b"",
        transport: str = "bidi",
        client: str = "",
    ) -> None:
        """One client message (raises `Refused` for requests the core will not take)."""
        try:
            commands = self._core.receive(
                request_id,
                seqno,
                message,
                raw=raw,
                owner=owner,
                now=self.clock(),
                transport=transport,
                client=client,
            )
        except Refused as refused:
            self.apply(list(refused.notes))
            raise
        self.apply(commands)
        self._wake(request_id)  # its streams: the run it now carries, or its own end
        self._streams_changed(request_id)  # binding an attempt with streams attaches its run
        self.reschedule()

    def subscribe(
        self,
        request_id: str,
        *,
        owner: bytes = b"",
        encoding: str | None = None,
        grpc_web: bool = False,
        transport: str = "bidi",
        client: str = "",
    ) -> Subscriber:
        sub, notes = self._core.subscribe(
            request_id,
            owner=owner,
            now=self.clock(),
            encoding=encoding,
            grpc_web=grpc_web,
            transport=transport,
            client=client,
        )
        self.apply(notes)
        self._streams_changed(request_id)
        self.reschedule()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self._core.unsubscribe(sub, now=self.clock())
        self._streams_changed(sub.attempt.request_id)
        self.reschedule()

    def _streams_changed(self, request_id: str) -> None:
        run = self._core.run_of(request_id)
        live = self.runs.get(run.run_id) if run is not None else None
        if live is not None and live.core is run:
            live.streams_changed()

    def close_attempt(self, request_id: str, error: EndStreamError | None) -> None:
        """End one attempt's streams (bad input on a `Run` stream); fails its running run."""
        self.apply(self._core.close_attempt(request_id, error, now=self.clock()))
        self._wake(request_id)

    async def stream_to(
        self,
        sub: Subscriber,
        write: Callable[[bytes], None],
        *,
        until: asyncio.Future,
        full: Callable[[], bool] = lambda: False,
        drain: Callable[[], Awaitable[None]] | None = None,
        max_bytes: int | None = None,
    ) -> int:
        """Write everything one response stream must carry, until its end-stream frame or until
        `until` completes (the client went away); returns how many chunks were written.

        Frames are written by whoever makes them readable (the turn's emit, the flush timer, a
        client message), not by a reader task woken for it: a task switch less per frame. Frames
        ready together go as one chunk (a large one alone: `connect.write_batches`). Writing stops
        while `full()` until `drain()` returns; `max_bytes` bounds one write (a RunPoll answer)."""
        request_id = sub.attempt.request_id
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()
        kick: asyncio.Future[None] | None = None
        blocked = False
        chunks = 0

        def pump() -> None:
            nonlocal blocked, chunks
            if blocked or ended.done():
                return
            try:
                frames, end = self._core.read(sub, now=self.clock(), max_bytes=max_bytes)
                for piece in connect.write_batches(frames):
                    write(piece)
                    chunks += 1
                if end:
                    ended.set_result(None)
                elif frames and full():
                    blocked = True
                    if kick is not None and not kick.done():
                        kick.set_result(None)
            except Exception as exc:  # the writer's failure ends this stream, not the turn
                if not ended.done():
                    ended.set_exception(exc)

        pumps = self._pumps.setdefault(request_id, [])
        pumps.append(pump)
        try:
            pump()
            while not ended.done() and not until.done():
                if blocked and drain is not None:
                    await drain()
                    blocked = False
                    pump()
                    continue
                kick = loop.create_future()
                await asyncio.wait({ended, until, kick}, return_when=asyncio.FIRST_COMPLETED)
                kick = None
            if ended.done():
                ended.result()
        finally:
            pumps.remove(pump)
            if not pumps:
                del self._pumps[request_id]
        return chunks

    def _wake(self, request_id: str) -> None:
        pumps = self._pumps.get(request_id)
        if pumps:
            for pump in list(pumps):
                pump()

    def wake_run(self, run: Run) -> None:
        for request_id in run.attempt_ids:
            self._wake(request_id)

    def apply(self, commands: list[Command]) -> None:
        for command in commands:
            match command:
                case StartTurn(run, run_request):
                    starting = self.live(run)
                    starting.parent = self.parents.pop(run.first_request_id, None)
                    starting.start(run_request, self.runner)
                case Resolve(run, key, message):
                    self.live(run).resolve(key, message)
                case StreamEvent(run, exec_id, message):
                    self.live(run).stream_event(exec_id, message)
                case CancelTurn(run, reason, action, final):
                    self.live(run).interrupt(TurnCancelled(reason, action, final=final))
                case FailTurn(run, code, message):
                    self.live(run).interrupt(TurnFailed(code, message))
                case LiveAction(run, action):
                    if self.live_action is None:
                        log.info(
                            "run %s: %s ignored mid-run", run.run_id, action.WhichOneof("action")
                        )
                    else:
                        self.live_action(self.live(run), action)
                case Unresolved(kind, ident):
                    if self.on_unresolved is not None:
                        self.on_unresolved(kind, ident)
                case EndStreams(request_id):
                    self._wake(request_id)
                case DropRun(run):
                    live = self.runs.get(run.run_id)
                    if live is not None and live.core is run:
                        del self.runs[run.run_id]
                        del live
                        memory.run_dropped(run.outbox.size)
                case Note(level, template, args):
                    log.log(_LEVELS[level], template, *args)

    # --- time -------------------------------------------------------------------------------

    def start(self) -> None:
        self._stopped = False
        self.reschedule()

    def reschedule(self) -> None:
        """Arm the one timer at the core's next deadline (asking is O(1): after every input
        and frame); coalescing releases are among those deadlines."""
        self.arm(self._core.next_deadline())

    def arm(self, deadline: float | None) -> None:
        """Make sure the timer fires by `deadline` (an earlier armed timer is kept)."""
        if self._stopped or deadline is None:
            return
        if self._timer is not None and self._timer_at is not None and self._timer_at <= deadline:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, deadline - self.clock())
        self._timer_at = deadline
        self._timer = loop.call_at(loop.time() + delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        try:
            self.tick()
        except Exception:
            log.exception("session timers failed; they keep running")
        finally:
            self.reschedule()

    def tick(self) -> None:
        """Run every due timer of every attempt and run, then wake the readers concerned."""
        ticked = self._core.tick(self.clock())
        self.apply(ticked.commands)
        for request_id in ticked.wake:  # each stream once, whatever woke it
            self._wake(request_id)
        for run in ticked.runs:  # released deltas, now final if a stream took them
            live = self.runs.get(run.run_id)
            if live is not None:
                live.observe()

    # --- queries ----------------------------------------------------------------------------

    def running_for(self, conversation_id: str) -> list[LiveRun]:
        """Live runs of one conversation."""
        runs = self._core.running_runs()
        return [self.live(r) for r in runs if r.run_request.conversation_id == conversation_id]

    async def stop(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tasks = [s.task for s in self.runs.values() if s.task and not s.task.done()]
        for live in self.runs.values():
            live.interrupt(TurnCancelled("the proxy is shutting down"))
        if tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait(tasks, timeout=5)
