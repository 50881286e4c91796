"""An addon that runs the loopback server for the proxy's life and points flows at it.

mitmproxy streams a response only from an upstream (mitmproxy.md §2), so every Agent stream we
serve goes to our in-process server on 127.0.0.1 (several ports: ports.py says why). This addon
starts it once the proxy runs, says whether it could, sends flows there with their stream spec
(the connection mitmproxy then makes to it is made in memory: memory_hop.py), and gives each port
back when its flow ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import Any

from mitmproxy import connection
from mitmproxy import ctx
from mitmproxy import http

from cursor_byok import outbound
from cursor_byok.proxy import options
from cursor_byok.proxy.loopback.log_filter import LoopbackLogFilter
from cursor_byok.proxy.loopback.memory_hop import MemoryHop
from cursor_byok.proxy.loopback.ports import PortPicker
from cursor_byok.proxy.loopback.relay import upstream_proxy
from cursor_byok.proxy.loopback.server import PRODUCER
from cursor_byok.proxy.loopback.server import Producer
from cursor_byok.proxy.loopback.server import Streamer
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.proxy.mitmproxy_compat import direct_server
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.store.census import Census

log = logging.getLogger(__name__)

HOP_OPTION = "cursor_byok_loopback_hop"  # "memory" (memory_hop.py) or "tcp"

STARTUP_WAIT = 10.0  # seconds an early Agent request waits for the loopback server
PORT_KEY = "cursor_byok_loopback_port"  # the loopback port a served stream went to
LOOPBACK_KEY = "cursor_byok_loopback"  # the flow is answered by the loopback server
PRODUCER_KEY = "cursor_byok_producer"  # the token of the flow's held producer (serve_produced)
# where the flow was going before it was pointed here: scheme, host, port, authority, Host
# header (the traffic view shows it there, not at 127.0.0.1: proxy/webview.py)
ORIGIN_KEY = "cursor_byok_origin"
_INTERNAL_HEADERS = (
    "transfer-encoding",
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-blob-encryption-key",
)


def _discard(chunk: bytes) -> list[bytes]:
    return []


class Loopback:
    def __init__(self, registry: RunRegistry, routes: Routes, census: Census | None = None) -> None:
        self.registry = registry
        self.routes = routes
        self.census = census
        self.streamer: Streamer | None = None
        self.ports: PortPicker | None = None
        self.memory_hop: MemoryHop | None = None  # mitmproxy's hops made in memory, once running
        self.log_filter = LoopbackLogFilter()  # mitmproxy's console lines about the hop
        self.startup_wait = STARTUP_WAIT
        self._ready = asyncio.Event()  # set once the server runs (or failed to start)
        self._started = False
        self._start_error: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- life -----------------------------------------------------------------------------

    def load(self, loader: Any) -> None:
        options.declare(loader, HOP_OPTION)

    def configure(self, updated: set[str]) -> None:
        if options.changed(ctx.options, updated, HOP_OPTION) and self.streamer is not None:
            self._place_hop()  # connections already open stay where they are

    def _place_hop(self) -> None:
        """Make mitmproxy's hop to the server in memory, or over TCP, as the option says."""
        assert self.streamer is not None
        if getattr(ctx.options, HOP_OPTION, "memory") == "tcp":  # (no options: a unit test)
            if self.memory_hop is not None:
                self.memory_hop.uninstall()
                self.memory_hop = None
        elif self.memory_hop is None:
            memory_hop = MemoryHop(self.streamer.accept, self.streamer.ports)
            if memory_hop.install(asyncio.get_running_loop()):
                self.memory_hop = memory_hop

    def running(self) -> None:
        if self._started:
            return
        self._started = True
        self._spawn(self._start())
        # The providers' TLS context (system store + certifi: 100-350 ms of CPU) is built once
        # per process; built on the loop by the first model call, it stalled every client's
        # streams that long. In a thread now (it lets the loop run), before any turn needs it.
        self._spawn(asyncio.to_thread(outbound.tls_context))

    def done(self) -> None:
        self._spawn(self.stop())

    async def _start(self) -> None:
        try:
            self.streamer = Streamer(
                self.registry,
                routes=self.routes,
                upstream_ssl=upstream_ssl,
                upstream_proxy=lambda: upstream_proxy(ctx.options.mode, ctx.options.upstream_auth),
                census=self.census,
                expected=lambda: self.ports.total if self.ports is not None else 0,
            )
            await self.streamer.start()
        except Exception as exc:
            # Not log.exception: mitmdump exits on errors logged at start-up. Every Agent
            # request answers this instead, at once.
            self._start_error = f"cursor-byok could not start its loopback streamer: {exc}"
            log.warning("%s", self._start_error)
        else:
            self._place_hop()
            self.ports = PortPicker(self.streamer.ports)
            self.log_filter.set_ports(self.streamer.ports)
            self.registry.start()
            hop = "in memory" if self.memory_hop is not None else "over TCP"
            log.info(
                "cursor-byok ready (loopback streamer on 127.0.0.1, ports %d-%d; mitmproxy's hop "
                "to it %s)",
                min(self.streamer.ports),
                max(self.streamer.ports),
                hop,
            )
        finally:
            self._ready.set()

    async def stop(self) -> None:
        """Close the streams, then end running turns (embedders await this).

        Streams close first: a turn cancelled with no stream open ends at once instead of
        waiting for blob acknowledgements nobody will send."""
        if self.memory_hop is not None:
            self.memory_hop.uninstall()
            self.memory_hop = None
        if self.streamer is not None:
            await self.streamer.stop()
        await self.registry.stop()

    async def wait_ready(self) -> str | None:
        """Wait (bounded) until the server runs; the reason it cannot serve, or None."""
        if not self._ready.is_set():
            try:
                async with asyncio.timeout(self.startup_wait):
                    await self._ready.wait()
            except TimeoutError:
                return "cursor-byok is still starting; try again"
        return self._start_error

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- flows ----------------------------------------------------------------------------

    def hold_forward(self, forward: Forward) -> str:
        """Keep the original of a flow whose run may turn out to be Cursor's (its token)."""
        assert self.streamer is not None
        return self.streamer.hold_forward(forward)

    def point(self, flow: http.HTTPFlow, spec: StreamSpec) -> None:
        """Send `flow` to the loopback server, which serves the stream `spec` names."""
        assert self.streamer is not None and self.ports is not None
        request = flow.request
        flow.metadata.setdefault(
            ORIGIN_KEY,
            (request.scheme, request.host, request.port, request.authority,
             request.headers.get("host")),
        )  # fmt: skip
        for name in _INTERNAL_HEADERS:
            request.headers.pop(name, None)
        request.headers[STREAM_HEADER] = self.streamer.header_value(spec)
        request.scheme = "http"
        request.host = "127.0.0.1"
        client = flow.client_conn.id
        if self.ports.saturated(client):
            log.warning(
                "%d Agent streams open on one client connection: the next one waits for "
                "mitmproxy to free a loopback connection",
                self.ports.open_streams(client),
            )
        request.port = flow.metadata[PORT_KEY] = self.ports.take(client)
        # A connection of its own, never `via` an upstream proxy (`--mode upstream:`): the hop
        # must not leave the machine (mitmproxy_compat.direct_server).
        flow.server_conn = direct_server(request.host, request.port)
        self.log_filter.opened(flow.client_conn.peername)
        flow.metadata[LOOPBACK_KEY] = True

    def answer_error(self, flow: http.HTTPFlow, code: str, message: str, *, stream: bool) -> None:
        """An error answer for a flow whose body we must not buffer: the loopback sends it."""
        spec = StreamSpec("", error=(code, message), error_stream=stream)
        flow.request.stream = _discard
        self.point(flow, spec)
        flow.request.headers["content-length"] = "0"

    async def serve_produced(
        self, flow: http.HTTPFlow, producer: Producer, content_type: str, encoding: str | None
    ) -> bool:
        """Answer `flow` with a server stream `producer` writes as it goes (an aiserver stream
        answered here: Cmd-K, terminal Cmd-K, Tab). Its request body stays here: the hop gets
        none. False when the loopback server cannot run (the caller answers an error)."""
        if await self.wait_ready() is not None or self.streamer is None:
            return False
        token = self.streamer.hold_producer(producer)  # started now: it runs while the hop opens
        flow.metadata[PRODUCER_KEY] = token
        spec = StreamSpec("", encoding=encoding, content_type=content_type, transport=PRODUCER,
                          forward=token)  # fmt: skip
        request = flow.request
        request.headers.pop("content-encoding", None)
        request.raw_content = b""
        request.headers["content-length"] = "0"
        self.point(flow, spec)
        return True

    def response(self, flow: http.HTTPFlow) -> None:
        self._give_back(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        token = flow.metadata.pop(PRODUCER_KEY, None)
        if token is not None and self.streamer is not None:
            self.streamer.release_producer(token)  # never reached the loopback server
        self._give_back(flow)

    def client_disconnected(self, client: connection.Client) -> None:
        if self.ports is not None:
            self.ports.forget(client.id)
        self.log_filter.forget(client.peername)

    def _give_back(self, flow: http.HTTPFlow) -> None:
        port = flow.metadata.pop(PORT_KEY, None)
        if port is not None and self.ports is not None:
            self.ports.give(flow.client_conn.id, port)
            self.log_filter.closed(flow.client_conn.peername)


def upstream_ssl() -> ssl.SSLContext:
    """TLS to Cursor's backend for a relayed run, verified as mitmproxy verifies upstreams."""
    opts = ctx.options
    if opts.ssl_insecure:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif opts.ssl_verify_upstream_trusted_ca or opts.ssl_verify_upstream_trusted_confdir:
        context = ssl.create_default_context(
            cafile=opts.ssl_verify_upstream_trusted_ca or None,
            capath=opts.ssl_verify_upstream_trusted_confdir or None,
        )
    else:
        # The system trust store, plus certifi's (mitmproxy's default for upstreams):
        # some Python builds (python.org on macOS) come with an empty system store.
        context = ssl.create_default_context()
        with contextlib.suppress(ImportError, OSError):
            import certifi

            context.load_verify_locations(cafile=certifi.where())
    context.set_alpn_protocols(["http/1.1"])
    return context
