"""body_chunks.py (issue 38): the chunks of an HTTP/1 body that one read holds go on as one
piece, with the same bytes, the end and errors where mitmproxy's own reader puts them; through
mitmproxy's real HTTP/1 layer, a response whose chunks come in one read is one `ResponseData`
event instead of one per chunk."""

from __future__ import annotations

import random

import h11
import pytest
from h11._receivebuffer import ReceiveBuffer
from mitmproxy import connection
from mitmproxy.proxy import context
from mitmproxy.proxy import events
from mitmproxy.proxy.layers.http import ReceiveHttp
from mitmproxy.proxy.layers.http import RequestEndOfMessage
from mitmproxy.proxy.layers.http import RequestHeaders
from mitmproxy.proxy.layers.http import ResponseData
from mitmproxy.proxy.layers.http import ResponseEndOfMessage
from mitmproxy.proxy.layers.http import _http1
from mitmproxy.test import taddons
from mitmproxy.test import tutils

from cursor_byok.proxy import body_chunks
from cursor_byok.proxy.body_chunks import JoinedChunks

SHIPPED = body_chunks.MITMPROXY_MAKE_BODY_READER


def _chunked(pieces: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def _read(reader, reads: list[bytes]) -> list[list[object]]:
    """What `reader` gives for each read, as mitmproxy's `read_body` asks: until it wants more
    bytes (None), the end, or an error."""
    buf = ReceiveBuffer()
    out: list[list[object]] = []
    for data in reads:
        buf += data
        got: list[object] = []
        while True:
            try:
                event = reader(buf)
            except h11.ProtocolError as exc:
                got.append(("error", type(exc)))
                break
            if event is None:
                break
            got.append(bytes(event.data) if isinstance(event, h11.Data) else type(event))
            if isinstance(event, h11.EndOfMessage):
                break
        out.append(got)
        if h11.EndOfMessage in got or any(isinstance(g, tuple) for g in got):
            break
    return out


def _splits(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(0, 6))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def test_the_chunks_one_read_holds_are_one_piece_then_the_end() -> None:
    body = _chunked([b"abc", b"de", b"f" * 300])
    assert _read(JoinedChunks(SHIPPED(None)), [body]) == [
        [b"abc" + b"de" + b"f" * 300, h11.EndOfMessage]
    ]
    # mitmproxy's own reader: a piece per chunk
    assert _read(SHIPPED(None), [body]) == [[b"abc", b"de", b"f" * 300, h11.EndOfMessage]]


def test_any_split_gives_the_same_bytes_end_and_errors_in_at_most_one_piece_a_read() -> None:
    rng = random.Random(38)
    bodies = [
        _chunked([b"x" * rng.randint(1, 40) for _ in range(rng.randint(1, 8))]) for _ in range(60)
    ]
    bodies += [_chunked([b"ok", b"fine"])[:-5] + b"zz\r\nbad\r\n"]  # a malformed chunk head
    for body in bodies:
        for _ in range(5):
            reads = _splits(body, rng)
            joined = _read(JoinedChunks(SHIPPED(None)), reads)
            shipped = _read(SHIPPED(None), reads)
            assert len(joined) == len(shipped)
            for mine, theirs in zip(joined, shipped, strict=True):
                data = [g for g in mine if isinstance(g, bytes)]
                assert len(data) <= 1
                assert b"".join(data) == b"".join(g for g in theirs if isinstance(g, bytes))
                assert [g for g in mine if not isinstance(g, bytes)] == [
                    g for g in theirs if not isinstance(g, bytes)
                ]


def test_an_error_after_good_chunks_comes_after_their_data() -> None:
    body = b"3\r\nabc\r\n2\r\nde\r\nzz\r\n"
    error = _read(SHIPPED(None), [body])[0][-1]
    assert isinstance(error, tuple)
    assert _read(JoinedChunks(SHIPPED(None)), [body]) == [[b"abcde", error]]


@pytest.mark.parametrize("size", [10, -1])
def test_length_and_read_until_close_bodies_are_as_mitmproxy_reads_them(size: int) -> None:
    reads = [b"01234", b"56789"]
    assert _read(JoinedChunks(SHIPPED(size)), reads) == _read(SHIPPED(size), reads)
    joined, shipped = JoinedChunks(SHIPPED(-1)), SHIPPED(-1)
    buf = ReceiveBuffer()
    buf += b"tail"
    assert bytes(joined(buf).data) == b"tail"
    assert type(joined.read_eof()) is type(shipped.read_eof()) is h11.EndOfMessage


def _response_events(data: list[bytes]) -> list[object]:
    """mitmproxy's `Http1Client` sends a request and reads a chunked response arriving in
    `data`'s reads; the HTTP events it hands up."""
    with taddons.context():
        server = connection.Server(address=("example.com", 80))
        server.state = connection.ConnectionState.OPEN
        client = connection.Client(
            peername=("127.0.0.1", 1), sockname=("127.0.0.1", 2), timestamp_start=0
        )
        ctx = context.Context(client, taddons.context().options)
        ctx.server = server
        layer = _http1.Http1Client(ctx)
        got: list[object] = []

        def feed(event: events.Event) -> None:
            for command in layer.handle_event(event):
                if isinstance(command, ReceiveHttp):
                    got.append(command.event)

        feed(events.Start())
        request = tutils.treq(method=b"GET", content=None)
        feed(RequestHeaders(1, request, end_stream=True))
        feed(RequestEndOfMessage(1))
        for piece in data:
            feed(events.DataReceived(server, piece))
    return got


def test_mitmproxys_http1_layer_hands_up_one_piece_per_read(monkeypatch) -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    reads = [head + b"2\r\nab\r\n3\r\ncde\r\n", b"1\r\nf\r\n1\r\ng\r\n0\r\n\r\n"]
    monkeypatch.setattr(_http1, "make_body_reader", SHIPPED)

    def data_of(got: list[object]) -> list[bytes]:
        return [e.data for e in got if isinstance(e, ResponseData)]

    shipped = _response_events(reads)
    assert data_of(shipped) == [b"ab", b"cde", b"f", b"g"]  # why: an event per chunk
    undo = body_chunks.join_body_chunks()
    assert undo is not None
    try:
        assert body_chunks.join_body_chunks() is None  # installed once
        joined = _response_events(reads)
    finally:
        undo()
    assert _http1.make_body_reader is SHIPPED
    assert data_of(joined) == [b"abcde", b"fg"]
    assert isinstance(joined[-1], ResponseEndOfMessage)
    assert [type(e) for e in joined if not isinstance(e, ResponseData)] == [
        type(e) for e in shipped if not isinstance(e, ResponseData)
    ]
