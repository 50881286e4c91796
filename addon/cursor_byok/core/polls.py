"""RunPoll, the third transport: where each request id's polls resume, and a poll's answer. Sans-IO.

With "HTTP Compatibility Mode: HTTP/1.0" Cursor cannot read a long response as it streams (a
buffering proxy is in the way), so instead of RunSSE it polls: `POST .../RunPoll` with a
`BidiPollRequest{request_id, start_request}`, answered by a short server stream of
`BidiPollResponse{seqno, data, eof}`; its uploads still come by BidiAppend. A poll request carries
no position, so the server keeps one per request id (protocol.md §15.1):

- a poll reads the run's frames the way a RunSSE stream would (the same attempt, the same replay
  rules), from where the last completed poll of that request id stopped, and returns what is
  readable then (at least a heartbeat within the heartbeat interval, at most `MAX_POLL_BYTES`);
- every `BidiPollResponse` of a request id has the next `seqno`, from 0, so a client can drop
  what it sees twice; the one carrying the end of the run has `eof` set, and the poll's Connect
  end-stream carries the run's error (`{}` on every other poll);
- a poll that comes while another of the same request id still waits supersedes it: the older
  one ends at once with nothing, and only the newest may move the position on;
- `start_request` never rewinds a request id that has been polled (a retry of Cursor's is a new
  request id, which the run's backlog replays from the start);
- a poll whose answer did not reach the client (the flow failed) is rolled back, so the next one
  sends the same responses with the same seqnos.

Everything here is bookkeeping over numbers; the shell does the waiting
(`proxy/run_registry.py`) and the edge the HTTP (`proxy/run_poll.py`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_poll_response

MAX_POLL_BYTES = 4 * 1024 * 1024  # server messages one poll answer carries at most
MAX_CURSORS = 4096


@dataclass(slots=True)
class PollCursor:
    """Where the next poll of one request id starts."""

    position: int = 0  # index into the run's frames (a stream subscriber's position)
    seqno: int = 0  # seqno of the next BidiPollResponse
    epoch: int = 0  # bumped by every poll; only the newest may move the cursor
    polls: int = 0


@dataclass(frozen=True, slots=True)
class PollAnswer:
    """What one poll returns: the body (BidiPollResponse envelopes, then the end-stream), and
    what the cursor becomes when it is committed."""

    body: bytes
    responses: int  # BidiPollResponses in it
    eof: bool
    position: int
    seqno: int
    epoch: int


class PollCursors:
    """Every request id's poll position (bounded: the oldest are forgotten first)."""

    def __init__(self, max_cursors: int = MAX_CURSORS) -> None:
        self.max_cursors = max_cursors
        self._cursors: OrderedDict[str, PollCursor] = OrderedDict()

    def __len__(self) -> int:
        return len(self._cursors)

    def begin(self, request_id: str) -> tuple[PollCursor, int]:
        """A poll of `request_id` starts: its cursor and the epoch it must commit with."""
        cursor = self._cursors.get(request_id)
        if cursor is None:
            cursor = self._cursors[request_id] = PollCursor()
            while len(self._cursors) > self.max_cursors:
                self._cursors.popitem(last=False)
        else:
            self._cursors.move_to_end(request_id)
        cursor.epoch += 1
        cursor.polls += 1
        return cursor, cursor.epoch

    def current(self, request_id: str, epoch: int) -> bool:
        """Whether the poll of `epoch` is still the newest of its request id."""
        cursor = self._cursors.get(request_id)
        return cursor is not None and cursor.epoch == epoch

    def commit(self, request_id: str, answer: PollAnswer) -> bool:
        """Move the cursor past `answer`; False when a newer poll came meanwhile."""
        cursor = self._cursors.get(request_id)
        if cursor is None or cursor.epoch != answer.epoch:
            return False
        cursor.position, cursor.seqno = answer.position, answer.seqno
        return True

    def rollback(self, request_id: str, epoch: int, position: int, seqno: int) -> bool:
        """The answer of the poll of `epoch` did not reach the client: the next poll sends it
        again (unless a newer poll already moved on)."""
        cursor = self._cursors.get(request_id)
        if cursor is None or cursor.epoch != epoch:
            return False
        cursor.position, cursor.seqno = position, seqno
        return True


def answer(
    frames: list[bytes], *, seqno: int, position: int, epoch: int, data: str = "hex"
) -> PollAnswer:
    """A poll's answer from the Connect frames a stream subscriber read (uncompressed, as
    `Registry.read` gives them with no encoding): each data frame becomes a BidiPollResponse,
    the end-stream frame one with `eof`, whose JSON ends this poll; else it ends with `{}`."""
    parts: list[bytes] = []
    end = connect.encode_end_stream()
    eof = False
    first = seqno
    for frame in frames:
        flags, payload = frame[0], frame[connect.HEADER_SIZE :]
        if flags & connect.FLAG_END_STREAM:
            parts.append(connect.encode_frame(encode_poll_response(seqno, eof=True, data=data)))
            seqno += 1
            end = frame
            eof = True
            break
        parts.append(connect.encode_frame(encode_poll_response(seqno, payload, data=data)))
        seqno += 1
    parts.append(end)
    return PollAnswer(b"".join(parts), seqno - first, eof, position, seqno, epoch)


def split_frames(chunks: list[bytes]) -> list[bytes]:
    """The envelopes in the chunks a stream writer was given (each chunk is whole envelopes)."""
    frames: list[bytes] = []
    for chunk in chunks:
        view = memoryview(chunk)
        offset = 0
        while offset + connect.HEADER_SIZE <= len(view):
            length = int.from_bytes(view[offset + 1 : offset + 5], "big")
            end = offset + connect.HEADER_SIZE + length
            frames.append(bytes(view[offset:end]))
            offset = end
    return frames
