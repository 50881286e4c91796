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
from collections.abc import Mapping
from pathlib import Path

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
from cursor_byok.core.runs import Refused
from cursor_byok.core.runs import Resolve
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.runs import StartTurn
from cursor_byok.core.runs import StreamEvent
from cursor_byok.core.runs import Unresolved
from cursor_byok.core.states import RunState
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import memory
from cursor_byok.proxy.live_run import FrameObserver
from cursor_byok.proxy.live_run import LiveRun
from cursor_byok.proxy.live_run import TurnRunner
from cursor_byok.proxy.write_pump import WritePump
from cursor_byok.wire.connect import EndStreamError

log = logging.getLogger(__name__)


def _after(callback: Callable[[int], object], size: int) -> None:
    """Call `callback(size)` once the loop's current step is over (the dropping frame and the
    last reader's stream still hold the run until then); at once without a running loop."""
    try:
        asyncio.get_running_loop().call_soon(callback, size)
    except RuntimeError:
        callback(size)


_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}

Clock = Callable[[], float]


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
        self.clock = clock
        self.observers: list[FrameObserver] = []
        self.spill_dir: Path | None = None  # runs spill older frames here (run_settings.py)
        self.runs: dict[str, LiveRun] = {}
        # request id → the writers of that attempt's response streams (see stream_to)
        self._pumps: dict[str, list[WritePump]] = {}
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

    def transport_of(self, request_id: str) -> str:
        """How an attempt came: "run" (HTTP/2 `Run`) or "bidi" (also for one long gone)."""
        attempt = self._core.attempts.get(request_id)
        return attempt.transport if attempt is not None else "bidi"

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
        parent: tuple[str, str] | None = None,
    ) -> None:
        """One client message (raises `Refused` for requests the core will not take); `parent`:
        the (request id, tool call id) a subagent's run request names, for the run it starts."""
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
        self.apply(commands, {request_id: parent} if parent is not None else None)
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
        run = sub.attempt.run
        if run is not None and run.state is RunState.DROPPED and not run.attempt_ids:
            _after(memory.run_dropped, run.outbox.size)  # its last reader went
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
        read_bytes: int | None = None,
    ) -> int:
        """Write everything one response stream must carry, until its end-stream frame or until
        `until` completes (the client went away); returns how many chunks were written.

        Frames are written by whoever makes them readable (the turn's emit, the flush timer, a
        client message), not by a reader task woken for it: a task switch less per frame. Frames
        ready together go as one chunk (a large one alone: `connect.write_batches`). Writing stops
        while `full()` until `drain()` returns; `max_bytes` bounds one write (a RunPoll answer);
        `read_bytes` bounds one read, and the pump reads again while the transport is not full."""
        request_id = sub.attempt.request_id
        core = self._core

        def read() -> tuple[list[bytes], bool]:
            return core.read(sub, now=self.clock(), max_bytes=max_bytes or read_bytes)

        pump = WritePump(read, write, full=full, drain=drain, read_bytes=read_bytes)
        pumps = self._pumps.setdefault(request_id, [])
        pumps.append(pump)
        try:
            await pump.run(until)
        finally:
            pumps.remove(pump)
            if not pumps:
                del self._pumps[request_id]
        return pump.chunks

    def _wake(self, request_id: str) -> None:
        pumps = self._pumps.get(request_id)
        if pumps:
            for pump in list(pumps):
                pump()

    def wake_run(self, run: Run) -> None:
        for request_id in run.attempt_ids:
            self._wake(request_id)

    def apply(
        self, commands: list[Command], parents: Mapping[str, tuple[str, str]] | None = None
    ) -> None:
        """Carry out the core's commands; `parents`: a starting run's parent link, by the request
        id of its first attempt (`receive`)."""
        for command in commands:
            match command:
                case StartTurn(run, run_request):
                    starting = self.live(run)
                    starting.parent = parents.get(run.first_request_id) if parents else None
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
                    self._live_action(run, action)
                case Unresolved(kind, ident):
                    if self.on_unresolved is not None:
                        self.on_unresolved(kind, ident)
                case EndStreams(request_id):
                    self._wake(request_id)
                case DropRun(run):
                    self._drop(run)
                case Note(level, template, args):
                    log.log(_LEVELS[level], template, *args)

    def _live_action(self, run: Run, action: pb.ConversationAction) -> None:
        if self.live_action is None:
            log.info("run %s: %s ignored mid-run", run.run_id, action.WhichOneof("action"))
        else:
            self.live_action(self.live(run), action)

    def _drop(self, run: Run) -> None:
        """The core forgot a finished run: so does the shell (and the memory tally)."""
        live = self.runs.get(run.run_id)
        if live is not None and live.core is run:
            del self.runs[run.run_id]
            live.dropped(read=bool(run.attempt_ids))
            del live
        if not run.attempt_ids:  # else its last reader's going gives it back
            _after(memory.run_dropped, run.outbox.size)

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
