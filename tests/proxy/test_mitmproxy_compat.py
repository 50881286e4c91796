"""Each assumption of proxy/mitmproxy_compat.py, checked against the mitmproxy installed.

When one of these fails after a mitmproxy upgrade, the assumption changed: adjust
mitmproxy_compat.py (and what relies on it), not this test. The END_STREAM trailers trick is
pinned end to end: tests/e2e/test_run_transport.py::test_turn_over_run_with_exec_kv_and_checkpoints
measures the client's wait for END_STREAM after the end-stream envelope.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import weakref

import pytest
from mitmproxy import http
from mitmproxy.http import MessageData
from mitmproxy.proxy import context
from mitmproxy.proxy import server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.utils import human

from cursor_byok.proxy import message_checks
from cursor_byok.proxy import mitmproxy_compat as compat
from cursor_byok.proxy.mitmproxy_patches import MitmproxyPatches


async def test_upstream_connections_per_address_are_capped_as_assumed() -> None:
    class Handler(server.ConnectionHandler):
        async def handle_hook(self, hook) -> None:
            return None

    with taddons.context() as tctx:
        handler = Handler(context.Context(tflow.tclient_conn(), tctx.options))
        semaphore = handler.max_conns[("127.0.0.1", 1)]
        assert isinstance(semaphore, asyncio.Semaphore)
        assert semaphore._value == compat.CONNECTIONS_PER_ADDRESS


def test_the_hop_lines_are_logged_by_the_logger_and_with_the_words_assumed() -> None:
    assert server.logger.name == compat.CONNECTION_LOGGER
    source = inspect.getsource(server.ConnectionHandler)
    assert 'self.log(f"server connect {addr}")' in source
    assert 'self.log(f"server disconnect {addr}")' in source
    assert human.format_address(("127.0.0.1", 8443)) == "127.0.0.1:8443"
    connect, disconnect = compat.hop_connect_lines("127.0.0.1")
    assert f"server connect {human.format_address(('127.0.0.1', 8443))}".startswith(connect)
    assert disconnect == "server disconnect 127.0.0.1:"
    layer = inspect.getsource(http_layer)
    assert 'Log(f"Streaming request to {self.flow.request.host}.")' in layer
    assert 'Log(f"Streaming response from {self.flow.request.host}.")' in layer
    assert compat.hop_streaming_lines("127.0.0.1") == (
        "Streaming request to 127.0.0.1.",
        "Streaming response from 127.0.0.1.",
    )


class _Big:
    pass


@pytest.fixture
def mitmproxy_type_checks(monkeypatch):
    """mitmproxy's own checks of a message's fields, even when the addon's patch is installed
    (`message_checks`: it leaves no such cycle)."""
    monkeypatch.setattr(MessageData, "__post_init__", message_checks.MITMPROXY_POST_INIT)


def test_messages_keep_their_callers_frames_alive_until_a_full_collection(
    no_automatic_gc, mitmproxy_type_checks
) -> None:
    """Why LargeBodies exists: building a Request or Response leaves a reference cycle (a
    TypeError caught in mitmproxy's type check) that holds every calling frame's locals."""

    def handle() -> weakref.ref:
        body = _Big()
        http.Response.make(200, b"", {"content-type": "application/proto"})
        return weakref.ref(body)

    held = handle()
    assert held() is not None  # garbage, but alive: nothing but a full collection frees it
    gc.collect()
    assert held() is None


def test_a_refused_requests_body_dies_with_its_traceback_cleared(
    no_automatic_gc, mitmproxy_type_checks
) -> None:
    """Why forget_traceback exists: the error answer for a refused request, made while the
    exception is being handled, keeps the frames its traceback holds (the parsed body)."""

    def parse(body: _Big) -> None:
        raise ValueError("bad body")

    def refuse(clear: bool) -> weakref.ref:
        body = _Big()
        held = weakref.ref(body)
        try:
            parse(body)
        except ValueError as exc:
            del body
            if clear:
                compat.forget_traceback(exc)
            http.Response.make(400, b"", {"content-type": "application/json"})
        return held

    assert refuse(clear=False)() is not None
    assert refuse(clear=True)() is None


def test_end_stream_trailers_are_given_to_http2_responses_only() -> None:
    flow = tflow.tflow(resp=True)
    flow.request.http_version = "HTTP/2.0"
    compat.give_end_stream_trailers(flow)
    assert flow.response.trailers is not None
    assert flow.response.trailers.fields == (compat.END_STREAM_TRAILER,)
    plain = tflow.tflow(resp=True)
    compat.give_end_stream_trailers(plain)
    assert not plain.response.trailers


@pytest.fixture
def unpatched(monkeypatch) -> None:
    """mitmproxy as it ships for the length of a test, even when an earlier test in this process
    loaded the addons and left the patches installed (they are put back afterwards)."""
    from mitmproxy.proxy.layers.http import _http2
    from mitmproxy.proxy.layers.http import _http_h2

    for owner, name in (
        (_http2.Http2Server, "_handle_event"),
        (_http_h2.BufferedH2Connection, "_receive_headers_frame"),
        (server.ConnectionHandler, "close_connection"),
        (http_layer.HttpLayer, "_handle_event"),
    ):
        wrapped = getattr(vars(owner).get(name), "__wrapped__", None)
        if wrapped is not None:
            monkeypatch.setattr(owner, name, wrapped)
    if vars(_http2.Http2Server).get("_cursor_byok_stream_release"):
        monkeypatch.delattr(_http2.Http2Server, "_cursor_byok_stream_release")
    monkeypatch.setattr(compat, "_refusing", False)
    monkeypatch.setattr(compat, "_closing", False)
    monkeypatch.setattr(compat, "_forgetting", False)


def _h2_pair():
    """mitmproxy's client-facing HTTP/2 connection (sans-IO) and an h2 client talking to it."""
    import h2.config
    import h2.connection
    from mitmproxy.proxy.layers.http._http2 import Http2Server
    from mitmproxy.proxy.layers.http._http_h2 import BufferedH2Connection

    server = BufferedH2Connection(Http2Server.h2_conf)
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    server.initiate_connection()
    server.receive_data(client.data_to_send())
    client.receive_data(server.data_to_send())
    server.receive_data(client.data_to_send())  # the client's SETTINGS ack
    return server, client


def test_mitmproxys_http2_server_advertises_the_stream_limit_assumed() -> None:
    server, client = _h2_pair()
    assert client.remote_settings.max_concurrent_streams == compat.CLIENT_MAX_CONCURRENT_STREAMS
    assert server.local_settings.max_concurrent_streams == compat.CLIENT_MAX_CONCURRENT_STREAMS


def test_a_stream_past_the_limit_is_refused_alone_not_the_connection(unpatched) -> None:
    import h2.errors
    import h2.events
    import h2.exceptions
    import h2.settings

    def open_streams(server, client, count: int) -> list:
        """`count` uploads, each sent headers first, then a body (as a `Run` upload is)."""
        events = []
        client.remote_settings = h2.settings.Settings(client=False)  # a client ignoring it
        for _ in range(count):
            stream = client.get_next_available_stream_id()
            client.send_headers(
                stream,
                [(":method", "POST"), (":path", "/x"), (":scheme", "https"), (":authority", "a")],
            )
            events += server.receive_data(client.data_to_send())
            client.send_data(stream, b"body", end_stream=True)
            events += server.receive_data(client.data_to_send())
        return events

    limit = compat.CLIENT_MAX_CONCURRENT_STREAMS
    server, client = _h2_pair()  # unpatched: mitmproxy's h2 raises (the connection's end)
    if not compat._refusing:
        with pytest.raises(h2.exceptions.TooManyStreamsError):
            open_streams(server, client, limit + 1)
    patches = MitmproxyPatches()
    patches.load(None)
    try:
        _refused_alone(open_streams, limit)
    finally:
        patches.done()
    if not compat._refusing:  # removed: mitmproxy's own behaviour again
        server, client = _h2_pair()
        with pytest.raises(h2.exceptions.TooManyStreamsError):
            open_streams(server, client, limit + 1)


def _refused_alone(open_streams, limit: int) -> None:
    import h2.errors
    import h2.events

    server, client = _h2_pair()
    events = open_streams(server, client, limit + 3)
    assert sum(isinstance(e, h2.events.RequestReceived) for e in events) == limit
    assert sum(isinstance(e, h2.events.DataReceived) for e in events) == limit  # theirs only
    answers = client.receive_data(server.data_to_send())
    refused = [e for e in answers if isinstance(e, h2.events.StreamReset)]
    assert {e.error_code for e in refused} <= {
        h2.errors.ErrorCodes.REFUSED_STREAM,
        h2.errors.ErrorCodes.STREAM_CLOSED,  # the answer to a refused stream's body
    }
    first = {}
    for e in refused:
        first.setdefault(e.stream_id, e.error_code)
    assert list(first.values()) == [h2.errors.ErrorCodes.REFUSED_STREAM] * 3
    # The connection lives, and HPACK stayed in sync: a stream after a slot frees is served.
    server.send_headers(1, [(":status", "200")], end_stream=True)
    client.receive_data(server.data_to_send())
    events = open_streams(server, client, 1)
    assert [type(e) for e in events][:1] == [h2.events.RequestReceived]
    assert dict(events[0].headers)[b":path"] == b"/x"


def _close_a_connection() -> list[str]:
    """What `ConnectionHandler.close_connection` does to a connection's reading task and socket
    writer (stand-ins that note each call)."""
    from types import SimpleNamespace

    from mitmproxy.connection import ConnectionState

    closed: list[str] = []
    writer = SimpleNamespace(close=lambda: closed.append("writer"))
    handler = SimpleNamespace(cancel=lambda why: closed.append(why))

    class Connection:
        state = ConnectionState.OPEN

    connection = Connection()
    io = SimpleNamespace(handler=handler, writer=writer)
    owner = SimpleNamespace(transports={connection: io}, log=lambda *a, **k: None)
    server.ConnectionHandler.close_connection(owner, connection)  # type: ignore[arg-type]
    assert connection.state is ConnectionState.CLOSED
    return closed


def test_a_closed_connections_socket_is_closed_at_once(unpatched) -> None:
    """Why close_sockets_when_told exists: mitmproxy closes a connection by cancelling the task
    that reads it and leaves the socket to that task, which skips it when the cancellation finds
    it waiting for the handler's lock (tests/faults/test_reset_storm.py: hops left open). With
    the patch the socket is closed at once; without it, mitmproxy's own behaviour again."""
    if not compat._closing:
        assert _close_a_connection() == ["closed by command"]  # the socket: left to the task
    patches = MitmproxyPatches()
    patches.load(None)
    try:
        assert _close_a_connection() == ["closed by command", "writer"]
    finally:
        patches.done()
    if not compat._closing:
        assert _close_a_connection() == ["closed by command"]


def test_the_patches_addon_installs_in_load_and_removes_in_done(unpatched) -> None:
    """The three process-wide patches live as long as the addon (mitmproxy_patches.py): `done`
    puts back exactly what mitmproxy had, a second instance installs nothing twice."""
    from mitmproxy.proxy.layers.http import _http2
    from mitmproxy.proxy.layers.http import _http_h2

    places = [
        (_http2.Http2Server, "_handle_event"),
        (_http_h2.BufferedH2Connection, "_receive_headers_frame"),
        (server.ConnectionHandler, "close_connection"),
        (http_layer.HttpLayer, "_handle_event"),
    ]
    before = [dict(vars(owner)).get(name) for owner, name in places]
    originals = [getattr(owner, name) for owner, name in places]
    assert not any(hasattr(value, "__wrapped__") for value in before)
    first, second = MitmproxyPatches(), MitmproxyPatches()
    first.load(None)
    try:
        installed = [getattr(owner, name) for owner, name in places]
        for original, patched in zip(originals, installed, strict=True):
            assert patched is not original and patched.__wrapped__ is original
        second.load(None)  # installed already: nothing is wrapped twice
        assert [getattr(owner, name) for owner, name in places] == installed
        second.done()
        assert [getattr(owner, name) for owner, name in places] == installed
    finally:
        first.done()
    assert [dict(vars(owner)).get(name) for owner, name in places] == before
    assert not getattr(_http2.Http2Server, "_cursor_byok_stream_release", False)


def test_the_server_connection_takes_its_via_from_the_flows_server_object() -> None:
    """`direct_server`: mitmproxy makes a flow's server connection from the request's address
    and `flow.server_conn.via`, so a server object without `via` is a direct connection."""
    source = inspect.getsource(http_layer.HttpStream.make_server_connection)
    assert "(self.flow.request.host, self.flow.request.port)" in source
    assert "self.flow.server_conn.via" in source
    server = compat.direct_server("127.0.0.1", 4242)
    assert server.address == ("127.0.0.1", 4242) and server.via is None


def test_the_http2_server_layer_can_be_wrapped_to_release_ended_streams(unpatched) -> None:
    """What install_stream_release relies on: the server layer's event handler, the events and
    commands it sends, the stream states of h2, and the wakeup a connection layer may request.
    The behaviour is pinned end to end: tests/e2e/test_run_end.py (RST_STREAM NO_ERROR after
    END_STREAM, no error for mitmproxy)."""
    import h2.stream
    from mitmproxy.proxy import commands
    from mitmproxy.proxy import events
    from mitmproxy.proxy.layers.http import _http2
    from mitmproxy.proxy.layers.http._base import ReceiveHttp
    from mitmproxy.proxy.layers.http._events import RequestEndOfMessage
    from mitmproxy.proxy.layers.http._events import ResponseTrailers

    assert inspect.isgeneratorfunction(_http2.Http2Connection._handle_event)
    assert _http2.Http2Server.ReceiveEndOfMessage is RequestEndOfMessage
    from mitmproxy.addons.proxyserver import Proxyserver

    with taddons.context(Proxyserver()) as tctx:  # a layer keeps its streams by id
        layer = _http2.Http2Server(context.Context(tflow.tclient_conn(), tctx.options))
        assert layer.streams == {}
    assert h2.stream.StreamState.HALF_CLOSED_LOCAL
    assert issubclass(events.Wakeup, events.CommandCompleted)
    assert ReceiveHttp(RequestEndOfMessage(1)).event.stream_id == 1
    assert list(ResponseTrailers(1, http.Headers([compat.END_STREAM_TRAILER])).trailers.fields)
    # That the HTTP layer routes a connection layer's wakeup back to that layer is pinned by
    # the end-to-end test above (no wakeup, no release).
    hash(commands.RequestWakeup(0))  # a weak-dict key
    undo = compat.install_stream_release()
    if undo is not None:
        assert compat.install_stream_release() is None  # installed once
        assert _http2.Http2Server._cursor_byok_stream_release  # type: ignore[attr-defined]
        undo()
        assert not getattr(_http2.Http2Server, "_cursor_byok_stream_release", False)


def test_termlog_prints_to_the_file_it_took_and_can_be_pointed_elsewhere() -> None:
    """mitmdump's console handler keeps the stdout of its start (so rich's redirect of
    sys.stdout misses it); `redirect_termlog` moves it, and undoes that."""
    import io
    import logging

    from mitmproxy.addons.termlog import TermLogHandler

    from cursor_byok.proxy.mitmproxy_compat import redirect_termlog

    first, other = io.StringIO(), io.StringIO()
    handler = TermLogHandler(first)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        assert handler.file is first
        undo = redirect_termlog(other)
        logging.getLogger("cursor_byok.test").warning("above the table")
        undo()
        logging.getLogger("cursor_byok.test").warning("back where it was")
    finally:
        root.removeHandler(handler)
    assert "above the table" in other.getvalue() and "above" not in first.getvalue()
    assert "back where it was" in first.getvalue()


def _h2_request_without_length(body: bytes) -> http.Request:
    request = http.Request.make("POST", "https://api2.cursor.test/aiserver.v1.X/Y", body)
    request.http_version = "HTTP/2.0"
    del request.headers["content-length"]
    return request


def test_an_h2_body_without_length_reaches_an_h1_upstream_unframed() -> None:
    """mitmproxy's HTTP/1 client sends the h2 request's own headers, adding no framing: for
    such a request the upstream reads a body of 0 bytes."""
    from mitmproxy.net.http import http1
    from mitmproxy.proxy.layers.http import _http1

    source = inspect.getsource(_http1.Http1Client.send)
    assert "content-length" not in source.lower()  # it never adds one
    converted = _h2_request_without_length(b"\n\x03abc").copy()
    converted.http_version = "HTTP/1.1"
    assert http1.expected_http_body_size(converted) == 0


def test_frame_for_http1_upstream_adds_the_length_of_a_buffered_body() -> None:
    from mitmproxy.net.http import http1

    flow = tflow.tflow()
    flow.request = _h2_request_without_length(b"\n\x03abc")
    assert compat.frame_for_http1_upstream(flow)
    assert flow.request.headers["content-length"] == "5"
    converted = flow.request.copy()
    converted.http_version = "HTTP/1.1"
    assert http1.expected_http_body_size(converted) == 5
    # an HTTP/1.1 request, one with a length, a streamed one and an empty body are left alone
    assert not compat.frame_for_http1_upstream(flow)
    plain = tflow.tflow()
    plain.request = http.Request.make("POST", "https://h/x", b"abc")
    assert not compat.frame_for_http1_upstream(plain)
    streamed = tflow.tflow()
    streamed.request = _h2_request_without_length(b"abc")
    streamed.request.stream = True
    assert not compat.frame_for_http1_upstream(streamed)
    empty = tflow.tflow()
    empty.request = _h2_request_without_length(b"")
    assert not compat.frame_for_http1_upstream(empty)


class _Sink:
    """A connection's layer stack that takes every event and answers nothing."""

    def handle_event(self, event):
        return iter(())


def _abandon_hops(count: int) -> tuple[int, int, int]:
    """An HTTP/2 client's layer (as the editor's one connection) that opened `count` HTTP/1.1
    upstream connections which then closed (as each loopback hop of an abandoned Tab request),
    one more that closed while a live stream still has it as its server, one not yet open.
    Returns how many connections the layer keeps after: all, the in-use one, the pending one."""
    from mitmproxy import connection
    from mitmproxy.proxy import events
    from mitmproxy.proxy.mode_specs import ProxyMode

    with taddons.context() as tctx:
        client = tflow.tclient_conn()
        client.alpn = b"h2"
        client.proxy_mode = ProxyMode.parse("regular")
        layer = http_layer.HttpLayer(
            context.Context(client, tctx.options), http_layer.HTTPMode.regular
        )
        in_use = connection.Server(address=("127.0.0.1", 2))
        pending = connection.Server(address=("127.0.0.1", 3))  # CLOSED until it opens
        stream = http_layer.HttpStream(layer.context.fork(), 1)
        stream.flow = tflow.tflow()
        stream.flow.server_conn = in_use
        layer.streams[1] = stream
        hops = [connection.Server(address=("127.0.0.1", 1)) for _ in range(count)]
        for conn in [*hops, in_use, pending]:
            layer.connections[conn] = _Sink()  # type: ignore[assignment]
        for conn in [*hops, in_use]:
            conn.state = connection.ConnectionState.CLOSED
            list(layer.handle_event(events.ConnectionClosed(conn)))
        kept = len(layer.connections)
        del layer.streams[1]  # the stream ended: the next close forgets its hop too
        extra = connection.Server(address=("127.0.0.1", 1))
        layer.connections[extra] = _Sink()  # type: ignore[assignment]
        list(layer.handle_event(events.ConnectionClosed(extra)))
        return kept, int(in_use in layer.connections), int(pending in layer.connections)


def test_closed_upstream_connections_are_forgotten_while_the_client_lives(unpatched) -> None:
    """Why forget_closed_upstreams exists: mitmproxy keeps every closed upstream connection of
    a client connection in `HttpLayer.connections` (~6 KiB each with its layers, request and
    response: 48 MiB over 5000 abandoned Tab requests on one editor connection). With the patch
    a closed hop is forgotten, one a live stream still names is kept until that stream ends, one
    not yet opened is kept; without it, mitmproxy's own behaviour again."""
    if not compat._forgetting:
        assert _abandon_hops(500) == (502, 1, 1)  # every hop kept for the client's life
    patches = MitmproxyPatches()
    patches.load(None)
    try:
        assert _abandon_hops(500) == (2, 0, 1)  # the in-use and the pending ones only
    finally:
        patches.done()
    if not compat._forgetting:
        assert _abandon_hops(5) == (7, 1, 1)
