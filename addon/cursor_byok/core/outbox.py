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
encoding). Memory follows the bytes: a final entry holds bytes only, and the one entry that may
still grow (the open delta at the tail) holds the deltas that joined it as strings (`Delta`).
A final entry the edge can make again byte for byte (a blob SET, or a staged checkpoint around a
message blob, whose blob the data dir holds) comes with a `StoredFrame` and lets go of its bytes
once the client answered its request (a blob SET: an attempt that joins later skips it, so only
a stream of the same attempt opened again makes it again) or, carrying none, once a stream took
it (`let_go`). The other final entries stay in memory up to a bound (`resident`): past it the edge
moves the oldest to disk (`spillable`, `spilled`) and a replay reads them back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol
from typing import cast

from cursor_byok.core.states import HOLD_TRANSITIONS
from cursor_byok.core.states import HoldEvent
from cursor_byok.core.states import HoldState
from cursor_byok.core.states import IdentityEnum
from cursor_byok.core.states import step
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.varint import varint

# Frames at least this large are compressed when the client accepts it, as Cursor's server does
# for KV SETs and checkpoints; small deltas stay uncompressed (cheaper, and what Cursor sends).
COMPRESS_THRESHOLD = 4096


class PendingKind(IdentityEnum):
    """What a client request a frame carries asks for (its id is per kind, protocol.md §3)."""

    EXEC = "exec"
    KV = "kv"
    INTERACTION = "interaction"


PendingKey = tuple[PendingKind, int]


def _field(number: int, data: bytes) -> list[bytes]:
    """A length-delimited field's parts (empty when `data` is: proto3 leaves it out)."""
    return [varint(number << 3 | 2), varint(len(data)), data] if data else []


def set_blob_head(kv_id: int, blob_id: bytes, size: int) -> bytes:
    """The envelope of `AgentServerMessage{kv_server_message{id, set_blob_args{blob_id,
    blob_data}}}` up to the blob's `size` bytes, which follow it (`set_blob_frame`)."""
    args = _field(1, blob_id) + ([b"\x12", varint(size)] if size else [])
    args_size = sum(map(len, args)) + size
    kv = ([b"\x08", varint(kv_id)] if kv_id else []) + [b"\x1a", varint(args_size)]
    kv_size = sum(map(len, kv)) + args_size
    head = [b"\x22", varint(kv_size)]
    total = sum(map(len, head)) + kv_size
    return b"".join([b"\x00", total.to_bytes(4, "big"), *head, *kv, *args])


def set_blob_frame(kv_id: int, blob_id: bytes, data: bytes) -> bytes:
    """The envelope of a blob SET, byte for byte what upb serialises, made by joining the field
    headers and the blob once (tests/core/test_outbox_frames.py holds it to upb's bytes)."""
    return set_blob_head(kv_id, blob_id, len(data)) + data


_COALESCED = frozenset({"text_delta", "thinking_delta", "token_delta"})
_HEADER = connect.HEADER_SIZE


def delta_kind(message: pb.AgentServerMessage) -> str | None:
    """`text_delta`, `thinking_delta` or `token_delta` for a delta that may be coalesced."""
    if message.WhichOneof("message") != "interaction_update":
        return None
    kind = message.interaction_update.WhichOneof("message")
    return kind if kind in _COALESCED else None


@dataclass(slots=True, eq=False)
class Delta:
    """An open delta: the deltas of one kind that will go out as one frame.

    While it is a single delta it is the caller's message as emitted (most deltas never get
    company, and serialising that message is the cheapest way to its bytes). The first delta to
    join turns it into parts: Python strings, joined once when the frame is made. Never
    `held.text += new.text` on a protobuf message: upb keeps every intermediate string in the
    message's arena until the message dies (1,000 merges of 1 KB cost 711 MiB)."""

    kind: str  # text_delta, thinking_delta or token_delta
    first: pb.AgentServerMessage | None  # the only delta, as emitted; None once others joined
    parts: list[str] | None = None
    tokens: int = 0
    style: pb.ThinkingStyle | None = None  # of a thinking delta (None: not set)
    notice: bool = False  # is_server_notice of a text delta
    chars: int = 0  # characters in `parts`

    def join(self, message: pb.AgentServerMessage) -> bool:
        """Fold `message`, a delta of the same kind, in; False when it may not join this one
        (another thinking style or notice flag, or telemetry we never send: never merged, so
        never lost)."""
        if message.HasField("ttft_breakdown"):
            return False
        if self.first is not None and not self._unpack():
            return False
        kind = self.kind
        new = getattr(message.interaction_update, kind)
        if kind == "token_delta":
            self.tokens += new.tokens
            return True
        if kind == "thinking_delta":
            if (self.style or 0) != new.thinking_style:
                return False
        elif self.notice != new.is_server_notice:
            return False
        text = new.text
        assert self.parts is not None
        self.parts.append(text)
        self.chars += len(text)
        return True

    def _unpack(self) -> bool:
        """Turn the single delta into parts (False when it carries more than a delta)."""
        first = self.first
        assert first is not None
        if first.HasField("ttft_breakdown"):
            return False
        old = getattr(first.interaction_update, self.kind)
        if self.kind == "token_delta":
            self.tokens = old.tokens
        else:
            self.parts = [old.text]
            self.chars = len(old.text)
            if self.kind == "thinking_delta":
                self.style = old.thinking_style if old.HasField("thinking_style") else None
            else:
                self.notice = old.is_server_notice
        self.first = None
        return True

    def payload(self) -> bytes:
        """The frame's message, serialised: ONE message for all the deltas that joined.

        Called once, when the frame turns final; the delta is spent after it. Each copy of the
        text is let go as soon as the next exists (parts, joined text, the message's arena, its
        bytes), so making a frame of N bytes of text peaks at about 2N, not 5N."""
        first = self.first
        if first is not None:
            self.first = None
            return first.SerializeToString()
        kind = self.kind
        if kind == "token_delta":
            update = pb.InteractionUpdate(token_delta=pb.TokenDeltaUpdate(tokens=self.tokens))
            return pb.AgentServerMessage(interaction_update=update).SerializeToString()
        joined = "".join(self.parts or ())
        self.parts = None
        message = pb.AgentServerMessage()
        if kind == "text_delta":
            message.interaction_update.text_delta.text = joined
            if self.notice:
                message.interaction_update.text_delta.is_server_notice = True
        else:
            message.interaction_update.thinking_delta.text = joined
            if self.style is not None:
                message.interaction_update.thinking_delta.thinking_style = self.style
        del joined
        return message.SerializeToString()


class StoredFrame(Protocol):
    """A final frame the backlog let go of, which the edge makes again byte for byte when a
    replay reads it (sans-IO: the core never reads the disk itself)."""

    def load(self) -> bytes | None:
        """The frame's bytes, exactly as first sent; None when they can no longer be made."""
        ...


@dataclass(slots=True, eq=False)
class Entry:
    """One frame of the backlog: bytes once final, a delta that may still grow before.

    A final entry's `frame` is its Connect envelope, made once when it turned final (for the
    last entry, the end-stream envelope), and each compressed envelope is made once per
    encoding: every stream and every replay writes those same bytes."""

    frame: bytes | None  # None while the entry is an open delta, or once let go
    end_stream: bool = False
    key: PendingKey | None = None  # the client request this frame carries, if any
    compressed: dict[str, bytes] | None = None  # compressed envelopes by encoding, made once
    delta: Delta | None = None  # an open delta: later deltas of its kind may join it
    queued_at: float = 0.0
    # makes the bytes again: the entry lets go of them once its request was answered or, with
    # none, once a stream took them (`let_go`)
    stored: StoredFrame | None = None

    def let_go(self) -> None:
        """One that can be made again keeps no bytes from now on."""
        if self.stored is not None:
            self.frame = self.compressed = None

    def envelope(self) -> bytes | None:
        """A final entry's envelope (one let go made again; None if it can no longer be)."""
        frame = self.frame
        if frame is None:
            assert self.stored is not None, "an open entry has no bytes yet"
            return self.stored.load()
        return frame

    @property
    def payload(self) -> bytes:
        """The message bytes of a final entry (what observers, the recorder, get)."""
        frame = self.envelope()
        assert frame is not None, "a frame let go of that can no longer be made"
        return frame[_HEADER:]

    def encoded(self, encoding: str | None, frame: bytes) -> bytes:
        """This final entry's envelope `frame` for a stream of `encoding` (compressed when
        large; made once, but again each time for an entry let go, which keeps no bytes)."""
        if encoding is None or len(frame) - _HEADER < COMPRESS_THRESHOLD:
            return frame
        if self.frame is None:  # made again (maybe a long blob's SET): no copy of its payload
            payload = cast(bytes, memoryview(frame)[_HEADER:])  # compress reads any buffer
            return connect.encode_frame(payload, encoding=encoding)
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
        self.size = 0  # bytes of the final entries: the backlog a run keeps for replays
        # bytes of the final entries held in memory (`size` less what was let go or spilled)
        self.resident = 0
        self._spill_mark = 0  # entries before this can never be spilled (or were)

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
            delta = tail.delta
            if (
                delta is not None
                and delta.kind == kind
                and now - tail.queued_at <= window
                and delta.join(message)
            ):
                return news
        self._close_tail()
        entry = Entry(None, delta=Delta(kind, message), queued_at=now)
        entries.append(entry)
        if window <= 0:  # no coalescing: nothing will join it, so it is final now
            self.close(entry)
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

    def append(
        self,
        frame: bytes | None,
        *,
        key: PendingKey | None = None,
        end: bool = False,
        stored: StoredFrame | None = None,
        size: int = 0,
    ) -> None:
        """Queue a frame that is final at once (a request, a checkpoint, the end): it takes
        held deltas out with it. With `stored` it lets go of its bytes later (`let_go`), or
        never holds them: `frame` None (`size` bytes), made by `stored` when a stream takes it."""
        assert frame is not None or stored is not None, "a frame nothing can make"
        self._close_tail()
        self._step(HoldEvent.FLUSH)
        self.entries.append(Entry(frame, end_stream=end, key=key, stored=stored))
        if frame is None:
            self.size += size  # never in memory: a stream that takes it has it made
        else:
            self.size += len(frame)
            self.resident += len(frame)

    def _close_tail(self) -> None:
        """Make the open tail final: nothing may join it once another entry follows."""
        if self.entries and self.entries[-1].delta is not None:
            self.close(self.entries[-1])

    def close(self, entry: Entry) -> bytes:
        """Make an open delta final (a stream takes it, or another entry follows it): one
        message, serialised now, once, into its envelope; the entry keeps only those bytes."""
        delta = entry.delta
        assert delta is not None
        entry.delta = None
        frame = entry.frame = connect.encode_frame_raw(0, delta.payload())
        self.size += len(frame)
        self.resident += len(frame)
        return frame

    def backlog(self) -> int:
        """The backlog's size: the final entries' bytes, and the text of the open delta."""
        entries = self.entries
        delta = entries[-1].delta if entries else None
        return self.size if delta is None else self.size + delta.chars

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
        if entries and entries[-1].delta is not None:
            return len(entries) - 1
        return len(entries)

    def answered(self, key: PendingKey) -> None:
        """The client answered the request `key`: its frame lets go of its bytes if it can be
        made again (not before: a reconnect under a new request id replays what is pending,
        and making it from disk then costs a copy and a read at that moment)."""
        for entry in reversed(self.entries):
            if entry.key == key:
                self.let_go(entry)
                return

    def let_go(self, entry: Entry) -> None:
        """`entry.let_go()`, and its bytes leave the count of what memory holds."""
        frame = entry.frame
        if frame is not None and entry.stored is not None:
            entry.let_go()
            self.resident -= len(frame)

    def spillable(self, keep: int) -> list[Entry]:
        """The final entries the edge may move to disk so that at most `keep` bytes of them stay
        in memory, oldest first (often fewer: ones the edge makes again anyway stay).

        Readable entries only (a held delta goes out soon, and would be read back at once), not
        the open delta, not the end-stream entry (a few bytes every stream reads), and not one
        with a `StoredFrame` of its own (it lets go of its bytes itself). One whose request is
        still pending may go: a stream that reads it again loads it. Each entry is looked at
        about once over the run's life: the ones that can never go are passed over for good."""
        excess = self.resident - keep
        out: list[Entry] = []
        if excess <= 0:
            return out
        entries = self.entries
        end = self.readable()
        index = self._spill_mark
        passed = True  # every entry so far can never go (or went): the mark moves past them
        while index < end and excess > 0:
            entry = entries[index]
            frame = entry.frame
            if entry.delta is not None:
                break  # the open tail, and nothing after it
            if frame is None or entry.stored is not None or entry.end_stream:
                if passed:
                    self._spill_mark = index + 1
            else:
                passed = False
                out.append(entry)
                excess -= len(frame)
            index += 1
        return out

    def spilled(self, entry: Entry, stored: StoredFrame) -> None:
        """The edge wrote `entry`'s bytes where `stored` reads them back: memory lets go."""
        assert entry.stored is None and entry.frame is not None, "not a spillable entry"
        entry.stored = stored
        self.let_go(entry)
