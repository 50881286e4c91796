"""Runs: one agent execution each (`AgentRunRequest.run_id`), sans-IO.

A run owns its outbox (every frame of the turn, which every attempt reads from the start), the
requests it waits on (exec, KV, interaction), and its lifecycle (`RUN_TRANSITIONS`: attached or
detached while it runs, then finished, then dropped). It takes `now` as an input and returns
`Command`s for the shell; it never sleeps, reads a clock, logs or touches a socket: what the
shell should log comes back as a `Note`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from cursor_byok.core.deadlines import Deadlines
from cursor_byok.core.outbox import Entry
from cursor_byok.core.outbox import Outbox
from cursor_byok.core.outbox import PendingKey
from cursor_byok.core.outbox import PendingKind
from cursor_byok.core.outbox import StoredFrame
from cursor_byok.core.outbox import set_blob_frame
from cursor_byok.core.outbox import set_blob_head
from cursor_byok.core.pending import Pending
from cursor_byok.core.states import RUN_TRANSITIONS
from cursor_byok.core.states import HoldState
from cursor_byok.core.states import RunEvent
from cursor_byok.core.states import RunState
from cursor_byok.core.states import step
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, slots=True)
class RunConfig:
    """The core's timers and bounds, in seconds and bytes (the proxy's options set them)."""

    heartbeat_interval: float = 5.0
    grace_period: float = 180.0  # every stream of a running run gone this long → cancel it
    run_request_timeout: float = 60.0  # an attempt without a run request this long → not_found
    gap_timeout: float = 30.0  # an append_seqno gap open this long fails the run
    linger: float = 600.0  # keep a finished run this long for late reconnects and retries
    exec_timeout: float = 600.0  # an exec (other than shell) unanswered this long fails the run
    # Deltas of one run that come within this long of the last deltas released to the streams
    # are held until it has passed and go out as one frame; the first delta after a quiet spell
    # goes at once (0: no holding, and every delta is its own frame unless a stream lags).
    coalesce_window: float = 0.015
    max_attempts: int = 1024  # live request ids, all runs together (limits.py: who makes room)
    max_owner_attempts: int = 256  # live request ids of one owner (a credential)
    max_owner_turns: int = 8  # turns of one owner running at once (limits.running_turns)
    max_buffered_bytes: int = 48 * MiB  # out-of-order uploads waiting, all attempts together
    max_attempt_buffered_bytes: int = 32 * MiB
    # A run keeps every frame of its turn for reconnects and retries; a turn whose frames pass
    # this fails with resource_exhausted. Real turns stream a few MiB (text, tool requests, blob
    # SETs of what was read and written); this bounds a provider that streams without end.
    max_backlog_bytes: int = 128 * MiB
    # Of those frames, a run keeps at most about this many bytes in memory: past it the edge
    # moves the oldest to a file of the run in the data dir, in one write, until half of it is
    # left, and a replay reads them back (0: all stay in memory).
    backlog_memory: int = 256 * KiB
    # a turn still running this long fails with deadline_exceeded (real ones: minutes, an hour)
    turn_timeout: float = 4 * 3600.0


# --- commands for the async shell ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the log: the core decides what is worth saying, the shell says it."""

    level: str  # "debug", "info" or "warning"
    template: str  # %-style, as logging takes it (formatted only if the level is on)
    args: tuple[object, ...] = ()

    def __str__(self) -> str:
        return self.template % self.args

    @classmethod
    def debug(cls, template: str, *args: object) -> Note:
        return cls("debug", template, args)

    @classmethod
    def info(cls, template: str, *args: object) -> Note:
        return cls("info", template, args)

    @classmethod
    def warning(cls, template: str, *args: object) -> Note:
        return cls("warning", template, args)


class Refused(ByokError):
    """A request the core will not take; `code` is the Connect code to answer with, `notes`
    what the shell should log about it (the refusal itself is the caller's to report)."""

    def __init__(self, code: str, message: str, notes: Iterable[Note] = ()) -> None:
        super().__init__(message, code)
        self.notes = tuple(notes)


@dataclass(frozen=True, slots=True)
class StartTurn:
    run: Run
    run_request: pb.AgentRunRequest


@dataclass(frozen=True, slots=True)
class Resolve:
    """A final answer to one pending request."""

    run: Run
    key: PendingKey
    message: pb.ExecClientMessage | pb.KvClientMessage | pb.InteractionResponse


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A non-final event of a streaming exec (shell output), for exec `exec_id`."""

    run: Run
    exec_id: int
    message: pb.ExecClientMessage


@dataclass(frozen=True, slots=True)
class CancelTurn:
    run: Run
    reason: str
    action: pb.CancelAction | None = None
    # Final for the client: a newer run replaced it, or its user stopped it. Its end says so, and
    # Cursor's client does not try the run again (a plain `canceled` it retries, protocol.md §8).
    final: str | None = None  # "superseded" | "user" | None


@dataclass(frozen=True, slots=True)
class FailTurn:
    run: Run
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class LiveAction:
    """A conversation action (other than cancel) sent while the run is going on."""

    run: Run
    action: pb.ConversationAction


@dataclass(frozen=True, slots=True)
class DropRun:
    """A finished run lingered long enough and is forgotten."""

    run: Run


@dataclass(frozen=True, slots=True)
class EndStreams:
    """An attempt was ended to make room for another client: its streams write its end now."""

    request_id: str


@dataclass(frozen=True, slots=True)
class Unresolved:
    """An id the core could not resolve (a request id no run request came for), for the census."""

    kind: str
    ident: str


Command = (
    StartTurn
    | Resolve
    | StreamEvent
    | CancelTurn
    | FailTurn
    | LiveAction
    | DropRun
    | EndStreams
    | Unresolved
    | Note
)


@dataclass(frozen=True, slots=True)
class Tick:
    """What `Registry.tick` did: commands for the shell, request ids whose streams have
    something to write now (a heartbeat, an end), runs whose new frames are readable."""

    commands: list[Command]
    wake: set[str]
    runs: list[Run]


# --- runs ---------------------------------------------------------------------------------------


_AT_ONCE = -math.inf  # the deadline of a run over its backlog bound: the next tick fails it


class Run:
    """One agent execution: outbox with backlog, pending client requests, run state.

    Every state change goes through `_step`, which looks the event up in `RUN_TRANSITIONS` and
    raises `IllegalEvent` for anything the table does not allow. Whether a stream reads it is
    `streams` (none: `detached_since` says since when, and the grace period runs)."""

    def __init__(
        self,
        run_id: str,
        run_request: pb.AgentRunRequest,
        *,
        owner: bytes,
        now: float,
        config: RunConfig,
        deadlines: Deadlines[Run] | None = None,
    ) -> None:
        self.run_id = run_id
        self.first_request_id = run_id  # the attempt that started it (logs, captures)
        self.run_request = run_request
        self.owner = owner
        self.config = config
        self.created_at = now
        self.state = RunState.RUNNING
        self.outbox = Outbox()
        self.attempt_ids: list[str] = []  # the request ids carrying it (attempts.py)
        self.streams = 0  # response streams of those attempts reading it now
        self.was_read = False  # a stream read it once (none now: its client left it)
        self.pending = Pending()
        self.last_client_at = now  # any client message of any attempt: liveness
        self.detached_since = now  # while no stream reads it: since when (or the last cancel)
        self.finished_at: float | None = None
        self.end_stream: EndStreamError | None = None
        self.ignored_results = 0
        # user messages queued before its run request (attempts.py): the turn answers them
        self.queued: list[pb.ConversationAction] = []
        self.timers: Deadlines[Run] = deadlines if deadlines is not None else Deadlines()
        self.timers.due(now + config.grace_period)
        # past this many bytes of final frames in memory the edge spills some (`spill_due`)
        self.spill_at: float = config.backlog_memory or math.inf

    def _step(self, event: RunEvent) -> None:
        self.state = step(RUN_TRANSITIONS, self.state, event, f"run {self.run_id}")

    @property
    def running(self) -> bool:
        return self.state.running

    @property
    def detached(self) -> bool:
        """Running with no stream reading it: the grace period runs."""
        return self.state.running and not self.streams

    @property
    def entries(self) -> list[Entry]:
        return self.outbox.entries

    @property
    def conversation_id(self) -> str:
        return self.run_request.conversation_id

    # --- attempts and streams ---------------------------------------------------------------

    def bind(self, request_id: str, *, streams: int, now: float) -> int:
        """The attempt `request_id` (with `streams` streams open) carries this run from now on;
        returns its bind epoch: answers resolved before it are not sent to that attempt."""
        self._step(RunEvent.BIND)
        # After every answer so far, also when no attempt carries it now (the ones that did
        # were evicted): those answers reached the client, so their requests are not replayed.
        epoch = self.pending.epoch + 1
        self.attempt_ids.append(request_id)
        self.last_client_at = now
        for _ in range(streams):
            self.stream_opened()
        return epoch

    def stream_opened(self) -> None:
        self.streams += 1
        self.was_read = True

    def stream_closed(self, *, now: float) -> None:
        """A stream of one of its attempts went away; the grace period starts with the last."""
        self.streams -= 1
        if self.detached:
            self.detached_since = now
            self.timers.due(now + self.config.grace_period)

    def drop(self) -> None:
        self._step(RunEvent.DROP)

    # --- telling the turn to stop -----------------------------------------------------------

    def cancel(
        self,
        reason: str,
        action: pb.CancelAction | None = None,
        *,
        final: str | None = None,
    ) -> list[Command]:
        """Tell the turn to stop (`CancelTurn`); nothing once it was failed."""
        failed = self.state is RunState.FAILED
        self._step(RunEvent.CANCEL)
        return [] if failed else [CancelTurn(self, reason, action, final=final)]

    def fail(self, code: str, message: str) -> list[Command]:
        """Fail the turn (`FailTurn`), once: a failed turn ends when it hears of it."""
        failed = self.state is RunState.FAILED
        self._step(RunEvent.FAIL)
        return [] if failed else [FailTurn(self, code, message)]

    # --- client → server (what a message means: answers.py) ------------------------------

    def heard(self, now: float) -> None:
        """A client message of any attempt came (answers.py says what it means)."""
        self._step(RunEvent.ANSWER)
        self.last_client_at = now

    def issued(self, key: PendingKey) -> bool:
        """Whether we ever sent this request id (for protocol checks on `Run` streams)."""
        return self.pending.issued(key)

    # --- server → client --------------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage, *, now: float) -> bool:
        """Queue one server message for every stream of the run, present and future (coalesced
        as `Outbox.add` says); True when its streams have something new to read now."""
        self._step(RunEvent.EMIT)
        outbox = self.outbox
        holds = outbox.holds
        news = outbox.add(message, now=now, window=self.config.coalesce_window)
        if outbox.holds != holds:  # a hold began: its release is a deadline of the core
            self.timers.release_at(outbox.hold_until, self)
        if outbox.backlog() > self.config.max_backlog_bytes:
            self._overflow(now)
        return news

    def emit_frame(
        self,
        frame: bytes | None,
        *,
        now: float,
        stored: StoredFrame | None = None,
        size: int = 0,
    ) -> None:
        """`emit` of a message already in its envelope (a staged checkpoint built around its
        JSON, `cursor.checkpoint.staged_frame`): final at once, readable now. With `stored`
        (which makes it again) the backlog lets go of it once a stream took it, or never holds
        it (`frame` None: a long one, `size` bytes, made when a stream takes it)."""
        self._step(RunEvent.EMIT)
        self.outbox.append(frame, stored=stored, size=size)
        if self.outbox.backlog() > self.config.max_backlog_bytes:
            self._overflow(now)

    def _overflow(self, now: float) -> None:
        """The backlog passed its bound: the next tick fails the turn (frames still queue
        until the turn stops, at its next await: a frame or two beyond the bound)."""
        if self.state is RunState.RUNNING or self.state is RunState.CANCELLED:
            self.timers.due(now)
        self._step(RunEvent.OVERFLOW)

    # The outbox as the shell sees it.

    @property
    def held_from(self) -> int | None:
        outbox = self.outbox
        return outbox.held_from if outbox.hold is HoldState.HELD else None

    @property
    def hold_until(self) -> float:
        return self.outbox.hold_until

    def release_due(self, now: float) -> bool:
        return self.outbox.release_due(now)

    def final(self) -> int:
        return self.outbox.final()

    def spill_due(self) -> list[Entry]:
        """The final entries the edge should move to disk now, oldest first (the edge asks once
        `outbox.resident` passed `spill_at`): down to half of `backlog_memory`, so a long
        answer is a few large writes. The next batch is due once as many bytes came again."""
        bound = self.config.backlog_memory
        outbox = self.outbox
        if not bound or outbox.resident <= self.spill_at:
            return []
        keep = bound // 2
        entries = outbox.spillable(keep)
        left = outbox.resident - sum(len(entry.frame or b"") for entry in entries)
        self.spill_at = max(bound, left + bound - keep)
        return entries

    def keep_in_memory(self) -> None:
        """Spill no more of this run (the edge could not write it): its frames stay here."""
        self.spill_at = math.inf

    def _request(
        self,
        frame: bytes | None,
        key: PendingKey,
        what: str,
        now: float,
        *,
        watched: bool = True,
        stored: StoredFrame | None = None,
        size: int = 0,
    ) -> None:
        self._step(RunEvent.REQUEST)
        watched = self.pending.wait(key, what, now, watched=watched)
        self.outbox.append(frame, key=key, stored=stored, size=size)
        if self.outbox.size > self.config.max_backlog_bytes:
            self._overflow(now)
        if watched:
            self.timers.due(now + self.config.exec_timeout)

    def open_exec(self, exec_message: pb.ExecServerMessage, *, now: float) -> int:
        """Assign an id to an exec request, register it as pending, and send it."""
        ident = self.pending.take_id(PendingKind.EXEC)
        exec_message.id = ident
        if not exec_message.exec_id:
            exec_message.exec_id = f"exec-{self.run_id[:8]}-{ident}"
        what = exec_message.WhichOneof("message") or "?"
        message = pb.AgentServerMessage(exec_server_message=exec_message)
        self._request(_frame(message), (PendingKind.EXEC, ident), what, now)
        return ident

    def open_interaction(self, query: pb.InteractionQuery, *, now: float) -> int:
        ident = self.pending.take_id(PendingKind.INTERACTION)
        query.id = ident
        message = pb.AgentServerMessage(interaction_query=query)
        key = (PendingKind.INTERACTION, ident)
        # A person answers: no watchdog.
        self._request(_frame(message), key, query.WhichOneof("query") or "?", now, watched=False)
        return ident

    def open_kv(self, kv: pb.KvServerMessage, *, now: float) -> int:
        ident = self.pending.take_id(PendingKind.KV)
        kv.id = ident
        message = pb.AgentServerMessage(kv_server_message=kv)
        self._request(
            _frame(message), (PendingKind.KV, ident), kv.WhichOneof("message") or "?", now
        )
        return ident

    def open_set_blob(
        self,
        blob_id: bytes,
        data: bytes | int,
        *,
        now: float,
        stored: Callable[[int], StoredFrame] | None = None,
    ) -> int:
        """`open_kv` of a SetBlobArgs, its frame made straight from the blob's bytes (one copy:
        a protobuf message would take three more of a blob that may be megabytes). `stored`
        (given the KV id) makes the frame again: the backlog lets go of it once the client
        answered (`answers._resolve`). With the blob's size in place of its bytes (a long blob,
        on disk) the backlog never holds the frame: `stored` makes it when a stream takes it."""
        ident = self.pending.take_id(PendingKind.KV)
        key = (PendingKind.KV, ident)
        again = stored(ident) if stored is not None else None
        if isinstance(data, int):
            assert again is not None, "a SET without its bytes must be made from the data dir"
            size = len(set_blob_head(ident, blob_id, data)) + data
            self._request(None, key, "set_blob_args", now, stored=again, size=size)
        else:
            frame = set_blob_frame(ident, blob_id, data)
            self._request(frame, key, "set_blob_args", now, stored=again)
        return ident

    def describe_pending(self, keys: Iterable[PendingKey], now: float) -> str:
        """`exec 3 (read_args, 12 s)` for each key still pending, for error messages."""
        return self.pending.describe(keys, now)

    def abort_pending(self, *, now: float) -> list[PendingKey]:
        """Abort every pending exec on the client and forget every other pending request."""
        self._step(RunEvent.ABORT)  # while it runs: its turn aborts before it ends
        keys = self.pending.abort()
        for kind, ident in keys:
            if kind is PendingKind.EXEC:
                abort = pb.ExecServerControlMessage(abort=pb.ExecServerAbort(id=ident))
                self.emit(pb.AgentServerMessage(exec_server_control_message=abort), now=now)
        return keys

    def finish(self, error: EndStreamError | None = None, *, now: float) -> None:
        """Append the end-stream frame; nothing may be sent after it."""
        if not self.running:
            return  # idempotent: every path that ends a turn may call it
        self.pending.clear()
        self.end_stream = error
        self.outbox.append(connect.encode_end_stream(error), end=True)
        self._step(RunEvent.FINISH)
        self.finished_at = now
        self.timers.due(now + self.config.linger)

    # --- time -------------------------------------------------------------------------------

    def deadlines(self) -> list[float]:
        """When `tick` has something to do for this run (its state says what is timed)."""
        cfg = self.config
        state = self.state
        if state is RunState.FINISHED:
            assert self.finished_at is not None
            return [self.finished_at + cfg.linger]
        if state is RunState.OVER_BACKLOG:
            return [_AT_ONCE]
        if state is not RunState.RUNNING and state is not RunState.CANCELLED:
            return []  # failed (it ends at once) or dropped
        out = [self.created_at + cfg.turn_timeout]
        if not self.streams:
            out.append(self.detached_since + cfg.grace_period)
        watched = self.pending.watched_since()
        if watched is not None:
            out.append(watched + cfg.exec_timeout)
        return out

    def tick(self, now: float) -> list[Command]:
        """What time passing does to this run: at most one command per tick."""
        cfg = self.config
        state = self.state
        if state is RunState.FINISHED:
            assert self.finished_at is not None
            return [DropRun(self)] if now >= self.finished_at + cfg.linger else []
        if state is RunState.OVER_BACKLOG:
            limit = cfg.max_backlog_bytes
            size = f"{limit / MiB:g} MiB" if limit >= MiB else f"{limit} bytes"
            return self.fail(
                "resource_exhausted",
                f"this turn's output passed {size}, the output limit of a turn (everything it "
                "sends Cursor is kept for reconnects; max_backlog_bytes, raise it with --set "
                "cursor_byok_max_turn_output_mb=...); the turn was ended",
            )
        if state is not RunState.RUNNING and state is not RunState.CANCELLED:
            return []
        if now >= self.created_at + cfg.turn_timeout:
            why = f"this turn ran for {_hours(cfg.turn_timeout)}, the time limit of a turn"
            why += " (turn_timeout, raise it with --set cursor_byok_turn_timeout_ms=...);"
            why += " the turn was ended"
            return self.fail("deadline_exceeded", why)
        if not self.streams and now >= self.detached_since + cfg.grace_period:
            self.detached_since = now  # one cancel per expiry
            return self.cancel("the client went away (no stream open)")
        overdue = self.pending.overdue(now, cfg.exec_timeout)
        if overdue:
            missing = self.describe_pending(overdue, now)
            return self.fail(
                "deadline_exceeded",
                f"the client did not answer {missing} within {cfg.exec_timeout:.0f} s",
            )
        return []


def _frame(message: pb.AgentServerMessage) -> bytes:
    return connect.encode_frame_raw(0, message.SerializeToString())


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"
