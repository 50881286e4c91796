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
with `SseTooLarge` as soon as the limit is crossed, so memory stays bounded by the limit
instead of by what the peer sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursor_byok.errors import ByokError

_BOM = b"\xef\xbb\xbf"
# Large enough for any real event (a Responses `response.completed` repeats the whole output,
# e.g. a big file written through a tool call), small enough to bound memory per stream.
MAX_LINE_BYTES = 32 * 1024 * 1024
MAX_EVENT_BYTES = 64 * 1024 * 1024


class SseTooLarge(ByokError, ValueError):
    """A line or event exceeded the parser's bound; the stream cannot continue."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} larger than {limit} bytes")
        self.what = what
        self.limit = limit


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event. `event` is "message" when no `event:` field was sent."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Feed bytes with `feed()`, get the events completed so far; call `close()` at EOF."""

    def __init__(self, *, max_line: int = MAX_LINE_BYTES, max_event: int = MAX_EVENT_BYTES) -> None:
        self.max_line = max_line
        self.max_event = max_event
        self._tail = b""  # bytes of an unterminated line
        self._pending: list[bytes] = []  # later pieces of it, joined at the next line end
        self._pending_size = 0
        self._event_size = 0  # data bytes of the event being assembled
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF belongs to it
        self._started = False  # BOM check done
        self._data: list[str] = []
        self._has_data = False
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
        if self._started and b"\n" not in chunk and b"\r" not in chunk:
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
        # bytes.splitlines splits on \n, \r\n and \r only, which is exactly SSE's rule.
        lines = buf.splitlines(keepends=True)
        if lines and not lines[-1].endswith((b"\n", b"\r")):
            self._tail = lines.pop()
            if len(self._tail) > self.max_line:
                self._reset_line()
                raise SseTooLarge("SSE line", self.max_line)
        else:
            self._tail = b""
        if buf.endswith(b"\r"):
            self._skip_lf = True
        events: list[SseEvent] = []
        for raw in lines:
            if len(raw) > self.max_line + 2:
                self._reset_line()
                raise SseTooLarge("SSE line", self.max_line)
            event = self._line(raw.rstrip(b"\r\n").decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SseEvent]:
        """End of input: finish a last line and event that lack their terminators.

        Strict EventSource would drop them; we deliver them so that the adapter's own
        terminator check decides whether the stream was complete.
        """
        events: list[SseEvent] = []
        if self._pending:
            self._tail += b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        if self._tail:
            tail, self._tail = self._tail, b""
            if not self._started and tail.startswith(_BOM):
                tail = tail[len(_BOM) :]
            event = self._line(tail.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        event = self._dispatch()
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            self.comments += 1
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._event_size += len(value) + 1
            if self._event_size > self.max_event:
                self._data = []
                self._event_size = 0
                raise SseTooLarge("SSE event", self.max_event)
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._has_data:
            self._event = ""
            return None
        event = SseEvent(
            data="\n".join(self._data),
            event=self._event or "message",
            id=self._id,
            retry=self._retry,
        )
        self._data = []
        self._event_size = 0
        self._has_data = False
        self._event = ""
        return event

    def _reset_line(self) -> None:
        self._tail = b""
        self._pending = []
        self._pending_size = 0
