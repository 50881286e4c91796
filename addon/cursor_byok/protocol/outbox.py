"""A run's outbox: the ordered frames every attempt of the run reads from the start.

Fewer, fuller frames (README): every frame costs a write, a proxy round and a parse and re-render
in Cursor, and providers send a delta every few milliseconds. So a text, thinking or token delta
that comes within the coalescing window of the last deltas released is held until the window is
over, and the deltas that come meanwhile join it; the first delta after a quiet spell goes out at
once. A delta also joins a frame no stream has taken yet (the streams are busy writing). Anything
else takes what is held out with it, so order never changes. Frames already given to a stream
never change, so every replay of the backlog is byte-identical.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.protocol import connect
from cursor_byok.protocol.states import HOLD_TRANSITIONS
from cursor_byok.protocol.states import HoldEvent
from cursor_byok.protocol.states import HoldState
from cursor_byok.protocol.states import step

# Frames at least this large are compressed when the client accepts it, as Cursor's server does
# for KV SETs and checkpoints; small deltas stay uncompressed (cheaper, and what Cursor sends).
COMPRESS_THRESHOLD = 4096


class PendingKind(enum.Enum):
    """What a client request a frame carries asks for (its id is per kind, protocol.md §3)."""

    EXEC = "exec"
    KV = "kv"
    INTERACTION = "interaction"


PendingKey = tuple[PendingKind, int]

_COALESCED = frozenset({"text_delta", "thinking_delta", "token_delta"})


def delta_kind(message: pb.AgentServerMessage) -> str | None:
    """`text_delta`, `thinking_delta` or `token_delta` for a delta that may be coalesced."""
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


@dataclass(slots=True)
class Entry:
    payload: bytes
    end_stream: bool = False
    key: PendingKey | None = None  # the client request this frame carries, if any
    compressed: dict[str, bytes] | None = None  # encoded envelopes by encoding, made once
    delta: str | None = None  # text_delta/thinking_delta/token_delta: later deltas may join it
    message: pb.AgentServerMessage | None = None  # a delta's message, to fold the next one in
    queued_at: float = 0.0

    def encoded(self, encoding: str | None) -> bytes:
        """This entry's envelope for a stream of `encoding` (compressed when large)."""
        if encoding is None or len(self.payload) < COMPRESS_THRESHOLD:
            return connect.encode_frame_raw(0, self.payload)
        if self.compressed is None:
            self.compressed = {}
        frame = self.compressed.get(encoding)
        if frame is None:
            frame = self.compressed[encoding] = connect.encode_frame(
                self.payload, encoding=encoding
            )
        return frame


class Outbox:
    """The frames of one run and the coalescing hold (`HOLD_TRANSITIONS`)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.read_mark = 0  # entries before this index were given to a stream: final
        self.hold = HoldState.OPEN
        self.held_from = 0  # while HELD: entries from here on are not readable yet
        self.hold_until = 0.0  # while HELD: when the window is over
        self.last_release = -math.inf  # when deltas were last made readable
        self.holds = 0  # how many holds began (each needs its release timed)

    def _step(self, event: HoldEvent) -> None:
        self.hold = step(HOLD_TRANSITIONS, self.hold, event, "outbox hold")

    def add(self, message: pb.AgentServerMessage, *, now: float, window: float) -> None:
        """Queue one server message: a delta within `window` of the last release is held (until
        `hold_until`); one that may join the tail no stream has taken joins it; anything else
        releases what is held."""
        kind = delta_kind(message)
        if kind is None:
            self.append(message.SerializeToString())
            return
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
            Entry(message.SerializeToString(), delta=kind, message=message, queued_at=now)
        )
        if window <= 0:
            return
        if self.hold is HoldState.OPEN and now - self.last_release < window:
            self._step(HoldEvent.HOLD)
            self.held_from = len(entries) - 1
            self.hold_until = self.last_release + window
            self.holds += 1
        elif self.hold is HoldState.OPEN:
            self.last_release = now  # the first of a burst: out at once

    def append(self, payload: bytes, *, key: PendingKey | None = None, end: bool = False) -> None:
        """Queue a frame that is final at once (a request, a checkpoint, the end); it takes
        held deltas out with it."""
        self._step(HoldEvent.FLUSH)
        self.entries.append(Entry(payload, end_stream=end, key=key))

    def release_due(self, now: float) -> bool:
        """Make held deltas readable once their window is over; whether any were."""
        if self.hold is not HoldState.HELD or now < self.hold_until:
            return False
        self._step(HoldEvent.RELEASE)
        self.last_release = now
        return True

    def readable(self) -> int:
        """How many entries streams may take (held deltas are not yet: `release_due` is what
        time passing does, and only `add` and the registry's `tick` call it)."""
        return self.held_from if self.hold is HoldState.HELD else len(self.entries)

    def final(self, running: bool) -> int:
        """How many entries can no longer change (the recorder sees only those): all but a
        delta tail that no stream has taken while the run still runs."""
        entries = self.entries
        tail = len(entries) - 1
        if running and entries and entries[tail].delta is not None and tail >= self.read_mark:
            return tail
        return len(entries)
