"""One request id of the run core (sans-IO): its ordered inbox, its response streams, the run
it carries (`attempts.Registry` keeps them)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.core.inbox import Inbox
from cursor_byok.core.runs import Run
from cursor_byok.core.runs import RunConfig
from cursor_byok.core.states import ATTEMPT_TRANSITIONS
from cursor_byok.core.states import AttemptEvent
from cursor_byok.core.states import AttemptState
from cursor_byok.core.states import step
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.connect import EndStreamError

_MAX_DIGESTS = 4096  # per attempt: seqnos remembered to tell a clash from a retry


@dataclass(slots=True)
class Upload:
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
    heartbeat_due: bool = False  # a heartbeat goes with its next write if nothing else does


@dataclass(eq=False)
class Attempt:
    """One request id: its ordered inbox, its response streams, the run it carries.

    Its lifecycle is `ATTEMPT_TRANSITIONS`: NEW until its run request binds it to a run (BOUND);
    ENDED when its streams end on their own while it carries a run, REFUSED when that happens
    before; FORGOTTEN once the registry lets go of it."""

    request_id: str
    created_at: float
    owner: bytes
    transport: str  # "bidi" (RunSSE + BidiAppend) or "run" (one HTTP/2 stream)
    inbox: Inbox[Upload]
    client: str = ""  # the client connection that opened it ("" unknown): fairness, limits.py
    state: AttemptState = AttemptState.NEW
    run: Run | None = None  # set once BOUND (and kept when it ends)
    bind_epoch: int = 0  # answers resolved before this epoch are not sent to this attempt
    end: EndStreamError | None = None  # this attempt's own end (before or apart from its run)
    last_active: float = 0.0
    seqno_clashes: int = 0
    early: list[pb.ConversationAction] = field(default_factory=list)  # queued before its run
    _next_seqno: int = 0  # stream order, for `run` attempts
    _digests: dict[int, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.subscribers: dict[int, Subscriber] = {}
        self.last_active = self.created_at

    def _step(self, event: AttemptEvent) -> None:
        self.state = step(ATTEMPT_TRANSITIONS, self.state, event, f"request {self.request_id}")

    @property
    def ended(self) -> bool:
        """Whether its streams end with its own end (ENDED or REFUSED)."""
        return self.state is AttemptState.ENDED or self.state is AttemptState.REFUSED

    # --- its lifecycle (`ATTEMPT_TRANSITIONS`) ----------------------------------------------

    def open(self, *, now: float) -> None:
        """Its request id is used again (a message, a stream, the edge opening it)."""
        self._step(AttemptEvent.OPEN)
        self.last_active = now

    def bind(self, run: Run, *, now: float) -> None:
        """Its run request named `run` (started or joined): its streams read that run now."""
        self._step(AttemptEvent.BIND)
        self.early.clear()  # the run has them (a run it joins got its first attempt's)
        self.run = run
        self.bind_epoch = run.bind(self.request_id, streams=len(self.subscribers), now=now)

    def close(self, error: EndStreamError | None) -> None:
        """End this attempt's streams (its run, if any, is not touched); the first end stays."""
        if not self.ended:
            self.end = error
        self._step(AttemptEvent.END)

    def forget(self) -> None:
        """The registry lets go of it (what waits in its inbox goes with it)."""
        self._step(AttemptEvent.FORGET)
        self.inbox.clear()
        run = self.run
        if run is not None and self.request_id in run.attempt_ids:
            run.attempt_ids.remove(self.request_id)

    # --- time -------------------------------------------------------------------------------

    def deadlines(self, cfg: RunConfig) -> list[float]:
        """When its timers fire: no run request in time, a seqno gap open too long, its
        streams' heartbeats, and the linger of a refused one nobody reads."""
        out = [sub.last_sent_at + cfg.heartbeat_interval for sub in self.subscribers.values()]
        if self.state is AttemptState.NEW:
            out.append(self.created_at + cfg.run_request_timeout)
        gap = self.inbox.gap_since
        if gap is not None:
            out.append(gap + cfg.gap_timeout)
        if self.state is AttemptState.REFUSED and not self.subscribers:
            out.append(self.last_active + cfg.linger)
        return out

    def heartbeats(self, now: float, interval: float) -> bool:
        """Mark a heartbeat due on each stream that wrote nothing for `interval`; whether any
        was (heartbeats are live-only: `replay.read` writes one when nothing else goes)."""
        due = False
        for sub in self.subscribers.values():
            if now >= sub.last_sent_at + interval:
                sub.heartbeat_due = True
                sub.last_sent_at = now
                due = True
        return due

    # --- its uploads ------------------------------------------------------------------------

    def next_seqno(self) -> int:
        """The seqno of its next message in stream order (`Run` streams carry none)."""
        seqno = self._next_seqno
        self._next_seqno += 1
        return seqno

    def remember(self, seqno: int, digest: bytes) -> None:
        """What came under `seqno`, to tell a retry (same bytes) from a clash later."""
        digests = self._digests
        digests[seqno] = digest
        if len(digests) > _MAX_DIGESTS:
            digests.pop(next(iter(digests)))

    def clashes(self, seqno: int, digest: bytes) -> bool:
        """Whether a repeated `seqno` carries other bytes than the first time (a clash), as far
        as it is remembered; a clash is counted."""
        known = self._digests.get(seqno)
        if not digest or known is None or known == digest:
            return False
        self.seqno_clashes += 1
        return True


def digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()
