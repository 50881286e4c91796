"""A run's outbox: the ordered frames every attempt of the run reads from the start.

Fewer, fuller frames (README): every frame costs a write, a proxy round and a parse and re-render
in Cursor, and providers send a delta every few milliseconds. So a text, thinking or token delta
that comes within the coalescing window of the last deltas released is held until the window is
over, and the deltas that come meanwhile join it; the first delta after a quiet spell goes out at
once. A delta also joins a frame no stream has taken yet (the streams are busy writing). Anything
else takes what is held out with it, so order never changes. Frames already given to a stream
never change, so every replay of the backlog is byte-identical.

One pass per frame: an entry turns **final** once it can no longer change (a stream took it, or
another entry came after it), and only then is its message serialised, once, into its envelope,
which every stream and every replay writes as it is (compressed envelopes too, once per
encoding). A final entry holds bytes only.
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
_HEADER = connect.HEADER_SIZE


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


@dataclass(slots=True, eq=False)
class Entry:
    """One frame of the backlog: bytes once final, a delta that may still grow before.

    A final entry's `frame` is its Connect envelope, made once when it turned final (for the
    last entry, the end-stream envelope), and each compressed envelope is made once per
    encoding: every stream and every replay writes those same bytes."""

    frame: bytes | None  # None while the entry is an open delta
    end_stream: bool = False
    key: PendingKey | None = None  # the client request this frame carries, if any
    compressed: dict[str, bytes] | None = None  # compressed envelopes by encoding, made once
    delta: str | None = None  # an open delta's kind: later deltas of that kind may join it
    message: pb.AgentServerMessage | None = None  # an open delta's message, deltas merged in
    queued_at: float = 0.0

    @property
    def payload(self) -> bytes:
        """The message bytes of a final entry (what observers, the recorder, get)."""
        assert self.frame is not None, "an open entry has no bytes yet"
        return self.frame[_HEADER:]

    def encoded(self, encoding: str | None) -> bytes:
        """This final entry's envelope for a stream of `encoding` (compressed when large)."""
        frame = self.frame
        assert frame is not None, "an open entry has no bytes yet"
        if encoding is None or len(frame) - _HEADER < COMPRESS_THRESHOLD:
            return frame
        if self.compressed is None:
            self.compressed = {}
        compressed = self.compressed.get(encoding)
        if compressed is None:
            compressed = connect.encode_frame(frame[_HEADER:], encoding=encoding)
            self.compressed[encoding] = compressed
        return compressed


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

    def add(self, message: pb.AgentServerMessage, *, now: float, window: float) -> bool:
        """Queue one server message; True when streams have more to read now.

        A delta within `window` of the last release is held (until `hold_until`); one that may
        join the open tail (a delta no stream has taken yet) joins it. Anything else is final at
        once and takes what is held out with it."""
        kind = delta_kind(message)
        if kind is None:
            self.append(connect.encode_frame_raw(0, message.SerializeToString()))
            return True
        news = self.release_due(now)
        entries = self.entries
        if entries and window > 0:
            tail = entries[-1]
            if (
                tail.delta == kind
                and now - tail.queued_at <= window
                and tail.message is not None
                and _merge_delta(tail.message, message, kind)
            ):
                return news
        self._close_tail()
        entries.append(Entry(None, delta=kind, message=message, queued_at=now))
        if window <= 0:
            return True
        if self.hold is HoldState.OPEN:
            if now - self.last_release < window:
                self._step(HoldEvent.HOLD)
                self.held_from = len(entries) - 1
                self.hold_until = self.last_release + window
                self.holds += 1
                return news
            self.last_release = now  # the first of a burst: out at once
        return self.hold is HoldState.OPEN or news

    def append(self, frame: bytes, *, key: PendingKey | None = None, end: bool = False) -> None:
        """Queue a frame that is final at once (a request, a checkpoint, the end): it takes
        held deltas out with it."""
        self._close_tail()
        self._step(HoldEvent.FLUSH)
        self.entries.append(Entry(frame, end_stream=end, key=key))

    def _close_tail(self) -> None:
        """Make the open tail final: nothing may join it once another entry follows."""
        if self.entries and self.entries[-1].frame is None:
            self.close(self.entries[-1])

    def close(self, entry: Entry) -> bytes:
        """Make an open delta final (a stream takes it, or another entry follows it): its
        message is serialised now, once, into its envelope."""
        message = entry.message
        assert message is not None
        frame = entry.frame = connect.encode_frame_raw(0, message.SerializeToString())
        entry.delta = entry.message = None
        return frame

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

    def final(self) -> int:
        """How many entries can no longer change (the recorder sees only those): all but an
        open delta at the tail, which no stream has taken yet."""
        entries = self.entries
        if entries and entries[-1].frame is None:
            return len(entries) - 1
        return len(entries)
