"""HTTP/1.1 for the provider streams: one POST, its answer read as it arrives.

Why not httpx here: between the socket and the SSE parser, httpx → httpcore → h11 are five
layers of async generators and a state machine, paid for every event the provider sends (about
35 µs of the ~90 µs one delta cost on the provider side, `bench/bench_provider_stream.py`). A
provider stream needs little of HTTP: a POST with a JSON body; a status, headers and a body that
is chunked, length-delimited or read to the close; keep-alive between the calls of a turn. This
module is that, on netstream's socket layer (a continuous read into a bounded buffer, a
happy-eyeballs connect).

httpx stays for what this does not do: a configured proxy, a test transport, and
`CURSOR_BYOK_NATIVE_IO=0`.

`ResponseParser` is sans-IO (bytes in, head and body pieces out); `H1Pool` and `H1Response`
are the I/O around it.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
import zlib
from collections.abc import AsyncGenerator
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from ..errors import ByokError
from ..errors import Code
from . import netstream
from .base import ProviderError

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024  # status line and headers of one response
MAX_LINE = 4 * 1024  # a chunk-size or trailer line
IDLE_SECONDS = 15.0  # an idle kept-alive connection older than this is closed, not reused
MAX_IDLE_PER_ORIGIN = 20  # as httpx's default keep-alive limit
MAX_ERROR_BODY = 64 * 1024
USER_AGENT = "cursor-byok"


class BadResponse(ByokError):
    """The bytes are not an HTTP/1.1 response we can read (shown as a network ProviderError)."""

    code = Code.UNAVAILABLE


# --------------------------------------------------------------------------- sans-IO parser


@dataclass(frozen=True, slots=True)
class Head:
    status: int
    reason: str
    version: str
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "


_SIZE, _DATA, _DATA_END, _TRAILER, _LENGTH, _CLOSE, _DONE = range(7)


class ResponseParser:
    """The bytes of one response to a POST in; its head, then its body pieces, out.

    `feed()` returns the body bytes the data completes (possibly none) and sets `head` once the
    head is whole; `eof()` says the connection ended. `done` is set when the body has ended;
    `keep_alive` says whether the connection may carry the next request then."""

    __slots__ = ("_buf", "_remaining", "_state", "extra", "head", "keep_alive")

    def __init__(self) -> None:
        self._buf = b""
        self._state = -1  # reading the head
        self._remaining = 0
        self.head: Head | None = None
        self.keep_alive = False
        self.extra = False  # bytes after the end of the response: the connection is unusable

    @property
    def done(self) -> bool:
        return self._state == _DONE

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf + data if self._buf else data
        self._buf = b""
        if self._state < 0:
            buf = self._read_head(buf)
            if self._state < 0:
                return []
        if self._state == _LENGTH:
            return self._length(buf)
        if self._state == _CLOSE:
            return [buf] if buf else []
        if self._state == _DONE:
            self.extra = self.extra or bool(buf)
            return []
        return self._chunked(buf)

    def eof(self) -> None:
        """The connection ended: the end of a read-to-close body, else a cut response."""
        if self._state == _CLOSE:
            self._state = _DONE
        elif self._state != _DONE:
            where = "before the response" if self.head is None else "in the middle of the body"
            raise BadResponse(f"connection closed {where}")

    # --- head -------------------------------------------------------------------------------

    def _read_head(self, buf: bytes) -> bytes:
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD:
                    raise BadResponse(f"response head larger than {MAX_HEAD} bytes")
                self._buf = buf
                return b""
            head = _parse_head(buf[:end])
            buf = buf[end + 4 :]
            if 100 <= head.status < 200:
                if head.status == 101:
                    raise BadResponse("unexpected protocol switch (101)")
                continue  # an interim response (100 Continue, 103 Early Hints): the next head
            self._start_body(head)
            return buf

    def _start_body(self, head: Head) -> None:
        self.head = head
        headers = head.headers
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        if head.version == "HTTP/1.1":
            self.keep_alive = "close" not in tokens
        else:
            self.keep_alive = "keep-alive" in tokens
        if head.status in (204, 304):
            self._state = _DONE
            return
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.split(",")[-1].strip().lower() == "chunked":
                self._state = _SIZE
                return
            self._state, self.keep_alive = _CLOSE, False
            return
        length = headers.get("content-length")
        if length is not None:
            values = {v.strip() for v in length.split(",")}
            if len(values) != 1 or not next(iter(values)).isdigit():
                raise BadResponse(f"bad content-length {length!r}")
            self._remaining = int(values.pop())
            self._state = _LENGTH if self._remaining else _DONE
            return
        self._state, self.keep_alive = _CLOSE, False

    # --- bodies -----------------------------------------------------------------------------

    def _length(self, buf: bytes) -> list[bytes]:
        if not buf:
            return []
        if len(buf) < self._remaining:
            self._remaining -= len(buf)
            return [buf]
        piece, rest = buf[: self._remaining], buf[self._remaining :]
        self._remaining = 0
        self._state = _DONE
        self.extra = bool(rest)
        return [piece] if piece else []

    def _chunked(self, buf: bytes) -> list[bytes]:
        out: list[bytes] = []
        pos = 0
        size = len(buf)
        state = self._state
        while pos < size:
            if state == _DATA:
                take = min(size - pos, self._remaining)
                out.append(buf[pos : pos + take])
                pos += take
                self._remaining -= take
                if not self._remaining:
                    state = _DATA_END
            elif state == _SIZE:
                end = _line_end(buf, pos, "chunk-size")
                if end < 0:
                    break
                field = buf[pos:end].split(b";", 1)[0].strip()
                if not field or field.translate(None, _HEX):  # int() would take "0x", "_", "-"
                    raise BadResponse(f"bad chunk size {field[:40]!r}")
                length = int(field, 16)
                pos = end + 2
                if length:
                    self._remaining = length
                    state = _DATA
                else:
                    state = _TRAILER
            elif state == _DATA_END:
                if size - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise BadResponse("chunk data not followed by CRLF")
                pos += 2
                state = _SIZE
            elif state == _TRAILER:
                end = _line_end(buf, pos, "trailer")
                if end < 0:
                    break
                if end == pos:  # the empty line after the trailers: the end of the body
                    pos += 2
                    state = _DONE
                    self.extra = pos < size
                    pos = size
                    break
                pos = end + 2  # a trailer field: not used
            else:  # pragma: no cover - _DONE is handled by feed()
                break
        self._state = state
        if pos < size and state != _DONE:
            self._buf = buf[pos:]
        if len(out) > 1:
            return [b"".join(out)]
        return out


_HEX = b"0123456789abcdefABCDEF"


def _line_end(buf: bytes, pos: int, what: str) -> int:
    """Where the CRLF-ended line at `pos` ends; -1 while it has not all arrived (bounded)."""
    end = buf.find(b"\r\n", pos)
    if end < 0 and len(buf) - pos > MAX_LINE:
        raise BadResponse(f"{what} line too long")
    return end


def _parse_head(raw: bytes) -> Head:
    lines = raw.split(b"\r\n")
    status_line = lines[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise BadResponse(f"not an HTTP/1.1 response: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.decode("latin-1").partition(":")
        name = name.strip().lower()
        if not sep or not name or " " in name:
            raise BadResponse(f"bad header line {line[:80]!r}")
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return Head(int(parts[1]), parts[2] if len(parts) > 2 else "", parts[0], headers)


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class Target:
    """Where a URL's request goes: the pool key, the request target and the Host header."""

    scheme: str
    host: str
    port: int
    path: str
    authority: str

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


def parse_url(url: str) -> Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ProviderError(
            "other", f"unsupported URL scheme {parts.scheme!r} in the provider URL", retryable=False
        )
    host = parts.hostname
    if not host:
        raise ProviderError("other", "the provider URL has no host", retryable=False)
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ProviderError("other", "the provider URL has a bad port", retryable=False) from None
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise ProviderError("other", f"bad host name {host!r}", retryable=False) from None
    shown = f"[{ascii_host}]" if ":" in ascii_host else ascii_host
    authority = shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, ascii_host, port, path, authority)


_OWN_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}


def request_head(target: Target, headers: dict[str, str], length: int) -> bytes:
    """The request line and headers of a POST with a `length`-byte body."""
    fields = {"user-agent": USER_AGENT, "accept-encoding": "identity"}
    for name, value in headers.items():
        if name.lower() not in _OWN_HEADERS:
            fields[name.lower()] = value
    lines = [f"POST {target.path} HTTP/1.1", f"host: {target.authority}"]
    for name, value in fields.items():
        if any(c in name for c in "\r\n: ") or "\r" in value or "\n" in value:
            # never the value: it may be a key
            raise ProviderError("other", f"invalid HTTP header {name!r}", retryable=False)
        lines.append(f"{name}: {value}")
    lines.append(f"content-length: {length}")
    try:
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise ProviderError(
            "other", "an HTTP header has characters HTTP cannot carry", retryable=False
        ) from None


# --------------------------------------------------------------------------- I/O


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def _wait(waiter: asyncio.Future[None], timeout: float) -> None:
    """`waiter`, or TimeoutError after `timeout` (one timer; no task, unlike asyncio.timeout)."""
    timer = asyncio.get_running_loop().call_later(timeout, _expire, waiter)
    try:
        await waiter
    finally:
        timer.cancel()


class _Connection:
    """One TCP (or TLS) connection; reads go through netstream's buffering protocol."""

    __slots__ = ("idle_since", "origin", "protocol", "transport")

    def __init__(
        self,
        transport: asyncio.Transport,
        protocol: netstream.StreamProtocol,
        origin: tuple[str, str, int],
    ) -> None:
        self.transport = transport
        self.protocol = protocol
        self.origin = origin
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        p = self.protocol
        return (
            not p.eof
            and not p.buffer
            and not self.transport.is_closing()
            and now - self.idle_since < IDLE_SECONDS
        )

    async def read(self, timeout: float) -> bytes:
        """What has arrived, waiting up to `timeout` for something; b"" at a clean EOF."""
        p = self.protocol
        if not p.buffer:
            if p.eof:
                return self._at_eof()
            p.waiter = waiter = asyncio.get_running_loop().create_future()
            try:
                await _wait(waiter, timeout)
            finally:
                p.waiter = None
            if not p.buffer:
                return self._at_eof()
        return p.take(1 << 30)

    def _at_eof(self) -> bytes:
        error = self.protocol.error
        if error is not None:
            raise ConnectionError(str(error) or type(error).__name__) from error
        return b""

    async def write(self, data: bytes, timeout: float) -> None:
        p = self.protocol
        if self.transport.is_closing():
            raise ConnectionError(str(p.error) if p.error else "connection closed")
        self.transport.write(data)
        if not p.write_paused:
            return
        p.drain_waiter = waiter = asyncio.get_running_loop().create_future()
        await _wait(waiter, timeout)
        if p.error is not None or self.transport.is_closing():
            raise ConnectionError(str(p.error) if p.error else "connection closed")

    def close(self) -> None:
        self.transport.close()


class H1Pool:
    """Kept-alive connections per origin, and the POSTs over them."""

    def __init__(
        self,
        *,
        provider: str,
        connect_timeout: float,
        read_timeout: float,
        tls_context: Callable[[], ssl.SSLContext],
    ) -> None:
        self.provider = provider
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._tls_context = tls_context  # called for the first https connection
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._closed = False

    async def post(self, url: str, headers: dict[str, str], content: bytes) -> H1Response:
        """Send the POST and read the response head; the body is read from the response."""
        if self._closed:
            raise ProviderError("other", "the provider client is closed", retryable=False)
        target = parse_url(url)
        data = request_head(target, headers, len(content)) + content
        while True:
            conn = self._checkout(target.origin) or await self._connect(target)
            try:
                return await self._exchange(conn, data)
            except _Stale:
                # The server closed the kept-alive connection as we sent: it never saw the
                # request. A fresh connection, then (only ever for a reused one).
                conn.close()
                log.debug("%s: kept-alive connection was closed; reconnecting", self.provider)
            except BaseException:
                conn.close()
                raise

    async def _exchange(self, conn: _Connection, data: bytes) -> H1Response:
        parser = ResponseParser()
        reused = conn.idle_since > 0
        received = False
        try:
            await conn.write(data, self.read_timeout)
            pieces: list[bytes] = []
            while parser.head is None:
                chunk = await conn.read(self.read_timeout)
                if not chunk:
                    if reused and not received:
                        raise _Stale
                    parser.eof()
                received = True
                pieces += parser.feed(chunk)
        except ConnectionError as exc:
            if reused and not received:
                raise _Stale from exc
            raise _network(exc, self.provider) from exc
        except TimeoutError:
            raise _read_timeout(self.read_timeout, self.provider) from None
        except BadResponse as exc:
            raise _network(exc, self.provider) from exc
        return H1Response(self, conn, parser, pieces)

    def _checkout(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.usable(now):
                return conn
            conn.close()
        return None

    def release(self, conn: _Connection) -> None:
        """Back to the pool after a whole response (or closed, if the pool is full or shut)."""
        if self._closed:
            conn.close()
            return
        idle = self._idle.setdefault(conn.origin, [])
        conn.idle_since = time.monotonic()
        idle.append(conn)
        while len(idle) > MAX_IDLE_PER_ORIGIN:
            idle.pop(0).close()

    async def _connect(self, target: Target) -> _Connection:
        loop = asyncio.get_running_loop()
        tls: ssl.SSLContext | None = None
        if target.scheme == "https":
            tls = self._tls_context()
        try:
            async with asyncio.timeout(self.connect_timeout):
                sock = await netstream.open_socket(target.host, target.port)
                try:
                    transport, protocol = await loop.create_connection(
                        netstream.StreamProtocol,
                        sock=sock,
                        ssl=tls,
                        server_hostname=target.host if tls is not None else None,
                        ssl_handshake_timeout=self.connect_timeout if tls is not None else None,
                    )
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError:
            raise ProviderError(
                "timeout",
                f"connect timeout: no connection to {target.authority} in "
                f"{self.connect_timeout:g} s",
                provider=self.provider,
            ) from None
        except OSError as exc:  # ssl.SSLError (certificate verification) is an OSError
            detail = str(exc) or type(exc).__name__
            raise ProviderError(
                "network", f"ConnectError: {target.authority}: {detail}", provider=self.provider
            ) from exc
        return _Connection(cast(asyncio.Transport, transport), protocol, target.origin)

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()


class _Stale(ByokError):
    """A kept-alive connection the server had closed: the request was not answered (never
    leaves this module: the request is sent again on a fresh connection)."""

    code = Code.UNAVAILABLE


def _network(exc: BaseException, provider: str) -> ProviderError:
    detail = str(exc) or type(exc).__name__
    return ProviderError(
        "network", f"connection closed by the provider: {detail}", provider=provider
    )


def _read_timeout(seconds: float, provider: str) -> ProviderError:
    return ProviderError(
        "timeout",
        f"read (no data from the provider) timeout: nothing for {seconds:g} s",
        provider=provider,
    )


class H1Response:
    """A response being read: status, lower-cased headers, the body as it arrives."""

    def __init__(
        self, pool: H1Pool, conn: _Connection, parser: ResponseParser, first: list[bytes]
    ) -> None:
        assert parser.head is not None
        self._pool = pool
        self._conn: _Connection | None = conn
        self._parser = parser
        self._first = first
        self.status = parser.head.status
        self.headers = parser.head.headers
        self._decoder = _decoder(self.headers.get("content-encoding", ""), pool.provider)

    async def iter_bytes(self) -> AsyncGenerator[bytes]:
        """The body as it arrives (decompressed); transport errors as ProviderError."""
        first, self._first = self._first, []
        for raw in first:
            if (piece := self._decode(raw)) is not None:
                yield piece
        conn, parser = self._conn, self._parser
        if conn is None:
            return
        timeout = self._pool.read_timeout
        provider = self._pool.provider
        while not parser.done:
            try:
                data = await conn.read(timeout)
                if data:
                    pieces = parser.feed(data)
                else:
                    parser.eof()
                    pieces = []
            except TimeoutError:
                raise _read_timeout(timeout, provider) from None
            except (ConnectionError, BadResponse) as exc:
                raise _network(exc, provider) from exc
            for raw in pieces:
                if (piece := self._decode(raw)) is not None:
                    yield piece
        if self._decoder is not None:
            tail = self._decoder.flush()
            if tail:
                yield tail

    def _decode(self, piece: bytes) -> bytes | None:
        if self._decoder is None:
            return piece
        try:
            return self._decoder.decompress(piece) or None
        except zlib.error as exc:
            raise ProviderError(
                "protocol",
                f"undecodable response body: {exc}",
                provider=self._pool.provider,
                retryable=False,
            ) from exc

    async def read_capped(self, limit: int = MAX_ERROR_BODY) -> bytes:
        """Up to `limit` bytes of the body (error bodies are small; never trust that)."""
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in self.iter_bytes():
                parts.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
        except ProviderError as exc:
            log.debug("reading error body failed: %s", exc.kind)
        return b"".join(parts)[:limit]

    def close(self) -> None:
        """Done with the response: its connection goes back to the pool if the body ended
        cleanly (or ends in what has already arrived), else it is closed."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        parser = self._parser
        try:
            if not parser.done and conn.protocol.buffer:
                # the consumer stopped at the format's own end ("data: [DONE]"); the body's
                # end is usually here already
                parser.feed(conn.protocol.take(1 << 30))
        except BadResponse:
            pass
        if parser.done and parser.keep_alive and not parser.extra:
            self._pool.release(conn)
        else:
            conn.close()


def _decoder(encoding: str, provider: str):
    """A decompressor for the body's content-encoding (we ask for identity; some send gzip)."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj()
    raise ProviderError(
        "protocol",
        f"undecodable response body: unsupported content-encoding {encoding!r}",
        provider=provider,
        retryable=False,
    )


__all__ = ["H1Pool", "H1Response", "Head", "ResponseParser", "parse_url"]
