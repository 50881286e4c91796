"""An HTTP/1 body's chunks that arrive in one read handed on as one piece (issue 38).

mitmproxy's HTTP/1 layer turns every chunk of a chunked body into an event of its own: one
`ResponseData` (or `RequestData`) through the HTTP layer, one DATA frame (or one chunk) to the
other side, one TLS record. Chunk boundaries mean nothing in HTTP/1.1, and a read that holds
several is common where the writer is quicker than the proxy: the loopback streamer writes each
of a run's frames as it is made, and a `Run` turn's close (KV SETs, checkpoint, end) is a dozen
frames made within a millisecond. A one-delta `Run` turn was 14 DATA frames to its client, one
per frame; the proxy's work per event, not per byte, is most of what mitmproxy costs.

`join_body_chunks` wraps the body reader mitmproxy makes for each message
(`_http1.make_body_reader`): a call hands over every chunk the buffer holds, joined, and what
came after them (the end of the message, a protocol error) on the next call, which mitmproxy's
`read_body` makes at once. Nothing is held across reads: the data of one read goes on in that
read, as before, in fewer events.
"""

from __future__ import annotations

from typing import Any

import h11
from mitmproxy.proxy.layers.http import _http1

from cursor_byok.proxy.mitmproxy_compat import Undo
from cursor_byok.proxy.mitmproxy_compat import _replace

MITMPROXY_MAKE_BODY_READER = _http1.make_body_reader  # as mitmproxy ships it


class JoinedChunks:
    """A body reader (`reader(buf)`, `reader.read_eof()`) whose Data is all a read holds."""

    __slots__ = ("_after", "_reader")

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._after: Any = None  # what the reader gave after the joined data: an event or error

    def __call__(self, buf: Any) -> Any:
        after = self._after
        if after is not None:
            self._after = None
            if isinstance(after, BaseException):
                raise after
            return after
        first = self._reader(buf)
        if type(first) is not h11.Data:
            return first
        pieces: list[Any] | None = None
        last = first
        while True:
            try:
                event = self._reader(buf)
            except h11.ProtocolError as exc:  # the data before it still goes on
                self._after = exc
                break
            if type(event) is not h11.Data:
                self._after = event  # the end, or None: the reader wants more bytes
                break
            if pieces is None:
                pieces = [first.data]
            pieces.append(event.data)
            last = event
        if pieces is None:
            return first
        return h11.Data(
            data=b"".join(pieces), chunk_start=first.chunk_start, chunk_end=last.chunk_end
        )

    def read_eof(self) -> Any:
        after = self._after
        if after is not None:  # not reached: `read_body` asks again before the next event
            self._after = None
            if isinstance(after, BaseException):
                raise after
            return after
        return self._reader.read_eof()


def _make_body_reader(expected_size: int | None) -> JoinedChunks:
    return JoinedChunks(MITMPROXY_MAKE_BODY_READER(expected_size))


def join_body_chunks() -> Undo | None:
    """Install the joining reader for every HTTP/1 message mitmproxy reads from now on (None:
    installed already). `Http1Server` and `Http1Client` look `make_body_reader` up in their
    module when a message's headers are read."""
    if _http1.make_body_reader is _make_body_reader:
        return None
    return _replace(_http1, "make_body_reader", _make_body_reader)
