"""RunPoll answered from the run core: one short server stream per poll (core/polls.py).

A poll reads its attempt's run like a RunSSE stream does (a subscriber of the same attempt, the
same backlog and replay rules), but stops after the first write: whatever was readable then,
else the heartbeat the core makes after a quiet heartbeat interval. It is answered in the
`request` hook as one buffered response (Cursor's HTTP/1.0 mode reads it whole anyway), so no
loopback stream is needed. The cursor moves on when the answer is made and moves back if the flow
then fails (`failed`), so the next poll sends the same responses with the same seqnos.
"""

from __future__ import annotations

import asyncio
import logging

from mitmproxy import http

from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.polls import MAX_POLL_BYTES
from cursor_byok.core.polls import PollAnswer
from cursor_byok.core.polls import PollCursors
from cursor_byok.core.polls import answer
from cursor_byok.core.polls import split_frames
from cursor_byok.core.runs import Refused
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import PollRequest

log = logging.getLogger(__name__)

GATHER_BYTES = MAX_POLL_BYTES // 2  # one read's bound, and a gathering poll's: two stay within
POLL_KEY = "cursor_byok_poll"  # flow metadata: (request id, epoch, position, seqno) before it
CONTENT_TYPE = "application/connect+proto"


NO_RUN = "no run has this request id here (send its run request with BidiAppend first)"


class RunPolls:
    """Every request id's poll cursor, and the poll waiting for each."""

    def __init__(self, registry: RunRegistry) -> None:
        self.registry = registry
        self.cursors = PollCursors()
        self.data = "hex"  # how BidiPollResponse.data carries a message (cursor_byok_poll_data)
        self._waiting: dict[str, asyncio.Future[None]] = {}
        # request id → (owner, the end its client has been given)
        self._ends: dict[str, tuple[bytes, bytes]] = {}

    @property
    def max_wait(self) -> float:
        """The longest a poll waits: the core makes a heartbeat after one heartbeat interval,
        this is only the backstop."""
        return 2 * self.registry.config.heartbeat_interval + 1.0

    async def answer(self, flow: http.HTTPFlow, poll: PollRequest, owner: bytes) -> None:
        """Answer one poll (sets `flow.response`). The cursor is begun before the wait, so a
        newer poll for the same id supersedes this one and only the newest moves it on."""
        request_id = poll.request_id
        ended = self._ends.get(request_id)
        if (ended is None or ended[0] != owner) and not self.registry.knows(request_id):
            # names no run (Cursor polls after its first append opened it): nothing is made for
            # it, so polls for made-up ids cannot fill the bound of live requests (issue 33)
            flow.response = _end_with_error("not_found", NO_RUN)
            return
        cursor, epoch = self.cursors.begin(request_id)
        before = (cursor.position, cursor.seqno)
        self._supersede(request_id)
        if ended is not None and ended[0] == owner:  # its end was delivered: again, at once
            flow.response = _response(ended[1])
            return
        until: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = until
        try:
            sub = self.registry.subscribe(request_id, owner=owner)
        except Refused as exc:
            self._waiting.pop(request_id, None)
            log.warning("RunPoll %s refused: %s", request_id, exc)
            flow.response = _end_with_error(exc.code, str(exc))
            return
        sub.position = cursor.position
        chunks, position = await self._gather(request_id, sub, until)
        if not self.cursors.current(request_id, epoch):
            flow.response = _response(connect.encode_end_stream())  # superseded
            return
        made = answer(
            split_frames(chunks), seqno=cursor.seqno, position=position, epoch=epoch, data=self.data
        )
        self._deliver(flow, request_id, owner, (epoch, *before), made)

    def _supersede(self, request_id: str) -> None:
        """End the poll waiting for this id, if any, at once and with nothing: the newer poll
        answers in its place (one waiting poll per id)."""
        older = self._waiting.pop(request_id, None)
        if older is not None and not older.done():
            older.set_result(None)
            log.info("RunPoll %s: a newer poll supersedes the waiting one", request_id)

    async def _gather(
        self, request_id: str, sub: Subscriber, until: asyncio.Future[None]
    ) -> tuple[list[bytes], int]:
        """Read the attempt until the poll should answer (`_Gather`, or the backstop after
        `max_wait`); returns the chunks and the position after them. The subscriber and the
        waiting entry are dropped however it ends, so a cancelled poll holds nothing."""
        loop = asyncio.get_running_loop()
        chunks: list[bytes] = []
        gather = _Gather(loop, until, self.registry.config.coalesce_window)

        def write(chunk: bytes) -> None:
            chunks.append(chunk)
            gather.wrote(len(chunk))

        timer = loop.call_later(self.max_wait, _settle, until)
        try:
            await self.registry.stream_to(sub, write, until=until, max_bytes=GATHER_BYTES)
            position = sub.position
        finally:
            timer.cancel()
            gather.cancel()
            self.registry.unsubscribe(sub)
            if self._waiting.get(request_id) is until:
                del self._waiting[request_id]
        return chunks, position

    def _deliver(
        self,
        flow: http.HTTPFlow,
        request_id: str,
        owner: bytes,
        before: tuple[int, int, int],
        made: PollAnswer,
    ) -> None:
        """Move the cursor on and set the answer; `before` (epoch, position, seqno) goes on the
        flow so `failed` can move it back. An end is kept per owner, to be sent again at once."""
        self.cursors.commit(request_id, made)
        if made.eof:
            self._ends[request_id] = (owner, made.body[-_end_length(made.body) :])
            while len(self._ends) > self.cursors.max_cursors:
                self._ends.pop(next(iter(self._ends)))
        flow.metadata[POLL_KEY] = (request_id, *before)
        flow.response = _response(made.body)
        log.debug(
            "RunPoll %s: %d response(s) from seqno %d%s",
            request_id,
            made.responses,
            before[2],
            ", eof" if made.eof else "",
        )

    def failed(self, flow: http.HTTPFlow) -> None:
        """The poll's answer did not reach the client: the next poll sends it again."""
        entry = flow.metadata.pop(POLL_KEY, None)
        if entry is None:
            return
        request_id, epoch, position, seqno = entry
        if self.cursors.rollback(request_id, epoch, position, seqno):
            self._ends.pop(request_id, None)
            log.info(
                "RunPoll %s: answer lost (%s), resent on the next poll", request_id, flow.error
            )


class _Gather:
    """When a poll answers. What was readable when it came goes at once; a poll that had to
    wait for the stream stays open one coalescing window after the first frame comes, so it
    carries the frames of that window too (one flow per ~2 frames, not one per frame, while a
    text streams: issue 38, RunPoll's CPU per delta), unless it already holds GATHER_BYTES."""

    def __init__(self, loop: asyncio.AbstractEventLoop, until: asyncio.Future[None], window: float):
        self.until = until
        self.window = window
        self.loop = loop
        self.waited = False  # set once the poll's first look found nothing
        self.bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._first = loop.call_soon(self._look_done)  # runs once the first look is over

    def _look_done(self) -> None:
        self.waited = True

    def wrote(self, size: int) -> None:
        self.bytes += size
        if self.until.done():
            return
        if not self.waited or self.window <= 0 or self.bytes >= GATHER_BYTES:
            self.until.set_result(None)
        elif self._timer is None:
            self._timer = self.loop.call_later(self.window, _settle, self.until)

    def cancel(self) -> None:
        self._first.cancel()
        if self._timer is not None:
            self._timer.cancel()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _end_length(body: bytes) -> int:
    """The length of the end-stream envelope a poll answer ends with."""
    offset = 0
    while True:
        length = int.from_bytes(body[offset + 1 : offset + 5], "big")
        end = offset + connect.HEADER_SIZE + length
        if end >= len(body):
            return len(body) - offset
        offset = end


def _end_with_error(code: str, message: str) -> http.Response:
    """A poll answer that ends the stream with an error and carries nothing else."""
    return _response(connect.encode_end_stream(connect.EndStreamError(code, message)))


def _response(body: bytes) -> http.Response:
    return http.Response.make(200, body, {"content-type": CONTENT_TYPE})
