"""The per-request state machine (one per `request_id`), sans-IO.

It owns what one turn's transport needs: the ordered inbox of client messages, the outbox of server
messages with its replay backlog, the tables of requests waiting for a client answer (exec, KV,
interaction), liveness (subscribers, heartbeats, grace period) and the run state. Inputs are
method calls with `now` passed in; outputs are `Command`s for the async shell and messages appended
to the outbox. Nothing here sleeps, reads a clock or touches a socket.

Reconnect rule (protocol.md §7): the protocol has no resume cursor, and the proxy cannot know which
bytes reached the client before a connection dropped. So every RunSSE that (re)subscribes receives
the current turn's backlog **from its beginning**, byte-identical and in the same order, then live
frames. "Not yet seen" is therefore decided by the client: the replayed prefix equals what it
already has, so it skips that many frames. Heartbeats are live-only: never stored, never replayed.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from cursor_byok import connect
from cursor_byok.connect import EndStreamError
from cursor_byok.inbox import Inbox
from cursor_byok.inbox import InboxOverflow
from cursor_byok.inbox import Outcome
from cursor_byok.pb import agent_v1_pb2 as pb

log = logging.getLogger(__name__)

# Frames at least this large are compressed when the client accepts it, as Cursor's server does
# for KV SETs and checkpoints; small deltas stay uncompressed (cheaper, and what Cursor sends).
COMPRESS_THRESHOLD = 4096


@dataclass(frozen=True, slots=True)
class SessionConfig:
    heartbeat_interval: float = 5.0
    grace_period: float = 180.0  # RunSSE gone this long while running → cancel the turn
    run_request_timeout: float = 60.0  # RunSSE open without any run_request → not_found
    gap_timeout: float = 30.0  # an append_seqno gap open this long fails the run
    linger: float = 30.0  # keep a finished session for late reconnects


class RunState(enum.Enum):
    WAITING = "waiting"  # no run_request yet
    RUNNING = "running"
    FINISHED = "finished"  # the end-stream frame is in the outbox


class PendingKind(enum.Enum):
    EXEC = "exec"
    KV = "kv"
    INTERACTION = "interaction"


PendingKey = tuple[PendingKind, int]


# --- commands for the async shell ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartTurn:
    run_request: pb.AgentRunRequest


@dataclass(frozen=True, slots=True)
class Resolve:
    """A final answer to one pending request."""

    key: PendingKey
    message: pb.ExecClientMessage | pb.KvClientMessage | pb.InteractionResponse


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A non-final event of a streaming exec (shell output), for exec `exec_id`."""

    exec_id: int
    message: pb.ExecClientMessage


@dataclass(frozen=True, slots=True)
class CancelTurn:
    reason: str
    action: pb.CancelAction | None = None


@dataclass(frozen=True, slots=True)
class FailTurn:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Expire:
    """The session is finished and lingered long enough; the registry may drop it."""


Command = StartTurn | Resolve | StreamEvent | CancelTurn | FailTurn | Expire


# --- outbox -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    payload: bytes
    end_stream: bool = False
    replayable: bool = True


@dataclass(slots=True)
class Subscriber:
    """One RunSSE response reading the outbox. `position` is the next entry index to send."""

    sid: int
    encoding: str | None
    joined_at: int
    position: int = 0
    done: bool = False


_SHELL_TERMINAL = frozenset(
    {"exit", "rejected", "permission_denied", "sandbox_unsupported", "backgrounded"}
)


@dataclass
class Session:
    request_id: str
    created_at: float
    config: SessionConfig = field(default_factory=SessionConfig)

    def __post_init__(self) -> None:
        self.state = RunState.WAITING
        self.inbox: Inbox[pb.AgentClientMessage] = Inbox()
        self.run_request: pb.AgentRunRequest | None = None
        self._entries: list[_Entry] = []
        self._subscribers: dict[int, Subscriber] = {}
        self._next_sid = 1
        self._next_exec_id = 1  # exec and interaction ids share one counter (protocol.md §3)
        self._next_kv_id = 1
        self.pending: dict[PendingKey, str] = {}  # key → what it is waiting for, for logs
        self._aborted_execs: set[int] = set()
        self.last_sent_at = self.created_at
        self.last_client_heartbeat: float | None = None
        self.detached_since: float | None = self.created_at
        self.finished_at: float | None = None
        self.end_stream: EndStreamError | None = None
        self.ignored_results = 0
        # Called with (payload, is_end_stream) for every replayable frame, e.g. by a recorder.
        self.on_frame: Callable[[bytes, bool], None] | None = None

    # --- client → server ------------------------------------------------------------------

    def receive(
        self, seqno: int, message: pb.AgentClientMessage | None, *, size: int = 0, now: float
    ) -> list[Command]:
        """One BidiAppend; returns the commands that releasing it (and any successors) gives."""
        try:
            pushed = self.inbox.push(seqno, message, size=size, now=now)
        except InboxOverflow as exc:
            return self._fail("resource_exhausted", str(exc))
        if pushed.outcome is Outcome.DUPLICATE:
            log.debug("request %s: duplicate append_seqno %d dropped", self.request_id, seqno)
        commands: list[Command] = []
        for released in pushed.released:
            commands += self._dispatch(released, now)
        return commands

    def _dispatch(self, message: pb.AgentClientMessage | None, now: float) -> list[Command]:
        if message is None:
            return []
        kind = message.WhichOneof("message")
        if kind == "run_request":
            if self.run_request is not None:
                log.info("request %s: repeated run_request ignored (same run)", self.request_id)
                return []
            if self.state is RunState.FINISHED:
                return []
            self.run_request = message.run_request
            self.state = RunState.RUNNING
            return [StartTurn(message.run_request)]
        if kind == "client_heartbeat":
            self.last_client_heartbeat = now
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
            if action.WhichOneof("action") == "cancel_action" and self.state is RunState.RUNNING:
                return [CancelTurn("cancelled by the user", action.cancel_action)]
            log.info(
                "request %s: conversation_action %s ignored mid-run",
                self.request_id,
                action.WhichOneof("action"),
            )
            return []
        log.info("request %s: client message %s ignored", self.request_id, kind)
        return []

    def _exec_result(self, result: pb.ExecClientMessage) -> list[Command]:
        kind = result.WhichOneof("message")
        if kind is None:  # not a result (protocol.md §5): keep waiting
            return []
        key = (PendingKind.EXEC, result.id)
        if kind == "mcp_result" and result.mcp_result.WhichOneof("result") == "approved":
            # The user approved the call; the real result follows with the same id.
            return [StreamEvent(result.id, result)] if key in self.pending else []
        if kind == "shell_stream":
            event = result.shell_stream.WhichOneof("event")
            if event not in _SHELL_TERMINAL:
                if key in self.pending:
                    return [StreamEvent(result.id, result)]
                return self._unknown(key)
        return self._resolve(key, result)

    def _exec_control(self, control: pb.ExecClientControlMessage) -> list[Command]:
        kind = control.WhichOneof("message")
        if kind == "throw":
            key = (PendingKind.EXEC, control.throw.id)
            if key in self.pending:
                # The client failed to run it: resolve with an empty result the tool layer reads
                # as an error.
                failed = pb.ExecClientMessage(id=control.throw.id)
                self.pending.pop(key)
                log.info("request %s: client threw for exec %d", self.request_id, key[1])
                return [Resolve(key, failed)]
        return []

    def _resolve(self, key: PendingKey, message) -> list[Command]:
        if self.pending.pop(key, None) is None:
            return self._unknown(key)
        return [Resolve(key, message)]

    def _unknown(self, key: PendingKey) -> list[Command]:
        kind, ident = key
        if kind is PendingKind.EXEC and ident in self._aborted_execs:
            log.debug("request %s: late result for aborted exec %d dropped", self.request_id, ident)
        else:
            self.ignored_results += 1
            log.warning(
                "request %s: result for unknown %s id %d ignored",
                self.request_id,
                kind.value,
                ident,
            )
        return []

    # --- server → client ------------------------------------------------------------------

    def emit(self, message: pb.AgentServerMessage, *, now: float) -> None:
        """Append one server message to the backlog for every subscriber, present and future."""
        if self.state is RunState.FINISHED:
            raise RuntimeError("the stream has ended")
        payload = message.SerializeToString()
        self._entries.append(_Entry(payload))
        self.last_sent_at = now
        if self.on_frame is not None:
            self.on_frame(payload, False)

    def open_exec(self, exec_message: pb.ExecServerMessage, *, now: float) -> int:
        """Assign an id to an exec request, register it as pending, and send it."""
        ident = self._take_exec_id()
        exec_message.id = ident
        if not exec_message.exec_id:
            exec_message.exec_id = f"exec-{self.request_id[:8]}-{ident}"
        self.pending[(PendingKind.EXEC, ident)] = exec_message.WhichOneof("message") or "?"
        self.emit(pb.AgentServerMessage(exec_server_message=exec_message), now=now)
        return ident

    def open_interaction(self, query: pb.InteractionQuery, *, now: float) -> int:
        ident = self._take_exec_id()
        query.id = ident
        self.pending[(PendingKind.INTERACTION, ident)] = query.WhichOneof("query") or "?"
        self.emit(pb.AgentServerMessage(interaction_query=query), now=now)
        return ident

    def open_kv(self, kv: pb.KvServerMessage, *, now: float) -> int:
        ident = self._next_kv_id
        self._next_kv_id += 1
        kv.id = ident
        self.pending[(PendingKind.KV, ident)] = kv.WhichOneof("message") or "?"
        self.emit(pb.AgentServerMessage(kv_server_message=kv), now=now)
        return ident

    def _take_exec_id(self) -> int:
        ident = self._next_exec_id
        self._next_exec_id += 1
        return ident

    def abort_pending(self, *, now: float) -> list[PendingKey]:
        """Abort every pending exec on the client and forget every other pending request."""
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
            return
        self.pending.clear()
        self.end_stream = error
        payload = connect.encode_end_stream(error)[connect.HEADER_SIZE :]
        self._entries.append(_Entry(payload, end_stream=True))
        if self.on_frame is not None:
            self.on_frame(payload, True)
        self.state = RunState.FINISHED
        self.finished_at = now
        self.last_sent_at = now

    # --- subscribers (RunSSE responses) ---------------------------------------------------

    def subscribe(self, *, encoding: str | None = None, now: float) -> Subscriber:
        sub = Subscriber(self._next_sid, encoding, joined_at=len(self._entries))
        self._next_sid += 1
        self._subscribers[sub.sid] = sub
        self.detached_since = None
        return sub

    def unsubscribe(self, sub: Subscriber, *, now: float) -> None:
        sub.done = True
        self._subscribers.pop(sub.sid, None)
        if not self._subscribers:
            self.detached_since = now

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def read(self, sub: Subscriber) -> tuple[list[bytes], bool]:
        """Encoded frames this subscriber has not been given yet, and whether the stream ended."""
        frames: list[bytes] = []
        ended = False
        while sub.position < len(self._entries):
            entry = self._entries[sub.position]
            sub.position += 1
            if not entry.replayable and sub.position <= sub.joined_at:
                continue
            if entry.end_stream:
                frames.append(connect.encode_frame_raw(connect.FLAG_END_STREAM, entry.payload))
                ended = True
                break
            encoding = sub.encoding if len(entry.payload) >= COMPRESS_THRESHOLD else None
            frames.append(connect.encode_frame(entry.payload, encoding=encoding))
        return frames, ended

    # --- time -----------------------------------------------------------------------------

    def tick(self, now: float) -> list[Command]:
        """Advance timers: heartbeats, grace period, missing run request, seqno gaps, linger."""
        cfg = self.config
        if self.state is RunState.FINISHED:
            if self.finished_at is not None and now - self.finished_at >= cfg.linger:
                return [Expire()]
            return []
        if self.inbox.gap_age(now) >= cfg.gap_timeout:
            return self._fail(
                "invalid_argument",
                f"protocol error: append_seqno {self.inbox.next_seqno} never arrived",
            )
        if self.state is RunState.WAITING and now - self.created_at >= cfg.run_request_timeout:
            self.finish(EndStreamError("not_found", "no run request for this request id"), now=now)
            return []
        detached = self.detached_since
        if (
            self.state is RunState.RUNNING
            and detached is not None
            and now - detached >= cfg.grace_period
        ):
            self.detached_since = now  # one cancel per expiry
            return [CancelTurn("the client went away (RunSSE closed)")]
        if self._subscribers and now - self.last_sent_at >= cfg.heartbeat_interval:
            heartbeat = pb.AgentServerMessage(
                interaction_update=pb.InteractionUpdate(heartbeat=pb.HeartbeatUpdate())
            )
            self._entries.append(_Entry(heartbeat.SerializeToString(), replayable=False))
            self.last_sent_at = now
        return []

    def _fail(self, code: str, message: str) -> list[Command]:
        log.warning("request %s: %s", self.request_id, message)
        if self.state is RunState.RUNNING:
            return [FailTurn(code, message)]
        self.finish(EndStreamError(code, message), now=self.last_sent_at)
        return []
