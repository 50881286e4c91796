"""Everything cursor-byok assumes about mitmproxy's internals, in one place (mitmproxy.md).

Each assumption is pinned by a test that reads mitmproxy's real behaviour
(`tests/proxy/test_mitmproxy_compat.py`), so an upgrade that changes one fails there first and
touches this file only:

- `CONNECTIONS_PER_ADDRESS`: mitmproxy opens at most this many upstream connections per
  address for one client connection (`ConnectionHandler.max_conns`); every served stream is one
  loopback connection, hence the loopback server's several ports.
- `CONNECTION_LOGGER` and the lines it logs about an upstream hop, which the console filter
  drops for the loopback hop.
- `give_end_stream_trailers`: mitmproxy withholds an HTTP/2 response's END_STREAM while the
  client's upload is open, unless the response has trailers (mitmproxy.md §3.3).
The process-wide patches (`install_stream_release`, `refuse_streams_over_the_limit`,
`close_sockets_when_told`, `forget_closed_upstreams`) are installed by one addon,
`mitmproxy_patches.py`, in its `load` and removed in its `done`; the upstream reports they
answer are in mitmproxy.md, so each can go when mitmproxy fixes its bug.

- `install_stream_release`: after that END_STREAM mitmproxy keeps reading the client's upload
  until the client ends it; Cursor keeps its `Run` upload open for the whole turn and marks the
  run failed (and retries it) while the server still reads. mitmproxy has no way for an addon to
  reset a stream with NO_ERROR, so its HTTP/2 server layer is wrapped: after a response carrying
  our end marker has ended while the upload is open, the stream is reset with NO_ERROR (RFC 9113
  §8.1: "a complete response ... MAY request that the client abort transmission of a request
  without error") and, one event later, mitmproxy's stream is told the request ended, so the
  flow completes as if the client had ended its upload.
- `LargeBodies`: building a Request or Response runs mitmproxy's type check of its data class,
  which raises and catches a TypeError for every optional field; the caught exception, its
  traceback and the frames form a cycle whose frames hold every caller's locals (`f_back`), so
  each body stays alive until a full collection, which CPython rarely runs by itself.
- `forget_traceback`: the same cycle, made while an exception is being handled (an error
  answer for a refused request), keeps the frames that exception's traceback holds: the body,
  parsed several times over, unless those frames are cleared first.
- `frame_for_http1_upstream`: mitmproxy forwards an HTTP/2 request to an HTTP/1.1 server with the
  request's own headers; one whose body came without content-length (every unary call of
  Cursor's SDK over HTTP/2) gets no framing at all, so the server reads an empty body and takes
  the body's bytes for the next request.
- `freeze_startup_heap`: what mitmproxy and we import at start-up is ~100,000 long-lived
  objects every full collection would walk.
- `CLIENT_MAX_CONCURRENT_STREAMS`: what mitmproxy's HTTP/2 server advertises to the client in
  SETTINGS_MAX_CONCURRENT_STREAMS (h2's default, which mitmproxy keeps), so a client that honours
  it queues its 101st `Run` stream; the loopback server's ports are sized to it.
- `refuse_streams_over_the_limit`: a client that opens a stream past that limit anyway makes h2
  raise TooManyStreamsError, which mitmproxy treats as a connection error: every stream on the
  connection dies (120 `Run` streams at once ended all 120). RFC 9113 §5.1.2 makes it a stream
  error; the patch answers that one stream RST_STREAM(REFUSED_STREAM), which tells the client
  it was not processed and may be retried, and the connection lives.
- `direct_server`: a flow's upstream is `flow.server_conn` as it is when mitmproxy makes the
  server connection (`HttpStream.make_server_connection`: its address comes from the request,
  its `via` from the server object). In `--mode upstream:` that object is the client tunnel's,
  `via` the upstream proxy, so a flow pointed at the loopback server was sent through the
  upstream proxy (CONNECT 127.0.0.1:port) and failed; a server object of its own, without
  `via`, is a direct connection.
- `close_sockets_when_told`: mitmproxy closes a connection (`CloseConnection`) by cancelling the
  task that reads it, which closes the socket on its way out; but when that task is waiting for
  the handler's event lock (`server_event`, as it often is while frames stream), the
  cancellation skips the close, and the socket stays open for the life of the client
  connection. A client resetting `Run` streams left ~1 in 5 loopback hops open that way (the
  stream went on being served to nobody, and counted as live). The patch closes the socket.
- `forget_closed_upstreams`: mitmproxy's `HttpLayer` keeps every upstream connection it opened
  in `HttpLayer.connections` (connection -> its layer stack: `Server`, `HttpClient`,
  `Http1Client` with its last request and response) for the life of the client connection, and
  an HTTP/2 client's flow to an HTTP/1.1 upstream never reuses one (`get_connection`'s "h2_to_h1"
  case). Every answer the loopback server streams is such a flow, so one editor connection kept
  ~6 KiB per Tab keystroke (48 MiB over 5000), and each new hop scanned all the old ones. The
  patch drops a connection once it is closed both ways, unless it is the layer's own client or
  server or a live stream's `flow.server_conn` (those may still address it).
- `tell_abandoned_requests`: while an addon's `request` hook runs, mitmproxy queues every event
  of that stream behind it (the stream's layer is paused on the hook), so a client that resets
  the stream (HTTP/2 RST_STREAM) or drops the connection is seen only after the hook returns.
  Tab answers in its hook and must stop its model call at once when the editor gives up on a
  request: the patch calls the flow's `ABANDON_KEY` callback (flow metadata) when that stream's
  request protocol error arrives, before it is queued (pinned end to end by
  tests/e2e/test_tab_e2e.py's churn test: without it calls of reset requests
  run on until a newer request supersedes them: the fake model answers 4 instead of 1).
- `local_mode_captures`: how local mode (`--mode local:SPEC`, mitmproxy_rs) picks processes:
  SPEC is a comma list of actions, `NAME` includes and `!NAME` excludes, applied in order (the
  first action an exclude: everything else is included); a NAME matches a process whose name
  contains it, on macOS a regular expression searched in the executable's full path.
- `redirect_termlog`: mitmdump's console log handler (`TermLogHandler`, on the root logger)
  prints each line to the `file` it took at start (the real stdout), so redirecting
  `sys.stdout` does not move it; the live status points that attribute elsewhere while it runs.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import traceback
import weakref
from collections.abc import Callable
from collections.abc import Iterator
from typing import IO
from typing import Any

CONNECTIONS_PER_ADDRESS = 5
CLIENT_MAX_CONCURRENT_STREAMS = 100
CONNECTION_LOGGER = "mitmproxy.proxy.server"  # ConnectionHandler logs through this one


def hop_connect_lines(host: str) -> tuple[str, str]:
    """The starts of mitmproxy's INFO lines when it connects to / disconnects from `host`
    (followed by `:<port>`)."""
    return (f"server connect {host}:", f"server disconnect {host}:")


def hop_streaming_lines(host: str) -> tuple[str, str]:
    """mitmproxy's INFO lines when it streams a request to / a response from `host`."""
    return (f"Streaming request to {host}.", f"Streaming response from {host}.")


END_STREAM_TRAILER = (b"x-cursor-byok", b"end")


def give_end_stream_trailers(flow: Any) -> None:
    """Let an HTTP/2 response we serve end (END_STREAM) although the client's upload is still
    open: mitmproxy sends END_STREAM then only with trailers."""
    from mitmproxy import http

    response = flow.response
    if response is not None and flow.request.is_http2 and not response.trailers:
        response.trailers = http.Headers([END_STREAM_TRAILER])


def local_mode_captures(spec: str, process: str, *, regex: bool = False) -> bool:
    """Whether local mode with `spec` captures the process named (or at the path) `process`,
    as mitmproxy_rs decides it (`regex`: the macOS network extension's way)."""
    import re

    actions = [part.strip() for part in spec.split(",") if part.strip()]
    if not actions:
        return False

    def matches(name: str) -> bool:
        if name.isdigit():
            return False  # a pid, never a name
        if regex:
            try:
                return re.search(name, process) is not None
            except re.error:
                return name in process
        return name in process

    captured = actions[0].startswith("!")
    for action in actions:
        if action.startswith("!"):
            captured = captured and not matches(action[1:])
        else:
            captured = captured or matches(action)
    return captured


_RELEASES: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # wakeup → stream
_RELEASE_FLAG = "_cursor_byok_stream_release"
_QUEUED_RELEASES = "_cursor_byok_queued_releases"  # per Http2Server: trailers not yet sent


Undo = Callable[[], None]


def _replace(owner: Any, name: str, replacement: Any) -> Undo:
    """Set `owner.name`; the returned function puts back exactly what was there (an attribute
    the class only inherited is deleted again, not copied in)."""
    had = name in vars(owner)
    original = vars(owner).get(name)
    setattr(owner, name, replacement)

    def undo() -> None:
        if had:
            setattr(owner, name, original)
        else:
            delattr(owner, name)

    return undo


def _undo_all(undos: list[Undo], then: Callable[[], None] | None = None) -> Undo:
    """One undo for several replacements: each put back, the last first, then `then` (a
    patch's own state to forget)."""

    def undo() -> None:
        while undos:
            undos.pop()()
        if then is not None:
            then()

    return undo


def install_stream_release() -> Undo | None:
    """Wrap mitmproxy's HTTP/2 server layer so our ended `Run` responses release their stream
    (see the module doc). Returns the function that removes it, or None when it is installed
    already (the patches addon, `mitmproxy_patches.py`, installs it in `load`, removes it in
    `done`)."""
    from mitmproxy.proxy.layers.http import _http2

    server = _http2.Http2Server
    if getattr(server, _RELEASE_FLAG, False):
        return None
    original = server._handle_event
    _handle_event = _releasing_handler(original)
    _handle_event.__wrapped__ = original  # type: ignore[attr-defined]
    undo_wrap = _replace(server, "_handle_event", _handle_event)
    undo_flag = _replace(server, _RELEASE_FLAG, True)

    def undo() -> None:
        undo_flag()
        undo_wrap()
        _RELEASES.clear()

    return undo


def _releasing_handler(original: Callable[..., Any]) -> Callable[..., Any]:
    """`Http2Server._handle_event` with the release added: a stream whose response ended with
    our end marker while the client's upload is open is reset with NO_ERROR, and one wakeup
    later its request side ends for mitmproxy. Apart from the install so each reads alone."""
    import h2.errors
    import h2.stream
    from mitmproxy.proxy.commands import RequestWakeup
    from mitmproxy.proxy.commands import SendData
    from mitmproxy.proxy.events import Wakeup
    from mitmproxy.proxy.layers.http._base import ReceiveHttp
    from mitmproxy.proxy.layers.http._events import RequestEndOfMessage
    from mitmproxy.proxy.layers.http._events import ResponseTrailers

    def release(self, stream_id: int):
        self.h2_conn.reset_stream(stream_id, h2.errors.ErrorCodes.NO_ERROR)
        yield SendData(self.conn, self.h2_conn.data_to_send())
        self.streams.pop(stream_id, None)  # later DATA of this stream is nobody's
        wakeup = RequestWakeup(0)
        _RELEASES[wakeup] = stream_id
        yield wakeup

    def _handle_event(self, event):
        if isinstance(event, Wakeup) and event.command in _RELEASES:
            # The request side of the released stream ends for mitmproxy now (not within the
            # response's own events: a layer must not be re-entered).
            yield ReceiveHttp(RequestEndOfMessage(_RELEASES.pop(event.command)))
            return
        yield from original(self, event)
        queued: set[int] | None = self.__dict__.get(_QUEUED_RELEASES)
        if queued:  # nearly always empty: every event of every HTTP/2 client passes here
            for stream_id in _queued_trailers_sent(self.h2_conn, queued):
                yield from release(self, stream_id)
        if (
            not isinstance(event, ResponseTrailers)
            or END_STREAM_TRAILER not in event.trailers.fields
        ):
            return
        stream = self.h2_conn.streams.get(event.stream_id)
        if stream is None:
            return
        if stream.state_machine.state is h2.stream.StreamState.HALF_CLOSED_LOCAL:
            yield from release(self, event.stream_id)
        elif event.stream_id in self.h2_conn.stream_trailers:  # behind held-back data
            self.__dict__.setdefault(_QUEUED_RELEASES, set()).add(event.stream_id)
        # else the client ended its upload already: nothing to release

    return _handle_event


def _queued_trailers_sent(h2_conn: Any, queued: set[int]) -> Iterator[int]:
    """The queued streams to release now, one at a time as the caller releases each. Trailers
    queued behind data the client's flow-control window holds back go out later (a client
    slower than the turn): a stream is released once they have, and forgotten once it is no
    longer open either way."""
    import h2.stream

    for stream_id in list(queued):
        stream = h2_conn.streams.get(stream_id)
        state = stream.state_machine.state if stream is not None else None
        if state is not h2.stream.StreamState.OPEN:
            queued.discard(stream_id)
        if state is h2.stream.StreamState.HALF_CLOSED_LOCAL:
            yield stream_id


def frame_for_http1_upstream(flow: Any) -> bool:
    """Give a buffered HTTP/2 (or 3) request body the content-length an HTTP/1.1 upstream needs
    to read it (harmless to an HTTP/2 upstream, which checks it against the body). Returns
    whether the header was added."""
    request = flow.request
    if flow.response is not None or request.stream or not (request.is_http2 or request.is_http3):
        return False
    body = request.raw_content
    headers = request.headers
    if not body or "content-length" in headers or "transfer-encoding" in headers:
        return False
    headers["content-length"] = str(len(body))
    return True


def forget_traceback(exc: BaseException | None) -> None:
    """Drop what a refused request's traceback holds (its body, parsed several times over),
    before `http.Response.make` runs for it."""
    while exc is not None:
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
            exc.__traceback__ = None
        exc = exc.__context__


class LargeBodies:
    """A full collection once every `every` bytes of bodies of at least `large` bytes.

    A flood of 1 MiB uploads grew the proxy by 200 MiB before; a full collection costs tens of
    milliseconds, so one per 16 MiB of large bodies keeps a flood bounded while a normal turn,
    with one or two large uploads, rarely pays it."""

    def __init__(self, large: int = 256 * 1024, every: int = 16 * 1024 * 1024) -> None:
        self.large = large
        self.every = every
        self._bytes = 0

    def seen(self, size: int) -> bool:
        """Count one body; True when a full collection is due now (then the count restarts)."""
        if size < self.large:
            return False
        self._bytes += size
        if self._bytes >= self.every:
            self._bytes = 0
            return True
        return False


_frozen = False  # once per process: a reloaded script must not freeze what lives by then


def freeze_startup_heap() -> bool:
    """Move what lives now to the permanent generation, once per process (full collections
    then skip it: ~57 -> ~20 ms each). Returns whether this call froze it."""
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.freeze()
    return True


_refusing = False


def refuse_streams_over_the_limit() -> Undo | None:
    """Make a client's stream past SETTINGS_MAX_CONCURRENT_STREAMS a stream error (REFUSED_STREAM)
    instead of the end of its connection. Returns the function that removes it, or None when it
    is installed already.

    The refused stream's header block is still decoded (HPACK state is per connection: skipping
    one block would garble every later one), the stream is opened and at once reset, and its
    events are dropped, so mitmproxy never sees it; h2 answers later frames on it by itself."""
    global _refusing
    if _refusing:
        return None
    import h2.connection
    import h2.errors
    import h2.exceptions
    from mitmproxy.proxy.layers.http import _http_h2

    connection_class = _http_h2.BufferedH2Connection
    original = connection_class._receive_headers_frame

    def _receive_headers_frame(self, frame):
        try:
            return original(self, frame)
        except h2.exceptions.TooManyStreamsError:
            if self.config.client_side:
                raise
        headers = h2.connection._decode_headers(self.decoder, frame.data)
        self.state_machine.process_input(h2.connection.ConnectionInputs.RECV_HEADERS)
        stream = self._get_or_create_stream(
            frame.stream_id, h2.connection.AllowedStreamIDs(not self.config.client_side)
        )
        stream.receive_headers(headers, "END_STREAM" in frame.flags, self.config.header_encoding)
        return stream.reset_stream(h2.errors.ErrorCodes.REFUSED_STREAM), []

    _receive_headers_frame.__wrapped__ = original  # type: ignore[attr-defined]
    undo_wrap = _replace(connection_class, "_receive_headers_frame", _receive_headers_frame)
    _refusing = True

    def undo() -> None:
        global _refusing
        undo_wrap()
        _refusing = False

    return undo


def direct_server(host: str, port: int) -> Any:
    """A server connection for `flow.server_conn` that mitmproxy opens directly, whatever the
    proxy mode (never through an upstream proxy)."""
    from mitmproxy import connection

    return connection.Server(address=(host, port))


_closing = False


def close_sockets_when_told() -> Undo | None:
    """Close a connection's socket as soon as mitmproxy's layers close it (not only when the
    task reading it gets to). Returns the function that removes it, or None when it is
    installed already."""
    global _closing
    if _closing:
        return None
    from mitmproxy.connection import ConnectionState
    from mitmproxy.proxy import server

    original = server.ConnectionHandler.close_connection

    def close_connection(self, connection, half_close: bool = False) -> None:
        original(self, connection, half_close)
        if connection.state is not ConnectionState.CLOSED:
            return
        io = self.transports.get(connection)
        writer = io.writer if io is not None else None
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()  # what the reading task does on its way out; twice is harmless

    close_connection.__wrapped__ = original  # type: ignore[attr-defined]
    undo_wrap = _replace(server.ConnectionHandler, "close_connection", close_connection)
    _closing = True

    def undo() -> None:
        global _closing
        undo_wrap()
        _closing = False

    return undo


_forgetting = False
_ENDED = "_cursor_byok_ended"  # an HttpLayer's closed connections not yet forgotten


def _closed_upstreams(layer: Any, ended: set[Any]) -> list[Any]:
    """Of the connections of an `HttpLayer` that had their `ConnectionClosed` (`ended`), those
    nothing can address any more (see the module doc). A connection's state is CLOSED also
    before it opens, so only these are candidates."""
    from mitmproxy.connection import ConnectionState

    context = layer.context
    in_use = {id(getattr(getattr(stream, "flow", None), "server_conn", None))
              for stream in layer.streams.values()}  # fmt: skip
    return [
        conn
        for conn in ended
        if conn.state is ConnectionState.CLOSED
        and conn is not context.server
        and conn not in layer.waiting_for_establishment
        and id(conn) not in in_use
    ]


def forget_closed_upstreams() -> Undo | None:
    """Make mitmproxy's `HttpLayer` forget an upstream connection once it has closed, instead of
    at the end of the client connection (see the module doc). Returns the function that removes
    it, or None when it is installed already."""
    global _forgetting
    if _forgetting:
        return None
    from mitmproxy.proxy import events
    from mitmproxy.proxy.layers.http import HttpLayer

    original = HttpLayer._handle_event

    def _handle_event(self, event):
        yield from original(self, event)
        if not isinstance(event, events.ConnectionClosed) or event.connection is (
            self.context.client
        ):
            return
        ended: set[Any] = self.__dict__.setdefault(_ENDED, set())
        if event.connection in self.connections:
            ended.add(event.connection)
        for conn in _closed_upstreams(self, ended):
            ended.discard(conn)
            self.connections.pop(conn, None)

    _handle_event.__wrapped__ = original  # type: ignore[attr-defined]
    undo_wrap = _replace(HttpLayer, "_handle_event", _handle_event)
    _forgetting = True

    def undo() -> None:
        global _forgetting
        undo_wrap()
        _forgetting = False

    return undo


def redirect_termlog(file: IO[str] | io.TextIOBase) -> Callable[[], None]:
    """Point mitmdump's console log lines at `file` (rich's proxy, which prints above the live
    status instead of through it); returns what undoes it."""
    from mitmproxy.addons.termlog import TermLogHandler

    moved = [h for h in logging.getLogger().handlers if isinstance(h, TermLogHandler)]
    before = [h.file for h in moved]
    for handler in moved:
        handler.file = file  # type: ignore[assignment]  # a text file, as print() needs

    def undo() -> None:
        for handler, original in zip(moved, before, strict=True):
            handler.file = original

    return undo


ABANDON_KEY = "cursor_byok_on_abandon"  # flow metadata: called when the client gives up on it
ABANDONED_KEY = (
    "cursor_byok_abandoned"  # flow metadata: the client gave up before a callback was set
)
_abandon = False


def tell_abandoned_requests() -> bool:
    """Call a flow's `ABANDON_KEY` callback as soon as its client resets or drops the request,
    even while a hook holds the stream (see the module doc); once per process, returns whether
    this call installed it."""
    global _abandon
    if _abandon:
        return False
    from mitmproxy.proxy.layers.http import HttpStream
    from mitmproxy.proxy.layers.http._events import RequestProtocolError

    original = HttpStream.handle_event

    def handle_event(self, event):
        if isinstance(event, RequestProtocolError):
            flow = getattr(self, "flow", None)
            callback = flow.metadata.pop(ABANDON_KEY, None) if flow is not None else None
            if flow is not None:
                flow.metadata[ABANDONED_KEY] = True
            if callback is not None:
                try:
                    callback()
                except Exception:
                    logging.getLogger(__name__).exception("an abandon callback failed")
        return original(self, event)

    handle_event.__wrapped__ = original  # type: ignore[attr-defined]
    HttpStream.handle_event = handle_event  # type: ignore[method-assign]
    _abandon = True
    return True
