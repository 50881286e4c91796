"""The in-process loopback HTTP/1.1 server that serves Agent response streams live.

mitmproxy cannot stream a response body made in the `request` hook (mitmproxy.md §2), but it does
stream whatever an upstream server sends once `flow.response.stream = True`. So the addon points
RunSSE and `Run` flows at this server, on 127.0.0.1 and an ephemeral port, in the same event loop;
it writes the frames of one attempt as they are queued, all frames ready together as one chunk.
Internal headers, guarded by a per-process secret, say which attempt a loopback request reads.

Any local process can connect to these ports, so a connection that has not yet sent a complete
request is bounded twice: in time (`HEAD_TIMEOUT`; mitmproxy sends its whole head and small body
at once) and in number (past `MAX_PENDING` plus the streams the addon has pointed here and not
seen end, the oldest such connection is closed, and a flood from elsewhere costs at most
`MAX_PENDING` descriptors more than the proxy's own streams); `MAX_CONNECTIONS` caps them all.
The allowance for the proxy's own streams matters under a burst: mitmproxy opens one loopback
connection per stream, all of a burst's at once, before it writes their heads (1,045 `Run`
streams over 11 connections came to ~1,000 connections waiting for their heads together, and a
fixed bound of 256 closed 651 of them: mitmproxy answered each with a 502 instead of the Connect
error the stream was to get).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import ssl
from collections import OrderedDict
from collections.abc import AsyncIterator
from collections.abc import Callable

import h11

from cursor_byok.core.attempts import Subscriber
from cursor_byok.core.runs import Refused
from cursor_byok.proxy.loopback.ports import LISTENERS
from cursor_byok.proxy.loopback.prefetch import Prefetched
from cursor_byok.proxy.loopback.relay import UpstreamProxy
from cursor_byok.proxy.loopback.relay import end_with_error
from cursor_byok.proxy.loopback.relay import relay_h2
from cursor_byok.proxy.loopback.relay import relay_h11
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.store.census import RELAYED
from cursor_byok.store.census import SERVED
from cursor_byok.store.census import Census
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

_MAX_HEAD = 64 * 1024
HEAD_TIMEOUT = 10.0  # seconds for a connection's request head and body to arrive
# Connections still sending their request beyond the streams the addon expects (`expected`);
# past it the oldest is closed. mitmproxy sends each request at once, once it runs.
MAX_PENDING = 256
MAX_CONNECTIONS = 4096  # every connection, served streams included (20 x 5 per client)
_MAX_FORWARDS = 256  # held originals of undecided RunSSE requests (each used within ms)
PRODUCER = "producer"  # a StreamSpec.transport: a held producer writes the body (`hold_producer`)
# A server stream answered here that is not an Agent run (Cmd-K, terminal Cmd-K, Tab): called
# once, it gives the body's chunks (Connect frames) as they are made; closed when the client goes.
Producer = Callable[[], AsyncIterator[bytes]]
# A stream stops writing while this much is unsent to mitmproxy (asyncio's own high-water mark,
# where StreamWriter.drain() starts to wait).
WRITE_HIGH_WATER = 0  # bytes a stream's transport may hold unsent before the stream waits
# what one read of a run's frames takes at most (then more while the transport is not full): a
# long frame made from the data dir is read when the transport can take it, one at a time
READ_BYTES = 1024 * 1024
LONG_CHUNK = 64 * 1024  # from this size on a chunk is written so that the stream waits for it
# After a `Run` response ends, its hop stays open until mitmproxy closes it (the client ended its
# upload, or went away), at most this long: mitmproxy resets a stream whose hop ends while the
# client's upload is open, dropping what it still holds for a client slower than the turn.
RUN_END_HOLD = 60.0


class Streamer:
    def __init__(
        self,
        registry: RunRegistry,
        host: str = "127.0.0.1",
        *,
        routes: Routes | None = None,
        upstream_ssl: Callable[[], ssl.SSLContext] | None = None,
        upstream_proxy: Callable[[], UpstreamProxy | None] | None = None,
        census: Census | None = None,
        expected: Callable[[], int] = lambda: 0,
    ) -> None:
        self.registry = registry
        # how many streams the addon has pointed here and not seen end: their connections are
        # mitmproxy's, due any moment, and not counted against MAX_PENDING
        self.expected = expected
        self.census = census  # counts the streams whose route is decided here
        self.host = host
        self.secret = secrets.token_hex(16)
        self.port: int | None = None  # the first of `ports`
        self.ports: list[int] = []  # one listener each (ports.py says why several)
        self._servers: list[asyncio.Server] = []
        self._connections: set[asyncio.Task] = set()
        # connections whose request has not arrived yet, oldest first
        self._pending: OrderedDict[asyncio.Task, asyncio.StreamWriter] = OrderedDict()
        self.dropped = 0  # connections closed before they sent a request (for the log)
        self.routes = routes
        self.upstream_ssl = upstream_ssl or ssl.create_default_context
        self.upstream_proxy = upstream_proxy or (lambda: None)
        self._forwards: OrderedDict[str, Forward] = OrderedDict()
        self._producers: OrderedDict[str, Prefetched] = OrderedDict()

    @property
    def route_wait(self) -> float:
        """Seconds a held stream waits for its run request's route (`Routes.patience`)."""
        return self.routes.patience if self.routes is not None else 10.0

    def hold_forward(self, forward: Forward) -> str:
        """Keep `forward` for the loopback request that names the returned token."""
        token = secrets.token_hex(8)
        self._forwards[token] = forward
        while len(self._forwards) > _MAX_FORWARDS:
            self._forwards.popitem(last=False)
        return token

    def hold_producer(self, producer: Producer) -> str:
        """Start `producer` now (prefetch.py says why) and keep what it makes for the loopback
        request that names the returned token (a spec with transport PRODUCER and this token
        as `forward`)."""
        token = secrets.token_hex(8)
        self._producers[token] = Prefetched(producer, unclaimed=HEAD_TIMEOUT)
        while len(self._producers) > _MAX_FORWARDS:
            self._producers.popitem(last=False)[1].cancel()
        return token

    def release_producer(self, token: str) -> None:
        """A held producer whose flow ended before it reached us: cancelled (a no-op once the
        loopback request claimed it; that one ends with its connection)."""
        held = self._producers.pop(token, None)
        if held is not None:
            held.cancel()

    def header_value(self, spec: StreamSpec) -> str:
        return spec.encode(self.secret)

    async def start(self, listeners: int = LISTENERS) -> int:
        for _ in range(listeners):
            server = await asyncio.start_server(self._serve, self.host, 0)
            self._servers.append(server)
            self.ports.append(server.sockets[0].getsockname()[1])
        self.port = self.ports[0]
        log.debug("loopback streamer on %s, ports %s", self.host, self.ports)
        return self.port

    def accept(self) -> asyncio.StreamReaderProtocol:
        """A connection made without the listeners (memory_hop.py): served as one of theirs."""
        return asyncio.StreamReaderProtocol(asyncio.StreamReader(), self._serve)

    async def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        for task in list(self._connections):
            task.cancel()
        for server in servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    @property
    def open_streams(self) -> int:
        return len(self._connections)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._connections) >= MAX_CONNECTIONS:
            self._drop(writer, f"{MAX_CONNECTIONS} loopback connections open")
            return
        self._connections.add(task)
        self._pending[task] = writer
        bound = MAX_PENDING + self.expected()
        while len(self._pending) > bound:
            _, oldest = self._pending.popitem(last=False)
            self._drop(oldest, f"more than {bound} connections without a request")
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                request = await self._read_request(conn, reader)
            self._pending.pop(task, None)
            if request is None:
                return
            await self._respond(conn, request, reader, writer)
        except TimeoutError:
            self._drop(writer, f"no complete request within {HEAD_TIMEOUT:g} s")
        except (OSError, h11.ProtocolError, asyncio.IncompleteReadError) as exc:
            # ConnectionError and the rest of OSError: a hop the client reset can also fail in
            # the selector (FileNotFoundError for a descriptor already gone), not only as a reset
            log.debug("loopback connection ended: %s", exc)
        except asyncio.CancelledError:
            log.debug("loopback connection closed by shutdown")  # nothing awaits this task
        except Exception as exc:
            # Anything else ends this one hop, in one line that names it: nothing awaits this
            # task, so an escaped exception would be mitmproxy's "Unhandled error in task"
            # traceback (seen under Tab churn in CI; its type is what this line will say).
            log.warning("loopback connection failed: %s: %s", type(exc).__name__, exc)
        finally:
            self._pending.pop(task, None)
            self._connections.discard(task)
            writer.close()
            # At shutdown this task is cancelled: end it quietly, nobody awaits it.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    def _drop(self, writer: asyncio.StreamWriter, why: str) -> None:
        """Close a connection that sent no request in time (mitmproxy's never do that: another
        local process does); said once, then every 256th, never per connection."""
        writer.transport.abort()
        self.dropped += 1
        if self.dropped % 256 == 1:
            log.warning(
                "loopback streamer: closed a connection (%s; %d so far): another local process "
                "is connecting to it",
                why,
                self.dropped,
            )

    async def _read_request(
        self, conn: h11.Connection, reader: asyncio.StreamReader
    ) -> h11.Request | None:
        request = None
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                if not data and request is None:
                    return None
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.EndOfMessage):
                return request
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _refuse(self, conn, writer, spec: StreamSpec, code: str, message: str) -> None:
        """A stream the core will not open: a Connect (or gRPC-Web) error in the stream the
        client asked for, never a bare HTTP status (Cursor shows only what it can parse)."""
        headers = [("content-type", spec.content_type), ("cache-control", "no-cache")]
        writer.write(conn.send(h11.Response(status_code=200, headers=headers)))
        await end_with_error(conn, writer, spec, code, message)

    async def _answer_error(self, conn, writer, spec: StreamSpec) -> None:
        code, message = spec.error or ("internal", "")
        if spec.error_stream:
            body = connect.encode_end_stream(connect.EndStreamError(code, message))
            head = h11.Response(
                status_code=200,
                headers=[
                    ("content-type", "application/connect+proto"),
                    ("content-length", str(len(body))),
                ],
            )
        else:
            status, body = connect.unary_error(code, message)
            head = h11.Response(
                status_code=status,
                headers=[("content-type", "application/json"), ("content-length", str(len(body)))],
            )
        writer.write(
            conn.send(head) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        await writer.drain()

    async def _respond(
        self,
        conn: h11.Connection,
        request: h11.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        spec = StreamSpec.decode(headers.get(STREAM_HEADER, ""), self.secret)
        if spec is None:  # not mitmproxy pointing a flow here: a Connect error all the same
            spec = StreamSpec("", error=("not_found", "unknown stream"))
        if spec.error is not None:
            await self._answer_error(conn, writer, spec)
            return
        if spec.transport == PRODUCER:
            await self._produce(conn, spec, reader, writer)
            return
        subscribed = await self._subscribe(conn, writer, spec)
        if subscribed is None:
            return
        sub: Subscriber | None = subscribed
        writer.write(conn.send(h11.Response(status_code=200, headers=_stream_headers(spec))))
        gone = asyncio.ensure_future(reader.read(1))  # EOF here: mitmproxy dropped the stream
        chunks = 0
        try:
            await writer.drain()
            forward = self._forwards.pop(spec.forward, None) if spec.forward else None
            route = await self._route(spec.request_id, gone) if forward is not None else None
            if self.census is not None and spec.forward:
                path = forward.path if forward is not None else "(stream)"
                self.census.rpc(path, RELAYED if route == CURSOR else SERVED)
            if forward is not None and route == CURSOR:
                self.registry.unsubscribe(subscribed)
                sub = None
                await self._pass_through(forward, spec, conn, writer, gone)
                return
            chunks = await self._stream(subscribed, spec, conn, writer, gone)
        finally:
            gone.cancel()
            if sub is not None:
                self.registry.unsubscribe(sub)
            log.debug("request %s: stream wrote %d chunks", spec.request_id, chunks)

    async def _subscribe(self, conn, writer, spec: StreamSpec) -> Subscriber | None:
        """The stream's subscription to its run; None once the core's refusal was written."""
        try:
            return self.registry.subscribe(
                spec.request_id,
                owner=spec.owner,
                encoding=spec.encoding,
                grpc_web=spec.grpc_web,
                transport=spec.transport,
                client=spec.client,
            )
        except Refused as exc:
            log.warning("%s %s refused: %s", _kind(spec), spec.request_id, exc)
            await self._refuse(conn, writer, spec, exc.code, str(exc))
            return None

    async def _stream(
        self,
        subscribed: Subscriber,
        spec: StreamSpec,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        gone: asyncio.Future,
    ) -> int:
        """Write the run's frames as they come until it ends or the client goes; the number of
        chunks written."""
        transport = writer.transport
        # the stream waits whenever its socket did not take everything, until the buffer is
        # EMPTY: what is left of a long frame in the buffer is a view that keeps the whole frame
        # alive, and the next one (a long blob SET made from the data dir) would be read
        # beside it. The loopback socket takes small frames whole, so they never wait.
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER, low=0)
        chunks = await self.registry.stream_to(
            subscribed,
            lambda chunk: _write_chunk(writer, conn, chunk),
            until=gone,
            full=lambda: transport.get_write_buffer_size() > WRITE_HIGH_WATER,
            drain=writer.drain,
            read_bytes=READ_BYTES,
        )
        if not gone.done():
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            if spec.transport == "run":
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(gone), RUN_END_HOLD)
        return chunks

    async def _pass_through(
        self,
        forward: Forward,
        spec: StreamSpec,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        gone: asyncio.Future,
    ) -> None:
        """A stream of a run on one of Cursor's models: relayed to Cursor as it came."""
        log.info("%s %s: run is on a Cursor model, relayed to Cursor", _kind(spec), spec.request_id)
        relay = relay_h2 if forward.upload is not None else relay_h11
        await relay(forward, spec, conn, writer, gone, self.upstream_ssl, self.upstream_proxy())

    async def _produce(
        self,
        conn: h11.Connection,
        spec: StreamSpec,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """Write what a held producer makes, chunk by chunk as it comes; when mitmproxy drops
        the hop (the client went away) the producer is cancelled where it waits."""
        held = self._producers.pop(spec.forward, None)
        if held is None:
            await self._refuse(conn, writer, spec, "not_found", "this stream is no longer held")
            return
        headers = [("content-type", spec.content_type), ("cache-control", "no-cache")]
        if spec.encoding:
            headers.append(("connect-content-encoding", spec.encoding))
        writer.write(conn.send(h11.Response(status_code=200, headers=headers)))
        gone = asyncio.ensure_future(reader.read(1))
        chunks = held.claim()
        try:
            await writer.drain()
            while True:
                step = asyncio.ensure_future(anext(chunks))
                await asyncio.wait({step, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    step.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                        await step
                    log.debug("a produced stream's client went away: producer cancelled")
                    return
                try:
                    chunk = step.result()
                except StopAsyncIteration:
                    break
                _write_chunk(writer, conn, chunk)
                await writer.drain()
            writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
        finally:
            gone.cancel()
            held.cancel()  # a no-op once it ended; else (the client went) it stops where it waits
            with contextlib.suppress(Exception):
                await chunks.aclose()

    # --- pass-through of a stream whose route was decided after it opened -------------------

    async def _route(self, request_id: str, gone: asyncio.Future) -> str | None:
        """The run's route once its run request arrives; None when the client went away first.

        A stream is only held when runs may go to Cursor, so one whose run request does not
        come within the wait goes to Cursor as it came (a client that never sends a run request
        is not one of ours to serve), and so does the run if its request comes later."""
        if self.routes is None:
            return None
        waiter = asyncio.ensure_future(self.routes.wait(request_id, self.route_wait))
        await asyncio.wait({waiter, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            waiter.cancel()
            return None
        route = waiter.result()
        if route is None:
            # One route per run: no stream split across two sides.
            route = self.routes.decide(request_id, CURSOR)
            log.info(
                "request %s: no run request in %.1f s, passed through to Cursor",
                request_id,
                self.route_wait,
            )
        return route


def _kind(spec: StreamSpec) -> str:
    return "Run" if spec.transport == "run" else "RunSSE"


def _stream_headers(spec: StreamSpec) -> list[tuple[str, str]]:
    """The head of a served (or relayed) stream, as Cursor's backend would send it."""
    headers = [("content-type", spec.content_type), ("cache-control", "no-cache")]
    if not spec.grpc_web:
        headers.append(("connect-protocol-version", "1"))
    if spec.encoding:
        key = "grpc-encoding" if spec.grpc_web else "connect-content-encoding"
        headers.append((key, spec.encoding))
    return headers


def _write_chunk(writer: asyncio.StreamWriter, conn: h11.Connection, chunk: bytes) -> None:
    """One chunk of the response: its framing and the chunk itself, not joined into a copy
    (the transport keeps views of what it cannot send at once).

    Nothing once the transport is closing: Python 3.12.1's `writelines` (unlike `write`) does
    not check for a lost connection and registers a writer on the dead socket, which stays in
    the selector after the socket is closed; the next connection given that fd number then fails
    in `selector.modify` (FileNotFoundError, "Unhandled error in task") and its hop stalls.

    A long chunk goes by `write`, piece by piece: 3.12.1's `writelines` does not pause the
    protocol when the socket leaves some unsent, so `drain` would not wait for the rest, and
    the stream would read its next long frame while this one is still held."""
    if writer.transport.is_closing():
        return
    pieces = conn.send_with_data_passthrough(h11.Data(data=chunk))
    if not pieces:
        return
    if len(chunk) >= LONG_CHUNK:
        for piece in pieces:
            writer.write(piece)
    else:
        writer.writelines(pieces)
