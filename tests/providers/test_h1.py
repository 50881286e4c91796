"""HTTP/1.1 for the provider streams, sans-IO half: the response parser, URLs, request heads.

The network half (keep-alive, errors, TLS) is exercised over real sockets in test_netstream.py."""

from __future__ import annotations

import pytest

from cursor_byok.providers import ProviderError
from cursor_byok.providers.h1 import MAX_HEAD
from cursor_byok.providers.h1 import BadResponse
from cursor_byok.providers.h1 import ResponseParser
from cursor_byok.providers.h1 import parse_url
from cursor_byok.providers.h1 import request_head

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunked(*pieces: bytes, trailers: bytes = b"") -> bytes:
    return (
        b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
        + b"0\r\n"
        + trailers
        + b"\r\n"
    )


def parse(data: bytes, step: int | None = None) -> tuple[ResponseParser, bytes]:
    parser = ResponseParser()
    body = []
    step = step or len(data)
    for i in range(0, len(data), step):
        body += parser.feed(data[i : i + step])
    return parser, b"".join(body)


def test_chunked_body_split_at_every_byte_gives_the_same_body() -> None:
    pieces = [b"data: one\n\n", b"data: " + b"x" * 300 + b"\n\n", b"data: [DONE]\n\n"]
    wire = HEAD + chunked(*pieces, trailers=b"x-trailer: 1\r\n")
    for step in (1, 2, 3, 7, 64, len(wire)):
        parser, body = parse(wire, step)
        assert body == b"".join(pieces), step
        assert parser.done and parser.keep_alive and not parser.extra
        assert parser.head is not None and parser.head.status == 200


def test_one_read_per_event_yields_one_piece_per_event() -> None:
    parser = ResponseParser()
    assert parser.feed(HEAD) == [] and parser.head is not None
    assert parser.feed(b"b\r\ndata: one\n\n\r\n") == [b"data: one\n\n"]
    assert parser.feed(b"b\r\ndata: two\n\n\r\n0\r\n\r\n") == [b"data: two\n\n"]
    assert parser.done


def test_content_length_body_and_bytes_after_it() -> None:
    wire = b'HTTP/1.1 429 Too Many\r\ncontent-length: 13\r\n\r\n{"error":"x"}'
    parser, body = parse(wire, 5)
    assert body == b'{"error":"x"}' and parser.done and parser.keep_alive and not parser.extra
    assert parser.head is not None and parser.head.reason == "Too Many"
    parser, _ = parse(wire + b"HTTP/1.1")
    assert parser.done and parser.extra  # not a connection to reuse


def test_a_body_without_framing_is_read_to_the_close() -> None:
    parser, body = parse(b"HTTP/1.1 200 OK\r\n\r\nabc")
    assert body == b"abc" and not parser.done and not parser.keep_alive
    assert parser.feed(b"def") == [b"def"]
    parser.eof()
    assert parser.done


def test_a_cut_response_is_an_error() -> None:
    parser, _ = parse(HEAD + b"5\r\nab")
    with pytest.raises(BadResponse, match="middle of the body"):
        parser.eof()
    with pytest.raises(BadResponse, match="before the response"):
        ResponseParser().eof()


def test_interim_responses_are_skipped_and_204_has_no_body() -> None:
    parser, body = parse(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
    assert parser.head is not None and parser.head.status == 204
    assert parser.done and body == b""


@pytest.mark.parametrize(
    ("head", "keep_alive"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", True),
        (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n", True),
    ],
)
def test_keep_alive_follows_the_version_and_connection_header(head, keep_alive) -> None:
    parser, _ = parse(head)
    assert parser.done and parser.keep_alive is keep_alive


def test_headers_are_lower_cased_and_repeats_joined() -> None:
    parser, _ = parse(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n")
    assert parser.head is not None and parser.head.headers == {"x-a": "1, 2", "content-length": "0"}


@pytest.mark.parametrize(
    "wire",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
        b"HTTP/1.1 101 Switching\r\n\r\n",
        HEAD + b"zz\r\n",
        HEAD + b"-5\r\n",
        HEAD + b"0x5\r\n",
        HEAD + b"1_0\r\n",
        HEAD + b";ext\r\n",
        HEAD + b"3\r\nabcXY",
        HEAD + b"f" * 5000,
    ],
)
def test_malformed_responses_are_errors(wire: bytes) -> None:
    with pytest.raises(BadResponse):
        parse(wire)


def test_an_endless_head_is_an_error() -> None:
    parser = ResponseParser()
    with pytest.raises(BadResponse, match="larger than"):
        for _ in range(MAX_HEAD // 1000 + 2):
            parser.feed(b"x-h: " + b"v" * 995 + b"\r\n")


def test_urls() -> None:
    t = parse_url("https://api.example.com/v1/chat/completions?api-version=2")
    assert t.origin == ("https", "api.example.com", 443)
    assert (t.path, t.authority) == ("/v1/chat/completions?api-version=2", "api.example.com")
    t = parse_url("http://[::1]:8080")
    assert t.origin == ("http", "::1", 8080) and t.authority == "[::1]:8080" and t.path == "/"
    t = parse_url("http://bücher.example/x")
    assert t.host == "xn--bcher-kva.example"
    for bad in ("ftp://x/", "http:///path", "http://x:99999/"):
        with pytest.raises(ProviderError):
            parse_url(bad)


def test_request_head() -> None:
    head = request_head(
        parse_url("https://api.example.com:8443/v1/messages"),
        {"Authorization": "Bearer k", "content-length": "999", "Host": "evil"},
        42,
    )
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/messages HTTP/1.1"
    assert "host: api.example.com:8443" in lines and "authorization: Bearer k" in lines
    assert "content-length: 42" in lines and "content-length: 999" not in lines
    assert "accept-encoding: identity" in lines and head.endswith(b"\r\n\r\n")
    assert sum(line.startswith("host:") for line in lines) == 1


def test_request_head_refuses_header_injection_without_showing_the_value() -> None:
    with pytest.raises(ProviderError) as caught:
        request_head(parse_url("http://x/"), {"x-api-key": "sk-secret\r\nx-evil: 1"}, 0)
    assert "sk-secret" not in str(caught.value) and not caught.value.retryable
