"""Incremental Server-Sent Events parser (sans-IO).

Bytes in, complete events out, for any split of the input: the HTTP layer feeds whatever
chunks the network delivers. Tolerant on purpose (providers.md §2): any of `\\n`, `\\r\\n`
and bare `\\r` end a line (a `\\r` at the end of one chunk followed by `\\n` at the start of
the next is one line ending), comments (`:` lines, used as keep-alives) are skipped, the
content type is not checked, and an unterminated last event is delivered by `close()`.

Lines are split as bytes and decoded only when complete: CR and LF never occur inside a
multi-byte UTF-8 sequence, so a character split across chunks is always reassembled.

Size bounds: a provider (or anything in between) can send a line that never ends. The parser
refuses a line longer than `max_line` bytes and an event whose data exceeds `max_event` bytes
(each held line counted with its bookkeeping, `LINE_OVERHEAD`) with `SseTooLarge` as soon as
the limit is crossed, so memory stays bounded by the limit instead of by what the peer sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursor_byok.errors import ByokError

_BOM = b"\xef\xbb\xbf"
# Large enough for any real event (a Responses `response.completed` repeats the whole output,
# e.g. a big file written through a tool call), small enough to bound memory per stream.
MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_EVENT_BYTES = 64 * 1024 * 1024
# What one held `data:` line costs besides its bytes (a list slot, a bytes object's header),
# counted against `max_event`: else an event of empty `data:` lines, 6 bytes each on the wire
# and ~400 KB as gzip, held ~530 MiB before its 64 MiB of "data" tripped the bound.
LINE_OVERHEAD = 40


class SseTooLarge(ByokError, ValueError):
    """A line or event exceeded the parser's bound; the stream cannot continue."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} larger than {limit} bytes")
        self.what = what
        self.limit = limit


@dataclass(slots=True)
class SseEvent:
    """One dispatched event. `event` is "message" when no `event:` field was sent.

    Not frozen: a frozen dataclass sets each field through `object.__setattr__`, which made
    building it cost more than splitting the event out of the stream (one per delta). Treat
    it as read-only all the same."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Feed bytes with `feed()`, get the events completed so far; call `close()` at EOF.

    Hot path (one call per network read, usually one event): line ends are normalised to LF
    with two C-level `bytes.replace` calls only when the chunk has a CR, the complete lines are
    split once, `data:` lines stay bytes until their event is dispatched, and each event's data
    is decoded once. Other fields (rare) take the general path in `_field`.
    """

    def __init__(self, *, max_line: int = MAX_LINE_BYTES, max_event: int = MAX_EVENT_BYTES) -> None:
        self.max_line = max_line
        self.max_event = max_event
        self._tail = b""  # bytes of an unterminated line (line ends already normalised)
        self._pending: list[bytes] = []  # later pieces of it, joined at the next line end
        self._pending_size = 0
        self._event_size = 0  # data bytes (+ LINE_OVERHEAD a line) of the event being assembled
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF belongs to it
        self._started = False  # BOM check done
        self._data: list[bytes] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self.comments = 0  # keep-alive comments seen (for diagnostics)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        if b"\r" in chunk:
            # CRLF and bare CR end lines too; a CR ending this chunk may pair with an LF
            # starting the next one, which is then skipped.
            self._skip_lf = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if self._started and b"\n" not in chunk:
            # no line end yet: defer the join so a long line costs linear time
            self._pending_size += len(chunk)
            if len(self._tail) + self._pending_size > self.max_line:
                self._reset_line()
                raise SseTooLarge("SSE line", self.max_line)
            self._pending.append(chunk)
            return []
        if self._pending:
            self._tail += b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        buf = self._tail + chunk if self._tail else chunk
        if not self._started:
            if len(buf) < len(_BOM) and _BOM.startswith(buf):
                self._tail = buf
                return []
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[len(_BOM) :]
        end = buf.rfind(b"\n")
        if end < 0:
            self._tail = buf
            if len(buf) > self.max_line:
                self._reset_line()
                raise SseTooLarge("SSE line", self.max_line)
            return []
        self._tail = buf[end + 1 :]
        if len(self._tail) > self.max_line:
            self._reset_line()
            raise SseTooLarge("SSE line", self.max_line)
        return self._lines(buf[:end].split(b"\n"))

    def _lines(self, lines: list[bytes]) -> list[SseEvent]:
        events: list[SseEvent] = []
        data = self._data
        max_line = self.max_line
        for line in lines:
            if not line:
                if data:
                    events.append(self._dispatch())
                    data = self._data
                else:
                    self._event = ""
                continue
            if len(line) > max_line:
                self._reset_line()
                raise SseTooLarge("SSE line", max_line)
            if line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                self._event_size += len(value) + LINE_OVERHEAD
                if self._event_size > self.max_event:
                    self._data = []
                    self._event_size = 0
                    raise SseTooLarge("SSE event", self.max_event)
                data.append(value)
            elif line[0] == 0x3A:  # ":" comment (keep-alive)
                self.comments += 1
            else:
                self._field(line)
        return events

    def close(self) -> list[SseEvent]:
        """End of input: finish a last line and event that lack their terminators.

        Strict EventSource would drop them; we deliver them so that the adapter's own
        terminator check decides whether the stream was complete.
        """
        if self._pending:
            self._tail += b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        tail, self._tail = self._tail, b""
        if not self._started and tail.startswith(_BOM):
            tail = tail[len(_BOM) :]
        lines = [tail, b""] if tail else [b""]
        return self._lines(lines)

    def _field(self, line: bytes) -> None:
        """A field other than `data` (or `data` without a colon): decoded, by the spec."""
        name, colon, value = line.decode("utf-8", errors="replace").partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":  # "data" alone: an empty data line
            self._event_size += len(value) + LINE_OVERHEAD
            if self._event_size > self.max_event:
                self._data = []
                self._event_size = 0
                raise SseTooLarge("SSE event", self.max_event)
            self._data.append(value.encode())
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)

    def _dispatch(self) -> SseEvent:
        data = self._data
        raw = data[0] if len(data) == 1 else b"\n".join(data)
        event = SseEvent(
            raw.decode("utf-8", errors="replace"), self._event or "message", self._id, self._retry
        )
        self._data = []
        self._event_size = 0
        self._event = ""
        return event

    def _reset_line(self) -> None:
        self._tail = b""
        self._pending = []
        self._pending_size = 0
