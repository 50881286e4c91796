"""One run as its turn sees it (`LiveRun`): the asyncio plumbing around a core `Run` (futures
for its pending client requests, the turn's task and its interrupt, the frames observers see).
`run_registry.RunRegistry` makes one per run and applies the core's commands to it.

The turn's task has its lifecycle in `TASK_TRANSITIONS`:

    IDLE ─start→ RUNNING ─interrupt→ INTERRUPTED ─take→ CLOSING ─interrupt→ INTERRUPTED ...
    RUNNING | INTERRUPTED | CLOSING ─end→ DONE

An interrupt (a cancel or failure the core decided) cancels the task; the turn takes its reason
once (`take_interrupt`) and closes, and while it closes (a checkpoint for a cancelled turn that a
stream reads) a later interrupt still stops it. Until the reason is taken, later ones are
dropped: the first decides how the turn ends.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Protocol

from cursor_byok.core.outbox import StoredFrame
from cursor_byok.core.outbox import set_blob_head
from cursor_byok.core.runs import PendingKey
from cursor_byok.core.runs import PendingKind
from cursor_byok.core.runs import Run
from cursor_byok.core.states import step
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.backlog_spill import BacklogSpill
from cursor_byok.store.blobs import BlobFrame
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_pieces import LARGE_BLOB
from cursor_byok.wire.blob_pieces import BlobPieces
from cursor_byok.wire.connect import EndStreamError

if TYPE_CHECKING:
    from cursor_byok.agent.turn import Turn

log = logging.getLogger(__name__)

TurnRunner = Callable[["LiveRun", pb.AgentRunRequest], Awaitable[None]]
FrameObserver = Callable[[str, bytes, bool], None]  # (run id, payload, is end-stream)


class TaskState(enum.Enum):
    IDLE = "idle"  # no task yet
    RUNNING = "running"  # the turn runs
    INTERRUPTED = "interrupted"  # told to stop: its reason waits for the turn to take it
    CLOSING = "closing"  # took its interrupt and closes (a later interrupt still reaches it)
    DONE = "done"  # the task ended


class TaskEvent(enum.Enum):
    START = "start"
    INTERRUPT = "interrupt"
    TAKE = "take"
    END = "end"


_T, _TE = TaskState, TaskEvent
TASK_TRANSITIONS: dict[tuple[TaskState, TaskEvent], TaskState] = {
    (_T.IDLE, _TE.START): _T.RUNNING,
    (_T.RUNNING, _TE.INTERRUPT): _T.INTERRUPTED,
    (_T.CLOSING, _TE.INTERRUPT): _T.INTERRUPTED,
    (_T.INTERRUPTED, _TE.TAKE): _T.CLOSING,
    (_T.RUNNING, _TE.END): _T.DONE,
    (_T.INTERRUPTED, _TE.END): _T.DONE,
    (_T.CLOSING, _TE.END): _T.DONE,
}


class Host(Protocol):
    """What a `LiveRun` needs of its registry (`RunRegistry`)."""

    clock: Callable[[], float]
    observers: list[FrameObserver]
    spill_dir: Path | None  # where runs spill their older frames (None: they keep them)

    def wake_run(self, run: Run) -> None: ...

    def reschedule(self) -> None: ...

    def transport_of(self, request_id: str) -> str: ...

    def run_for(self, request_id: str) -> LiveRun | None: ...


class LiveRun:
    """One run plus the asyncio plumbing a turn needs: what `Turn` talks to."""

    def __init__(self, core: Run, registry: Host) -> None:
        self.core = core
        self.registry = registry
        self.clock = registry.clock
        self._waiters: dict[PendingKey, asyncio.Future] = {}
        self._streams: dict[int, asyncio.Queue[pb.ExecClientMessage]] = {}
        self.task: asyncio.Task | None = None
        self.turn: Turn | None = None  # the running Turn, for the status display
        self.parent: tuple[str, str] | None = None  # a subagent's parent request, tool call
        self.task_state = TaskState.IDLE  # `TASK_TRANSITIONS`
        self._interrupt: BaseException | None = None  # while INTERRUPTED: why
        self._observed = 0  # frames handed to observers so far
        self.spill: BacklogSpill | None = None  # the file of its older frames, once it spilled
        # Waiting for `detached_since` to change (the agent's limit on unattended model calls).
        self._stream_watchers: list[asyncio.Future[None]] = []
        self._seen_detached = self.detached_since

    @property
    def request_id(self) -> str:
        """The first attempt's request id (logs and captures; usually the run id too)."""
        return self.core.first_request_id

    # --- commands ---------------------------------------------------------------------------

    def _step(self, event: TaskEvent) -> None:
        self.task_state = step(TASK_TRANSITIONS, self.task_state, event, f"turn {self.request_id}")

    def start(self, run_request: pb.AgentRunRequest, runner: TurnRunner) -> None:
        self._step(TaskEvent.START)  # once: a run never runs its turn twice
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
        """Stop the running turn: its current await raises `exc` (via task cancellation). The
        first reason wins until the turn takes it; a turn not started or done hears nothing."""
        state = self.task_state
        if state is not TaskState.RUNNING and state is not TaskState.CLOSING:
            return
        if self.task is None or self.task.done():  # cancelled before it ever ran
            return
        self._step(TaskEvent.INTERRUPT)
        self._interrupt = exc
        self.task.cancel()

    async def _run(self, run_request: pb.AgentRunRequest, runner: TurnRunner) -> None:
        try:
            await runner(self, run_request)
        except asyncio.CancelledError:
            if self.task_state is not TaskState.INTERRUPTED:
                raise  # not ours (the loop is closing): let it go
        except Exception:
            log.exception("run %s: turn crashed", self.request_id)
            self.finish(EndStreamError("internal", "cursor-byok internal error; see proxy log"))
        finally:
            self._step(TaskEvent.END)
            self._fail_waiters()
            self.deliver()

    def take_interrupt(self) -> BaseException | None:
        """The reason the turn was interrupted, once (the runner converts CancelledError); the
        turn closes from then on, and may be interrupted again."""
        if self.task_state is not TaskState.INTERRUPTED:
            return None
        self._step(TaskEvent.TAKE)
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
        """Hand every entry that turned final since the last call to the observers, once; then
        (observers have seen them) move the oldest to disk if memory holds too many."""
        core = self.core
        final = core.final()
        if self._observed < final:
            self._hand_over(final)
        if core.outbox.resident > core.spill_at:
            self._spill()

    def _hand_over(self, final: int) -> None:
        core = self.core
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

    def _spill(self) -> None:
        """Append the frames the core says are due (`Run.spill_due`) to the run's spill file, in
        one write, and let the backlog keep only where they are. If they cannot be written they
        stay in memory, and so does the rest of this run's backlog."""
        core = self.core
        entries = core.spill_due()
        if not entries:
            return
        spill = self.spill
        if spill is None:
            folder = self.registry.spill_dir
            if folder is None:
                core.keep_in_memory()
                return
            spill = self.spill = BacklogSpill(folder, core.run_id)
        stored = spill.write([entry.frame for entry in entries if entry.frame is not None])
        if stored is None:
            core.keep_in_memory()
            return
        outbox = core.outbox
        for entry, frame in zip(entries, stored, strict=True):
            outbox.spilled(entry, frame)

    def dropped(self, *, read: bool) -> None:
        """The registry forgot the run: its spill file goes, and its descriptor too unless a
        stream still `read`s the run (then the file's last reader closes it, by going)."""
        spill = self.spill
        if spill is not None:
            if read:
                spill.discard()
            else:
                spill.close()

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

    def emit_frame(
        self, frame: bytes | None, *, stored: StoredFrame | None = None, size: int = 0
    ) -> None:
        """A message already in its envelope (a staged checkpoint built around its JSON);
        `stored` makes it again (the backlog lets go of it once a stream took it), or makes it
        only then (`frame` None: a long one of `size` bytes)."""
        self.core.emit_frame(frame, now=self.clock(), stored=stored, size=size)
        self.deliver()

    def finish(self, error: EndStreamError | None = None) -> None:
        self.core.finish(error, now=self.clock())
        self.deliver()

    @property
    def transport(self) -> str:
        """How the attempt that started the run came: "run" (HTTP/2 `Run`) or "bidi"."""
        return self.registry.transport_of(self.core.first_request_id)

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

    def open_set_blob(
        self, blob_id: bytes, data: bytes | BlobPieces, *, stored: BlobStore | None = None
    ) -> tuple[PendingKey, Awaitable]:
        """Send a KV SET of a blob. With `stored` (the blob is in that store on disk) the run's
        backlog lets go of the frame once the client acknowledged it and makes it again from
        the store for a replay (`BlobFrame`): otherwise a multi-MB frame stays beside the
        blob's other copies until the run is dropped, for a replay that rarely comes (an
        attempt that joins later skips an answered request; only a stream of this attempt
        opened again reads it). Not before the ack: a reconnect under a new request id replays
        what is still pending, and would read it from disk. A long blob on disk is never made
        into a frame here: the stream that takes it reads it from the store then, so the turn's
        copies of it (steps, history) need not live beside its frame."""
        make = None
        size = len(data) if isinstance(data, bytes) else data.size
        body: bytes | int = data if isinstance(data, bytes) else size
        if stored is not None:

            def make(kv_id: int) -> BlobFrame:
                return BlobFrame(set_blob_head(kv_id, blob_id, size), blob_id, b"", stored)

        if (stored is None or size < LARGE_BLOB) and isinstance(data, BlobPieces):
            body = data.join()
        elif stored is not None and size >= LARGE_BLOB:
            body = size
        ident = self.core.open_set_blob(blob_id, body, now=self.clock(), stored=make)
        key = (PendingKind.KV, ident)
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
