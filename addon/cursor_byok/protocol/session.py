"""The sans-IO core of Agent runs: attempts (request ids) feeding runs (run ids).

A **run** (`AgentRunRequest.run_id`) is one agent execution: its outbox of server frames, the
requests it waits on (exec, KV, interaction), its state. An **attempt** is one transport carrying a
run, named by its `request_id`: a RunSSE + BidiAppend pair or one `Run` stream. Cursor reconnects
by re-sending the same run request under a new request id (protocol.md §7), so a run can have many
attempts; a run request naming a run we know attaches to it and never starts it again.

Everything here takes `now` as an input and returns `Command`s; nothing sleeps, reads a clock,
logs on behalf of others or touches a socket. `Sessions.next_deadline()` says when `tick` must run
next, so the shell sleeps exactly that long.

Replay rule: every subscriber gets its run's frames from the beginning, then live frames.
Subscribers of the attempt that saw a frame get it byte-identical (the client skips the prefix it
has); an attempt that joined later is not sent exec/KV/interaction requests that were already
answered, so nothing runs twice on the client. Heartbeats are live-only, per subscriber.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.protocol import connect
from cursor_byok.protocol.connect import EndStreamError
from cursor_byok.protocol.inbox import Budget
from cursor_byok.protocol.inbox import Inbox
from cursor_byok.protocol.inbox import InboxOverflow
from cursor_byok.protocol.inbox import Outcome

log = logging.getLogger(__name__)

# Frames at least this large are compressed when the client accepts it, as Cursor's server does
# for KV SETs and checkpoints; small deltas stay uncompressed (cheaper, and what Cursor sends).
COMPRESS_THRESHOLD = 4096

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SessionConfig:
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
    max_attempts: int = 1024  # live request ids, all runs together
    max_buffered_bytes: int = 48 * MiB  # out-of-order uploads waiting, all attempts together
    max_attempt_buffered_bytes: int = 32 * MiB


class RunState(enum.Enum):
    RUNNING = "running"
    FINISHED = "finished"  # the end-stream frame is in the outbox


class RunEvent(enum.Enum):
    """What can happen to a run; `RUN_TRANSITIONS` says in which state, and to which state."""

    EMIT = "emit"  # a server frame is queued
    REQUEST = "request"  # an exec/KV/interaction request is sent
    ANSWER = "answer"  # a client message arrives
    ABORT = "abort"  # pending requests are aborted
    FINISH = "finish"  # the end-stream frame is queued
    ATTACH = "attach"  # another attempt joins


RUN_TRANSITIONS: dict[tuple[RunState, RunEvent], RunState] = {
    (RunState.RUNNING, RunEvent.EMIT): RunState.RUNNING,
    (RunState.RUNNING, RunEvent.REQUEST): RunState.RUNNING,
    (RunState.RUNNING, RunEvent.ANSWER): RunState.RUNNING,
    (RunState.RUNNING, RunEvent.ABORT): RunState.RUNNING,
    (RunState.RUNNING, RunEvent.FINISH): RunState.FINISHED,
    (RunState.RUNNING, RunEvent.ATTACH): RunState.RUNNING,
    # A finished run still hears late answers (dropped) and takes attempts that replay it.
    (RunState.FINISHED, RunEvent.ANSWER): RunState.FINISHED,
    (RunState.FINISHED, RunEvent.ATTACH): RunState.FINISHED,
    (RunState.FINISHED, RunEvent.ABORT): RunState.FINISHED,
}


class IllegalEvent(ByokError):
    """An event the run's state does not allow (a bug in the caller, never client input)."""


class PendingKind(enum.Enum):
    EXEC = "exec"
    KV = "kv"
    INTERACTION = "interaction"


PendingKey = tuple[PendingKind, int]


class Refused(ByokError):
    """A request the core will not take; `code` is the Connect code to answer with."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code)


# --- commands for the async shell ---------------------------------------------------------------


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


Command = StartTurn | Resolve | StreamEvent | CancelTurn | FailTurn | LiveAction | DropRun


# --- outbox and subscribers ---------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    payload: bytes
    end_stream: bool = False
    key: PendingKey | None = None  # the client request this frame carries, if any
    compressed: dict[str, bytes] | None = None  # encoded envelopes by encoding, made once
    delta: str | None = None  # text_delta/thinking_delta/token_delta: later deltas may join it
    message: pb.AgentServerMessage | None = None  # a delta's message, to fold the next one in
    queued_at: float = 0.0


@dataclass(slots=True)
class _Pending:
    what: str  # the exec/KV/interaction variant, for errors and logs
    since: float
    watched: bool  # subject to the exec watchdog (shell execs keep their own timeout)


@dataclass(slots=True, eq=False)
class Subscriber:
    """One response stream (RunSSE or `Run`) reading an attempt's run."""

    sid: int
    attempt: Attempt
    encoding: str | None
    grpc_web: bool
    last_sent_at: float
    joined_at: int = 0  # heartbeats are live-only; frames before this index were replayed
    position: int = 0
    heartbeat_due: bool = False
    done: bool = False


_HEARTBEAT = pb.AgentServerMessage(
    interaction_update=pb.InteractionUpdate(heartbeat=pb.HeartbeatUpdate())
).SerializeToString()
_HEARTBEAT_FRAME = connect.encode_frame_raw(0, _HEARTBEAT)

_SHELL_TERMINAL = frozenset(
    {"exit", "rejected", "permission_denied", "sandbox_unsupported", "backgrounded"}
)
_UNWATCHED_EXECS = frozenset({"shell_args", "shell_stream_args", "background_shell_spawn_args"})
_COALESCED = frozenset({"text_delta", "thinking_delta", "token_delta"})


def _delta_kind(message: pb.AgentServerMessage) -> str | None:
    if message.WhichOneof("message") != "interaction_update":
        return None
    kind = message.interaction_update.WhichOneof("message")
    return kind if kind in _COALESCED else None


def _merge_delta(held: pb.AgentServerMessage, new: pb.AgentServerMessage, kind: str) -> bool:
    """Fold `new` into `held` when both are the same kind of delta; False when they differ."""
    a = getattr(held.interaction_update, kind)
    b = getattr(new.interaction_update, kind)
    if kind == "token_delta":
        a.tokens += b.tokens
        return True
    if kind == "thinking_delta" and a.thinking_style != b.thinking_style:
        return False
    if kind == "text_delta" and a.is_server_notice != b.is_server_notice:
        return False
    a.text += b.text
    return True


# --- attempts -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Upload:
    """One client message in an inbox. One that must wait for an earlier seqno keeps only its
    bytes (a parsed protobuf can take several times their size); it is parsed again when its
    turn comes, so the out-of-order budget bounds memory, not just a count."""

    message: pb.AgentClientMessage | None
    raw: bytes = b""

    def park(self) -> None:
        if self.raw:
            self.message = None

    def take(self) -> pb.AgentClientMessage | None:
        if self.message is None and self.raw:
            self.message = pb.AgentClientMessage.FromString(self.raw)
        return self.message


@dataclass(eq=False)
class Attempt:
    """One request id: its ordered inbox, its response streams, the run it carries."""

    request_id: str
    created_at: float
    owner: bytes
    transport: str  # "bidi" (RunSSE + BidiAppend) or "run" (one HTTP/2 stream)
    inbox: Inbox[_Upload]
    run: Run | None = None
    bind_epoch: int = 0  # answers resolved before this epoch are not sent to this attempt
    end: EndStreamError | None = None  # this attempt's own end (before or apart from its run)
    ended: bool = False
    last_active: float = 0.0
    seqno_clashes: int = 0
    _next_seqno: int = 0  # stream order, for `run` attempts
    _digests: dict[int, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.subscribers: dict[int, Subscriber] = {}
        self.last_active = self.created_at

    def close(self, error: EndStreamError | None) -> None:
        """End this attempt's streams (its run, if any, is not touched)."""
        if not self.ended:
            self.ended = True
            self.end = error


# --- runs ---------------------------------------------------------------------------------------


class Run:
    """One agent execution: outbox with backlog, pending client requests, run state.

    Every state change goes through `_step`, which looks the event up in `RUN_TRANSITIONS` and
    raises `IllegalEvent` for anything the table does not allow."""

    def __init__(
        self, run_id: str, run_request: pb.AgentRunRequest, *, owner: bytes, now: float, config
    ) -> None:
        self.run_id = run_id
        self.first_request_id = run_id  # the attempt that started it (logs, captures)
        self.run_request = run_request
        self.owner = owner
        self.config: SessionConfig = config
        self.created_at = now
        self.state = RunState.RUNNING
        self.entries: list[_Entry] = []
        self.attempts: list[Attempt] = []
        self.pending: dict[PendingKey, _Pending] = {}
        self.resolved: dict[PendingKey, int] = {}  # key → epoch of its answer
        self.epoch = 0
        self._next_exec_id = 1  # exec and interaction ids share one counter (protocol.md §3)
        self._next_kv_id = 1
        self._aborted_execs: set[int] = set()
        self.last_client_at = now  # any client message of any attempt: liveness
        self.detached_since: float | None = now
        self.finished_at: float | None = None
        self.end_stream: EndStreamError | None = None
        self.ignored_results = 0
        self.read_mark = 0  # entries before this index were given to a stream: final
        # Coalescing: entries from `held_from` on are not readable before `hold_until`.
        self.held_from: int | None = None
        self.hold_until = 0.0
        self.last_release = -math.inf  # when deltas were last made readable

    def _step(self, event: RunEvent) -> None:
        target = RUN_TRANSITIONS.get((self.state, event))
        if target is None:
            raise IllegalEvent(f"run {self.run_id}: {event.value} while {self.state.value}")
        self.state = target

    @property
    def conversation_id(self) -> str:
        return self.run_request.conversation_id

    @property
    def subscribers(self) -> int:
        return sum(len(a.subscribers) for a in self.attempts)

    # --- client → server --------------------------------------------------------------------

    def dispatch(self, message: pb.AgentClientMessage, *, now: float) -> list[Command]:
        """One client message of any attempt, in its attempt's order."""
        self._step(RunEvent.ANSWER)
        self.last_client_at = now
        kind = message.WhichOneof("message")
        if kind == "run_request" or kind == "client_heartbeat" or kind is None:
            return []
        if kind == "exec_client_message":
            return self._exec_result(message.exec_client_message)
        if kind == "kv_client_message":
            kv = message.kv_client_message
            if kv.WhichOneof("message") is None:
                return []
            return self._resolve((PendingKind.KV, kv.id), kv)
        if kind == "interaction_response":
            reply = message.interaction_response
            return self._resolve((PendingKind.INTERACTION, reply.id), reply)
        if kind == "exec_client_control_message":
            return self._exec_control(message.exec_client_control_message)
        if kind == "conversation_action":
            action = message.conversation_action
            if self.state is not RunState.RUNNING:
                return []
            if action.WhichOneof("action") == "cancel_action":
                return [CancelTurn(self, "cancelled by the user", action.cancel_action)]
            return [LiveAction(self, action)]
        log.info("run %s: client message %s ignored", self.run_id, kind)
        return []

    def _exec_result(self, result: pb.ExecClientMessage) -> list[Command]:
        kind = result.WhichOneof("message")
        if kind is None:  # not a result (protocol.md §5): keep waiting
            return []
        key = (PendingKind.EXEC, result.id)
        if kind == "mcp_result" and result.mcp_result.WhichOneof("result") == "approved":
            # The user approved the call; the real result follows with the same id.
            return [StreamEvent(self, result.id, result)] if key in self.pending else []
        if kind == "shell_stream":
            event = result.shell_stream.WhichOneof("event")
            if event not in _SHELL_TERMINAL:
                if key in self.pending:
                    return [StreamEvent(self, result.id, result)]
                return self._unknown(key)
        return self._resolve(key, result)

    def _exec_control(self, control: pb.ExecClientControlMessage) -> list[Command]:
        if control.WhichOneof("message") == "throw":
            key = (PendingKind.EXEC, control.throw.id)
            if key in self.pending:
                # The client failed to run it: an empty result the tool layer reads as an error.
                log.info("run %s: client threw for exec %d", self.run_id, key[1])
                return self._resolve(key, pb.ExecClientMessage(id=control.throw.id))
        return []

    def _resolve(self, key: PendingKey, message) -> list[Command]:
        if self.pending.pop(key, None) is None:
            return self._unknown(key)
        self.epoch += 1
        self.resolved[key] = self.epoch
        return [Resolve(self, key, message)]

    def _unknown(self, key: PendingKey) -> list[Command]:
        kind, ident = key
        if key in self.resolved or (kind is PendingKind.EXEC and ident in self._aborted_execs):
            log.debug("run %s: repeated or late result for %s %d dropped", self.run_id, *key)
        else:
            self.ignored_results += 1
            log.warning(
                "run %s: result for unknown %s id %d ignored", self.run_id, kind.value, ident
            )
        return []

    def issued(self, key: PendingKey) -> bool:
        """Whether we ever sent this request id (for protocol checks on `Run` streams)."""
        kind, ident = key
        counter = self._next_kv_id if kind is PendingKind.KV else self._next_exec_id
        return 0 < ident < counter

    # --- server → client --------------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage, *, now: float) -> None:
        """Queue one server message for every subscriber, present and future.

        Fewer, fuller frames (each one costs a write, a proxy round and a client parse): a
        text/thinking/token delta that comes within `coalesce_window` of the last deltas
        released is held until the window has passed, and the deltas that join it meanwhile
        become one frame; the first delta after a quiet spell goes out at once. A delta also
        joins a frame no stream has taken yet (the streams are busy writing). Anything else
        releases what is held, so order never changes. Frames already given to a stream never
        change, so every replay of the backlog is byte-identical."""
        self._step(RunEvent.EMIT)
        kind = _delta_kind(message)
        if kind is None:
            self._append(message.SerializeToString())
            return
        window = self.config.coalesce_window
        self.release_due(now)
        entries = self.entries
        if entries and window > 0:
            tail = entries[-1]
            if (
                tail.delta == kind
                and len(entries) - 1 >= self.read_mark
                and now - tail.queued_at <= window
                and tail.message is not None
                and _merge_delta(tail.message, message, kind)
            ):
                tail.payload = tail.message.SerializeToString()
                tail.compressed = None
                return
        entries.append(
            _Entry(message.SerializeToString(), delta=kind, message=message, queued_at=now)
        )
        if window <= 0:
            return
        if self.held_from is None and now - self.last_release < window:
            self.held_from = len(entries) - 1
            self.hold_until = self.last_release + window
        elif self.held_from is None:
            self.last_release = now  # the first of a burst: out at once

    def _append(self, payload: bytes, key: PendingKey | None = None) -> None:
        self.held_from = None  # held deltas go first, with this frame
        self.entries.append(_Entry(payload, key=key))

    # --- coalescing -------------------------------------------------------------------------

    def release_due(self, now: float) -> bool:
        """Make held deltas readable once their window has passed; whether any were."""
        if self.held_from is None or now < self.hold_until:
            return False
        self.held_from = None
        self.last_release = now
        return True

    def readable(self, now: float) -> int:
        """How many entries streams may take now (held deltas are not yet)."""
        self.release_due(now)
        return len(self.entries) if self.held_from is None else self.held_from

    def final(self) -> int:
        """How many entries can no longer change (the recorder sees only those): all but a
        delta tail that no stream has taken while the run still runs."""
        entries = self.entries
        if (
            self.state is RunState.RUNNING
            and entries
            and entries[-1].delta is not None
            and len(entries) - 1 >= self.read_mark
        ):
            return len(entries) - 1
        return len(entries)

    def _request(self, message: pb.AgentServerMessage, key: PendingKey, what: str, now: float):
        self._step(RunEvent.REQUEST)
        self.pending[key] = _Pending(what, now, what not in _UNWATCHED_EXECS)
        self._append(message.SerializeToString(), key)

    def open_exec(self, exec_message: pb.ExecServerMessage, *, now: float) -> int:
        """Assign an id to an exec request, register it as pending, and send it."""
        ident = self._take_exec_id()
        exec_message.id = ident
        if not exec_message.exec_id:
            exec_message.exec_id = f"exec-{self.run_id[:8]}-{ident}"
        what = exec_message.WhichOneof("message") or "?"
        message = pb.AgentServerMessage(exec_server_message=exec_message)
        self._request(message, (PendingKind.EXEC, ident), what, now)
        return ident

    def open_interaction(self, query: pb.InteractionQuery, *, now: float) -> int:
        ident = self._take_exec_id()
        query.id = ident
        message = pb.AgentServerMessage(interaction_query=query)
        key = (PendingKind.INTERACTION, ident)
        self._request(message, key, query.WhichOneof("query") or "?", now)
        self.pending[key].watched = False  # a person answers: no watchdog
        return ident

    def open_kv(self, kv: pb.KvServerMessage, *, now: float) -> int:
        ident = self._next_kv_id
        self._next_kv_id += 1
        kv.id = ident
        message = pb.AgentServerMessage(kv_server_message=kv)
        self._request(message, (PendingKind.KV, ident), kv.WhichOneof("message") or "?", now)
        return ident

    def _take_exec_id(self) -> int:
        ident = self._next_exec_id
        self._next_exec_id += 1
        return ident

    def describe_pending(self, keys, now: float) -> str:
        """`exec 3 (read_args, 12 s)` for each key still pending, for error messages."""
        parts = []
        for key in keys:
            pending = self.pending.get(key)
            if pending is not None:
                parts.append(
                    f"{key[0].value} {key[1]} ({pending.what}, {now - pending.since:.0f} s)"
                )
        return ", ".join(parts) or "nothing"

    def abort_pending(self, *, now: float) -> list[PendingKey]:
        """Abort every pending exec on the client and forget every other pending request."""
        self._step(RunEvent.ABORT)
        keys = list(self.pending)
        for kind, ident in keys:
            if kind is PendingKind.EXEC and self.state is RunState.RUNNING:
                self._aborted_execs.add(ident)
                abort = pb.ExecServerControlMessage(abort=pb.ExecServerAbort(id=ident))
                self.emit(pb.AgentServerMessage(exec_server_control_message=abort), now=now)
        self.pending.clear()
        return keys

    def finish(self, error: EndStreamError | None = None, *, now: float) -> None:
        """Append the end-stream frame; nothing may be sent after it."""
        if self.state is RunState.FINISHED:
            return  # idempotent: every path that ends a turn may call it
        self.pending.clear()
        self.end_stream = error
        payload = connect.encode_end_stream(error)[connect.HEADER_SIZE :]
        self.held_from = None
        self.entries.append(_Entry(payload, end_stream=True))
        self._step(RunEvent.FINISH)
        self.finished_at = now

    # --- time -------------------------------------------------------------------------------

    def deadlines(self) -> list[float]:
        cfg = self.config
        if self.state is RunState.FINISHED:
            return [self.finished_at + cfg.linger] if self.finished_at is not None else []
        out = []
        if self.detached_since is not None:
            out.append(self.detached_since + cfg.grace_period)
        watched = [p.since for p in self.pending.values() if p.watched]
        if watched:
            out.append(min(watched) + cfg.exec_timeout)
        return out

    def tick(self, now: float) -> list[Command]:
        cfg = self.config
        if self.state is RunState.FINISHED:
            if self.finished_at is not None and now >= self.finished_at + cfg.linger:
                return [DropRun(self)]
            return []
        if self.detached_since is not None and now >= self.detached_since + cfg.grace_period:
            self.detached_since = now  # one cancel per expiry
            return [CancelTurn(self, "the client went away (no stream open)")]
        overdue = [
            key
            for key, p in self.pending.items()
            if p.watched and now >= p.since + cfg.exec_timeout
        ]
        if overdue:
            missing = self.describe_pending(overdue, now)
            for key in overdue:
                self.pending[key].watched = False  # one failure per request
            return [
                FailTurn(
                    self,
                    "deadline_exceeded",
                    f"the client did not answer {missing} within {cfg.exec_timeout:.0f} s",
                )
            ]
        return []


# --- the registry core --------------------------------------------------------------------------


def _digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


_SELF_IDENTIFYING = frozenset(
    {
        "exec_client_message",
        "kv_client_message",
        "interaction_response",
        "client_heartbeat",
        "exec_client_control_message",
    }
)
_MAX_DIGESTS = 4096  # per attempt: seqnos remembered to tell a clash from a retry


class Sessions:
    """Every attempt and run; the only way in for client messages and subscribers."""

    def __init__(
        self,
        config: SessionConfig | None = None,
        *,
        supersedes: Callable[[pb.AgentRunRequest], bool] = lambda _request: True,
    ) -> None:
        self.config = config or SessionConfig()
        self.supersedes = supersedes  # does this new run replace the conversation's running one?
        self.attempts: dict[str, Attempt] = {}
        self.runs: dict[str, Run] = {}
        self.budget = Budget(self.config.max_buffered_bytes)
        self._next_sid = 1
        self.seqno_clashes = 0
        # What the last `tick` changed: request ids whose readers must wake, runs with news.
        self.touched: set[str] = set()
        self.touched_runs: list[Run] = []

    # --- attempts ---------------------------------------------------------------------------

    def attempt(
        self, request_id: str, *, owner: bytes, now: float, transport: str = "bidi"
    ) -> Attempt:
        """The attempt for a request id, created on first sight; refused for another owner."""
        attempt = self.attempts.get(request_id)
        if attempt is not None:
            if attempt.owner != owner:
                raise Refused("permission_denied", "this request id belongs to another client")
            attempt.last_active = now
            return attempt
        if len(self.attempts) >= self.config.max_attempts:
            self._evict_one(now)
        attempt = Attempt(
            request_id,
            created_at=now,
            owner=owner,
            transport=transport,
            inbox=Inbox(
                max_buffered_bytes=self.config.max_attempt_buffered_bytes, budget=self.budget
            ),
        )
        self.attempts[request_id] = attempt
        return attempt

    def _evict_one(self, now: float) -> None:
        """Make room for one attempt: forget the longest-idle one nobody is reading."""
        idle = [
            a
            for a in self.attempts.values()
            if not a.subscribers and (a.run is None or a.run.state is RunState.FINISHED)
        ]
        if not idle:
            raise Refused(
                "resource_exhausted",
                f"too many live Agent requests ({len(self.attempts)}); try again later",
            )
        victim = min(idle, key=lambda a: a.last_active)
        log.warning("request %s: dropped to make room for new requests", victim.request_id)
        self._forget_attempt(victim)

    def _forget_attempt(self, attempt: Attempt) -> None:
        attempt.inbox.clear()
        self.attempts.pop(attempt.request_id, None)
        if attempt.run is not None and attempt in attempt.run.attempts:
            attempt.run.attempts.remove(attempt)

    def receive(
        self,
        request_id: str,
        seqno: int | None,
        message: pb.AgentClientMessage | None,
        *,
        raw: bytes = b"",
        owner: bytes,
        now: float,
        transport: str = "bidi",
    ) -> list[Command]:
        """One client message: a BidiAppend (`seqno`) or the next message of a `Run` stream."""
        attempt = self.attempt(request_id, owner=owner, now=now, transport=transport)
        if attempt.ended and attempt.run is None and attempt.end is not None:
            raise Refused(attempt.end.code, attempt.end.message)
        if seqno is None:
            seqno = attempt._next_seqno
            attempt._next_seqno += 1
        digest = _digest(raw) if raw else b""
        try:
            upload = _Upload(message, raw)
            pushed = attempt.inbox.push(seqno, upload, size=len(raw), now=now)
        except InboxOverflow as exc:
            attempt.inbox.clear()
            failed = self._fail_attempt(attempt, "resource_exhausted", str(exc), now)
            if attempt.run is None:
                raise Refused("resource_exhausted", str(exc)) from None
            return failed
        commands: list[Command] = []
        if pushed.outcome is Outcome.DUPLICATE:
            commands += self._duplicate(attempt, seqno, message, digest, now)
        elif pushed.outcome is Outcome.BUFFERED:
            upload.park()
        if pushed.outcome is not Outcome.DUPLICATE and digest:
            attempt._digests[seqno] = digest
            if len(attempt._digests) > _MAX_DIGESTS:
                attempt._digests.pop(next(iter(attempt._digests)))
        for released in pushed.released:
            commands += self._dispatch(attempt, released.take(), now)
        return commands

    def _duplicate(
        self,
        attempt: Attempt,
        seqno: int,
        message: pb.AgentClientMessage | None,
        digest: bytes,
        now: float,
    ) -> list[Command]:
        """A seqno seen before: a retry (same bytes, dropped) or a clash (different bytes)."""
        known = attempt._digests.get(seqno)
        if not digest or known is None or known == digest or message is None:
            log.debug("request %s: duplicate append_seqno %d dropped", attempt.request_id, seqno)
            return []
        attempt.seqno_clashes += 1
        self.seqno_clashes += 1
        kind = message.WhichOneof("message")
        log.warning(
            "request %s: append_seqno %d reused by a different message (%s)%s",
            attempt.request_id,
            seqno,
            kind,
            "; applied, it names what it answers" if kind in _SELF_IDENTIFYING else "; dropped",
        )
        if kind in _SELF_IDENTIFYING:
            return self._dispatch(attempt, message, now)
        return []

    def _dispatch(
        self, attempt: Attempt, message: pb.AgentClientMessage | None, now: float
    ) -> list[Command]:
        if message is None or (attempt.ended and attempt.run is None):
            return []
        attempt.last_active = now
        if message.WhichOneof("message") == "run_request":
            if attempt.run is not None:
                log.info("request %s: repeated run request ignored", attempt.request_id)
                return []
            return self._bind(attempt, message.run_request, now)
        if attempt.run is None:
            if attempt.transport == "run":
                return self._fail_attempt(
                    attempt, "invalid_argument", "the first message must be a run request", now
                )
            log.info(
                "request %s: %s before the run request ignored",
                attempt.request_id,
                message.WhichOneof("message"),
            )
            return []
        run = attempt.run
        if attempt.transport == "run" and _answers_unissued(run, message):
            return self._fail_attempt(
                attempt,
                "invalid_argument",
                "protocol error: a result for a request never sent",
                now,
            )
        return run.dispatch(message, now=now)

    def _bind(self, attempt: Attempt, run_request: pb.AgentRunRequest, now: float) -> list:
        run_id = run_request.run_id or attempt.request_id
        run = self.runs.get(run_id)
        commands: list[Command] = []
        if run is not None:
            if run.owner != attempt.owner:
                return self._fail_attempt(
                    attempt, "permission_denied", "this run belongs to another client", now
                )
            log.info(
                "request %s: attaches to run %s (%s)", attempt.request_id, run_id, run.state.value
            )
        else:
            run = Run(run_id, run_request, owner=attempt.owner, now=now, config=self.config)
            run.first_request_id = attempt.request_id
            self.runs[run_id] = run
            for other in self.runs.values() if self.supersedes(run_request) else ():
                if (
                    other is not run
                    and other.state is RunState.RUNNING
                    and other.owner == run.owner
                    and run.conversation_id
                    and other.conversation_id == run.conversation_id
                ):
                    commands.append(CancelTurn(other, "superseded by a newer message"))
            commands.append(StartTurn(run, run_request))
        run._step(RunEvent.ATTACH)
        attempt.run = run
        attempt.bind_epoch = run.epoch + 1 if run.attempts else 0
        run.attempts.append(attempt)
        run.last_client_at = now
        if attempt.subscribers:
            run.detached_since = None
        return commands

    def _fail_attempt(self, attempt: Attempt, code: str, message: str, now: float) -> list:
        log.warning("request %s: %s", attempt.request_id, message)
        attempt.close(EndStreamError(code, message))
        run = attempt.run
        if run is not None and run.state is RunState.RUNNING:
            return [FailTurn(run, code, message)]
        return []

    # --- subscribers ------------------------------------------------------------------------

    def subscribe(
        self,
        request_id: str,
        *,
        owner: bytes,
        now: float,
        encoding: str | None = None,
        grpc_web: bool = False,
        transport: str = "bidi",
    ) -> Subscriber:
        attempt = self.attempt(request_id, owner=owner, now=now, transport=transport)
        sub = Subscriber(self._next_sid, attempt, encoding, grpc_web, last_sent_at=now)
        self._next_sid += 1
        if attempt.run is not None:
            sub.joined_at = len(attempt.run.entries)
            attempt.run.detached_since = None
        attempt.subscribers[sub.sid] = sub
        return sub

    def unsubscribe(self, sub: Subscriber, *, now: float) -> None:
        sub.done = True
        attempt = sub.attempt
        attempt.subscribers.pop(sub.sid, None)
        attempt.last_active = now
        run = attempt.run
        if run is not None and run.subscribers == 0 and run.detached_since is None:
            run.detached_since = now

    def read(self, sub: Subscriber, *, now: float) -> tuple[list[bytes], bool]:
        """Encoded frames this subscriber has not been given yet, and whether its stream ended."""
        frames: list[bytes] = []
        ended = False
        attempt = sub.attempt
        run = attempt.run
        if run is not None:
            entries = run.entries
            end = run.readable(now)
            while sub.position < end:
                entry = entries[sub.position]
                sub.position += 1
                if entry.key is not None:
                    epoch = run.resolved.get(entry.key)
                    if epoch is not None and epoch < attempt.bind_epoch:
                        continue  # answered on an earlier attempt: never twice on the client
                if entry.end_stream:
                    frames.append(self._end_frame(sub, run.end_stream, entry.payload))
                    ended = True
                    break
                frames.append(_encode(entry, sub.encoding))
            if sub.position > run.read_mark:
                run.read_mark = sub.position
        if not ended and attempt.ended:
            frames.append(self._end_frame(sub, attempt.end, None))
            ended = True
        if not frames and sub.heartbeat_due:
            frames.append(_HEARTBEAT_FRAME)
        sub.heartbeat_due = False
        if frames:
            sub.last_sent_at = now
        return frames, ended

    @staticmethod
    def _end_frame(sub: Subscriber, error: EndStreamError | None, payload: bytes | None) -> bytes:
        if sub.grpc_web:
            return connect.encode_grpc_web_trailer(error)
        if payload is not None:
            return connect.encode_frame_raw(connect.FLAG_END_STREAM, payload)
        return connect.encode_end_stream(error)

    # --- time -------------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """The earliest time `tick` has work to do."""
        cfg = self.config
        deadlines: list[float] = []
        for attempt in self.attempts.values():
            if attempt.run is None and not attempt.ended:
                deadlines.append(attempt.created_at + cfg.run_request_timeout)
            gap = attempt.inbox.gap_since
            if gap is not None:
                deadlines.append(gap + cfg.gap_timeout)
            for sub in attempt.subscribers.values():
                deadlines.append(sub.last_sent_at + cfg.heartbeat_interval)
            if attempt.run is None and attempt.ended and not attempt.subscribers:
                deadlines.append(attempt.last_active + cfg.linger)
        for run in self.runs.values():
            deadlines += run.deadlines()
        return min(deadlines) if deadlines else None

    def tick(self, now: float) -> list[Command]:
        """Advance every timer that is due; returns what the shell must do."""
        cfg = self.config
        commands: list[Command] = []
        touched: set[str] = set()
        touched_runs: list[Run] = []
        for attempt in list(self.attempts.values()):
            if (
                attempt.run is None
                and not attempt.ended
                and now >= attempt.created_at + cfg.run_request_timeout
            ):
                attempt.close(EndStreamError("not_found", "no run request for this request id"))
                touched.add(attempt.request_id)
            gap = attempt.inbox.gap_since
            if gap is not None and now >= gap + cfg.gap_timeout:
                missing = attempt.inbox.next_seqno
                attempt.inbox.clear()
                commands += self._fail_attempt(
                    attempt,
                    "invalid_argument",
                    f"protocol error: append_seqno {missing} never arrived",
                    now,
                )
                touched.add(attempt.request_id)
            for sub in attempt.subscribers.values():
                if now >= sub.last_sent_at + cfg.heartbeat_interval:
                    sub.heartbeat_due = True
                    sub.last_sent_at = now
                    touched.add(attempt.request_id)
            if (
                attempt.run is None
                and attempt.ended
                and not attempt.subscribers
                and now >= attempt.last_active + cfg.linger
            ):
                self._forget_attempt(attempt)
        for run in list(self.runs.values()):
            before = len(run.entries)
            for command in run.tick(now):
                if isinstance(command, DropRun):
                    self.runs.pop(run.run_id, None)
                    for attempt in list(run.attempts):
                        if not attempt.subscribers:
                            self._forget_attempt(attempt)
                commands.append(command)
            if len(run.entries) != before:
                touched_runs.append(run)
        self.touched, self.touched_runs = touched, touched_runs
        return commands

    # --- queries ----------------------------------------------------------------------------

    def running_runs(self) -> list[Run]:
        return [r for r in self.runs.values() if r.state is RunState.RUNNING]


def _answers_unissued(run: Run, message: pb.AgentClientMessage) -> bool:
    kind = message.WhichOneof("message")
    if kind == "exec_client_message" and message.exec_client_message.WhichOneof("message"):
        return not run.issued((PendingKind.EXEC, message.exec_client_message.id))
    if kind == "kv_client_message" and message.kv_client_message.WhichOneof("message"):
        return not run.issued((PendingKind.KV, message.kv_client_message.id))
    return False


def _encode(entry: _Entry, encoding: str | None) -> bytes:
    if encoding is None or len(entry.payload) < COMPRESS_THRESHOLD:
        return connect.encode_frame_raw(0, entry.payload)
    if entry.compressed is None:
        entry.compressed = {}
    frame = entry.compressed.get(encoding)
    if frame is None:
        frame = entry.compressed[encoding] = connect.encode_frame(entry.payload, encoding=encoding)
    return frame
