"""The mitmproxy addon: recognise Cursor's Agent RPCs on both transports and serve them.

Everything that is not one of our paths passes through untouched. The Agent paths never go
upstream: BidiAppend is answered in the `request` hook; RunSSE and the HTTP/2 `Run` stream are
pointed at the in-process loopback streamer and streamed back (mitmproxy.md §3), and a `Run`
upload is fed, chunk by chunk, into its attempt (§3.3).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import hmac
import ipaddress
import logging
import os
import secrets
import ssl
import time
import traceback
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mitmproxy import connection
from mitmproxy import ctx
from mitmproxy import exceptions
from mitmproxy import http

from cursor_byok.agent import live_actions
from cursor_byok.agent.loop import CUSTOM_MESSAGE
from cursor_byok.agent.loop import ProviderAgent
from cursor_byok.agent.scripted import ScriptedAgent
from cursor_byok.agent.turn import Agent
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnError
from cursor_byok.agent.turn import run_turn
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config import default_config_path
from cursor_byok.errors import ByokError
from cursor_byok.protocol import actions
from cursor_byok.protocol import connect
from cursor_byok.protocol.bidi import BadFraming
from cursor_byok.protocol.bidi import decode_bidi_append
from cursor_byok.protocol.bidi import decode_run_sse_request
from cursor_byok.protocol.bidi import parse_client_message
from cursor_byok.protocol.bidi import validate_request_id
from cursor_byok.protocol.session import SessionConfig
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.proxy.hosts import DEFAULT_HOSTS
from cursor_byok.proxy.hosts import host_matches
from cursor_byok.proxy.loopback.log_filter import LOGGER as MITMPROXY_CONNECTION_LOGGER
from cursor_byok.proxy.loopback.log_filter import LoopbackLogFilter
from cursor_byok.proxy.loopback.ports import PortPicker
from cursor_byok.proxy.loopback.relay import upstream_proxy
from cursor_byok.proxy.loopback.server import Streamer
from cursor_byok.proxy.loopback.spec import RELAY_RESET
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import LOCAL
from cursor_byok.proxy.routing import RoutedRun
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.routing import decide as decide_route
from cursor_byok.proxy.routing import requested_model
from cursor_byok.proxy.shell import LiveRun
from cursor_byok.proxy.shell import SessionRegistry
from cursor_byok.store.activity import Activity
from cursor_byok.store.activity import route_label
from cursor_byok.store.blobs import BlobStore

if TYPE_CHECKING:
    from cursor_byok.capture.recorder import Recorder  # imported when recording is switched on

log = logging.getLogger(__name__)

BIDI_APPEND_PATH = "/aiserver.v1.BidiService/BidiAppend"
RUN_SSE_PATH = "/agent.v1.AgentService/RunSSE"
RUN_PATH = "/agent.v1.AgentService/Run"
AGENT_PATHS = (BIDI_APPEND_PATH, RUN_SSE_PATH, RUN_PATH)
METADATA_KEY = "cursor_byok"  # the request id of an Agent flow
PATH_KEY = "cursor_byok_path"
UPLOAD_KEY = "cursor_byok_upload"  # the RunUpload of a `Run` flow
PORT_KEY = "cursor_byok_loopback_port"  # the loopback port a served stream went to
LOOPBACK_KEY = "cursor_byok_loopback"  # the flow is answered by the loopback streamer
PASS_KEY = "cursor_byok_pass"  # the flow belongs to a run on a Cursor model: upstream, untouched
AGENTS = ("provider", "scripted")
MAX_BODY = 32 * 1024 * 1024  # a unary Agent body, decoded (a first-turn upload is ~1.5 MB)
STARTUP_WAIT = 10.0  # seconds an early Agent request waits for the addon to be ready
LARGE_BODY = 256 * 1024  # bodies at least this large count towards the next full GC
GC_EVERY = 16 * 1024 * 1024  # bytes of large bodies between two full GCs
MAX_ROUTE_WAITERS = 256  # BidiAppends held at once while their run's route is undecided


class FailingAgent:
    """Ends every turn with one error Cursor shows (e.g. a broken config)."""

    def __init__(self, error: TurnError) -> None:
        self.error = error

    async def run(self, turn: Turn) -> None:
        raise self.error


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "cursor-byok"


def connect_error_response(code: str, message: str) -> http.Response:
    status, body = connect.unary_error(code, message)
    return http.Response.make(status, body, {"content-type": "application/json"})


def _follow_console_verbosity(verbosity: str) -> None:
    """Create our DEBUG records only when the console shows them.

    mitmproxy sets the root logger to DEBUG and passes every record to all of its addons (the
    legacy `add_log` event), whatever the console shows, so a DEBUG line nobody reads still
    costs proxy CPU on every turn. `--set termlog_verbosity=debug` brings them back."""
    level = logging.DEBUG if verbosity == "debug" else logging.INFO
    logging.getLogger("cursor_byok").setLevel(level)


class CursorByok:
    """Options, flow classification and the hooks; the work happens in sessions and turns."""

    def __init__(self, agent: Agent | None = None) -> None:
        self._agent = agent
        self.registry: SessionRegistry | None = None
        self.streamer: Streamer | None = None
        self.ports: PortPicker | None = None
        self.loopback_log = LoopbackLogFilter()  # mitmproxy's lines about the loopback hop
        self.blobs: BlobStore | None = None
        self._ready = asyncio.Event()  # set once the streamer runs (or failed to start)
        self._started = False
        self._start_error: str | None = None
        self._owner_key = secrets.token_bytes(32)  # keys the credential hashes runs are bound to
        self.startup_wait = STARTUP_WAIT
        self._large_bytes = 0  # large request bodies since the last full GC
        self._tasks: set[asyncio.Task] = set()
        self._config: ConfigSource | None = None
        self.recorder: Recorder | None = None  # while recording
        self.providers = ProviderPool()  # provider clients shared across turns
        self.activity: Activity | None = None
        self.routes = Routes()  # which way each run went, by request id
        self.route_wait = 10.0

    # --- lifecycle (sync, so hot reload of `-s` scripts keeps working) ------------------------

    def load(self, loader) -> None:
        logging.getLogger(MITMPROXY_CONNECTION_LOGGER).addFilter(self.loopback_log)
        loader.add_option(
            "cursor_byok_hosts",
            Sequence[str],
            list(DEFAULT_HOSTS),
            "Host patterns (fnmatch) of Cursor's API; in reverse mode every host is served.",
        )
        loader.add_option(
            "cursor_byok_data_dir",
            str,
            str(default_data_dir()),
            "Where cursor-byok keeps conversation blobs (content-addressed files).",
        )
        loader.add_option(
            "cursor_byok_heartbeat_ms", int, 5000, "Server heartbeat after this much silence."
        )
        loader.add_option(
            "cursor_byok_grace_ms",
            int,
            180_000,
            "Cancel a running turn when its RunSSE stream has been gone this long.",
        )
        loader.add_option(
            "cursor_byok_run_request_timeout_ms",
            int,
            60_000,
            "End a RunSSE stream with not_found when no run request arrives in this time.",
        )
        loader.add_option(
            "cursor_byok_route_wait_ms",
            int,
            10_000,
            "How long a request of a run whose model is not known yet (its run request has not "
            "arrived) waits for it; after the wait it goes to Cursor as it came.",
        )
        loader.add_option(
            "cursor_byok_linger_ms",
            int,
            600_000,
            "Keep a finished run this long, so a reconnect or retry of it is answered from "
            "what was sent instead of running it again.",
        )
        loader.add_option(
            "cursor_byok_exec_timeout_ms",
            int,
            600_000,
            "Fail a run when the client leaves a tool request (other than a shell command) "
            "unanswered this long.",
        )
        loader.add_option(
            "cursor_byok_ack_timeout_ms",
            int,
            300_000,
            "Longest wait for the client to acknowledge stored blobs at the end of a turn, as "
            "long as it keeps sending heartbeats.",
        )
        loader.add_option(
            "cursor_byok_gap_timeout_ms",
            int,
            30_000,
            "Fail a run when an append_seqno gap stays open this long (a lost upload).",
        )
        loader.add_option(
            "cursor_byok_coalesce_ms",
            int,
            15,
            "Text/thinking/token deltas that come within this long of the last ones sent are "
            "held until it has passed and go out as one frame; the first delta after a quiet "
            "spell goes at once (0: no holding, lowest latency, one frame per delta).",
        )
        loader.add_option(
            "cursor_byok_config",
            str,
            str(default_config_path()),
            "The cursor-byok TOML config (providers and models); reloaded when it changes.",
        )
        loader.add_option(
            "cursor_byok_record_dir",
            str,
            "",
            "Record every Agent turn (client messages, server frames, provider events; secrets "
            "redacted) as capture files in this directory. Empty: off.",
        )
        loader.add_option(
            "cursor_byok_agent",
            str,
            "provider",
            "Which agent runs turns: 'provider' (your configured models) or 'scripted' "
            "(no model: reads a file and answers; for checking a setup).",
        )

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        if "connection_strategy" in updated and opts.connection_strategy != "lazy":
            log.warning(
                "connection_strategy is %r: set it to 'lazy' (--set connection_strategy=lazy) so "
                "Agent requests never need a connection to Cursor's servers",
                opts.connection_strategy,
            )
        if "termlog_verbosity" in updated:
            _follow_console_verbosity(opts.termlog_verbosity)
            self.loopback_log.quiet = opts.termlog_verbosity != "debug"
        for name in (
            "cursor_byok_heartbeat_ms",
            "cursor_byok_grace_ms",
            "cursor_byok_linger_ms",
            "cursor_byok_exec_timeout_ms",
            "cursor_byok_ack_timeout_ms",
            "cursor_byok_gap_timeout_ms",
            "cursor_byok_route_wait_ms",
        ):
            if getattr(opts, name) <= 0:
                raise exceptions.OptionsError(f"{name} must be positive")
        if opts.cursor_byok_coalesce_ms < 0:
            raise exceptions.OptionsError("cursor_byok_coalesce_ms must not be negative")
        if opts.cursor_byok_agent not in AGENTS:
            raise exceptions.OptionsError(
                f"cursor_byok_agent: unknown agent {opts.cursor_byok_agent!r} "
                f"(known: {', '.join(AGENTS)})"
            )
        if opts.cursor_byok_agent == "provider" and self._agent is None:
            try:
                config = self.config()
                log.info("config %s: models %s", config.path, ", ".join(config.model_names()))
            except ConfigError as exc:
                # Not an error: mitmdump exits on errors logged at startup, and the file is
                # re-read on every turn, so the user can fix it while the proxy runs.
                log.warning("%s (Agent turns will show this error until it is fixed)", exc)
        session_config = SessionConfig(
            heartbeat_interval=opts.cursor_byok_heartbeat_ms / 1000,
            grace_period=opts.cursor_byok_grace_ms / 1000,
            run_request_timeout=opts.cursor_byok_run_request_timeout_ms / 1000,
            linger=opts.cursor_byok_linger_ms / 1000,
            gap_timeout=opts.cursor_byok_gap_timeout_ms / 1000,
            exec_timeout=opts.cursor_byok_exec_timeout_ms / 1000,
            # Recordings must replay frame for frame, and coalescing depends on timing.
            coalesce_window=0
            if opts.cursor_byok_record_dir
            else opts.cursor_byok_coalesce_ms / 1000,
        )
        self.ack_timeout = opts.cursor_byok_ack_timeout_ms / 1000
        self.route_wait = opts.cursor_byok_route_wait_ms / 1000
        if self.streamer is not None:
            self.streamer.route_wait = self.route_wait
        if self.registry is None:
            self.registry = SessionRegistry(
                self._run_turn,
                config=session_config,
                supersedes=actions.supersedes,
                live_action=self._live_action,
            )
            self.registry.observers.append(self._observe_frame)
        else:
            self.registry.config = session_config
        if "cursor_byok_record_dir" in updated:
            self._configure_recorder(opts.cursor_byok_record_dir)
        if self.recorder is not None:  # what the run meta line says of this proxy
            self.recorder.agent = opts.cursor_byok_agent
            self.recorder.config_path = Path(opts.cursor_byok_config).expanduser()
            self.recorder.data_dir = Path(opts.cursor_byok_data_dir).expanduser()
        if "cursor_byok_data_dir" in updated or self.activity is None:
            self.activity = Activity(Path(opts.cursor_byok_data_dir).expanduser())
        if "cursor_byok_data_dir" in updated or self.blobs is None:
            try:
                self.blobs = BlobStore(Path(opts.cursor_byok_data_dir).expanduser() / "blobs")
            except OSError as exc:
                raise exceptions.OptionsError(f"cursor_byok_data_dir: {exc}") from None

    def _configure_recorder(self, directory: str) -> None:
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if directory:
            from cursor_byok.capture.recorder import Recorder

            try:
                self.recorder = Recorder(Path(directory).expanduser())
            except OSError as exc:
                raise exceptions.OptionsError(f"cursor_byok_record_dir: {exc}") from None
            log.info("recording Agent turns into %s", directory)

    def _observe_frame(self, run_id: str, payload: bytes, end: bool) -> None:
        if self.recorder is not None:
            self.recorder.server(run_id, payload, end)

    def running(self) -> None:
        if self._started:
            return
        self._started = True
        self._warn_if_exposed()
        self._spawn(self._start())

    async def _start(self) -> None:
        assert self.registry is not None
        try:
            self.streamer = Streamer(
                self.registry,
                routes=self.routes,
                upstream_ssl=self._upstream_ssl,
                upstream_proxy=lambda: upstream_proxy(ctx.options.mode, ctx.options.upstream_auth),
            )
            self.streamer.route_wait = self.route_wait
            await self.streamer.start()
        except Exception as exc:
            # Not log.exception: mitmdump exits on errors logged at start-up. Every Agent
            # request answers this instead, at once.
            self._start_error = f"cursor-byok could not start its loopback streamer: {exc}"
            log.warning("%s", self._start_error)
        else:
            self.ports = PortPicker(self.streamer.ports)
            self.loopback_log.set_ports(self.streamer.ports)
            self.registry.start()
            log.info(
                "cursor-byok ready (loopback streamer on 127.0.0.1, ports %d-%d)",
                min(self.streamer.ports),
                max(self.streamer.ports),
            )
        finally:
            self._ready.set()

    def _warn_if_exposed(self) -> None:
        """Agent RPCs need no Cursor token: a proxy others can reach spends the user's key."""
        if "listen_host" not in ctx.options:
            return
        host = ctx.options.listen_host
        proxyauth = ctx.options.proxyauth if "proxyauth" in ctx.options else None
        try:
            loopback = host != "" and ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback and not proxyauth:
            log.warning(
                "cursor-byok: the proxy listens on %s, reachable from other machines, without "
                "proxyauth: anyone who can reach it can run Agent turns on your provider keys. "
                "Use --listen-host 127.0.0.1 (or set proxyauth).",
                host or "all interfaces",
            )

    def done(self) -> None:
        logging.getLogger(MITMPROXY_CONNECTION_LOGGER).removeFilter(self.loopback_log)
        self._spawn(self.stop())

    async def stop(self) -> None:
        """End running turns and close the streamer and recorder (embedders await this).

        Streams close first: a turn cancelled with no stream open ends at once instead of
        waiting for blob acknowledgements nobody will send.
        """
        if self.streamer is not None:
            await self.streamer.stop()
        if self.registry is not None:
            await self.registry.stop()
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if self.activity is not None:  # the calls of the last WRITE_INTERVAL (a write: ~1 ms)
            self.activity.flush(1.0)
        await self.providers.aclose()

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- the agent ------------------------------------------------------------------------

    def config(self) -> Config:
        """The current config snapshot; running turns keep the one they started with."""
        path = Path(ctx.options.cursor_byok_config).expanduser()
        if self._config is None or self._config.path != path:
            self._config = ConfigSource(path)
        return self._config.get()

    def agent(self) -> Agent:
        if self._agent is not None:
            return self._agent
        if ctx.options.cursor_byok_agent == "scripted":
            return ScriptedAgent()
        try:
            wrap = self.recorder.wrap_provider if self.recorder is not None else None
            return ProviderAgent(self.config(), wrap_provider=wrap, pool=self.providers)
        except ConfigError as exc:
            return FailingAgent(
                TurnError(
                    "failed_precondition",
                    str(exc),
                    title="cursor-byok configuration",
                    error=CUSTOM_MESSAGE,
                )
            )

    def _routing_config(self) -> Config | None:
        """The config routing decides by; None when every run is served here (another agent,
        or a broken config whose error the turn shows)."""
        if self._agent is not None or ctx.options.cursor_byok_agent != "provider":
            return None
        try:
            return self.config()
        except ConfigError:
            return None

    def _may_pass(self) -> bool:
        """Whether any run can go to Cursor: only then do requests wait for their route."""
        config = self._routing_config()
        return config is not None and config.route_other_models == "cursor"

    def _decide(self, request_id: str, run_request, opened: str = "") -> str:
        """The route of a run, from its run request; logged with how its stream `opened`
        (a `Run` stream: one line for both, one log record less per turn)."""
        known = self.routes.get(request_id)
        route = self.routes.decide(request_id, decide_route(self._routing_config(), run_request))
        if known is None and route == CURSOR:
            self.routes.recent.append(
                RoutedRun(
                    request_id,
                    run_request.conversation_id,
                    requested_model(run_request),
                    time.monotonic(),
                )
            )
        log.info(
            "%s: model %r → %s",
            f"Run {request_id} opened ({opened})" if opened else f"run {request_id}",
            requested_model(run_request),
            "Cursor's backend" if route == CURSOR else "served here",
        )
        return route

    def _decide_first(self, request_id: str, message, opened: str = "") -> str:
        """The route of a `Run` stream, from its first client message."""
        if message.WhichOneof("message") == "run_request":
            return self._decide(request_id, message.run_request, opened)
        if opened:
            log.info("Run %s opened (%s)", request_id, opened)
        return self.routes.decide(request_id, LOCAL)

    def _upstream_ssl(self) -> ssl.SSLContext:
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

    def _live_action(self, live: LiveRun, action) -> None:
        """A conversation action sent mid-run (stop one subagent, send work to the background)."""
        if not live_actions.handles(action):
            log.info("run %s: %s ignored mid-run", live.request_id, action.WhichOneof("action"))
            return
        self._spawn(live_actions.handle(live.turn, action))

    async def _run_turn(self, live: LiveRun, run_request) -> None:
        assert self.blobs is not None
        await run_turn(
            live,
            run_request,
            blobs=self.blobs,
            agent=self.agent(),
            ack_timeout=self.ack_timeout,
        )

    # --- flows ----------------------------------------------------------------------------

    def _ours(self, flow: http.HTTPFlow) -> str | None:
        """Which of our RPCs this flow is, if any."""
        request = flow.request
        path = request.path.split("?")[0]
        if request.method != "POST" or path not in AGENT_PATHS:
            return None
        reverse = any(str(m).startswith("reverse:") for m in ctx.options.mode)
        if not reverse and not host_matches(request.pretty_host, ctx.options.cursor_byok_hosts):
            return None
        return path

    def _owner(self, request: http.Request) -> bytes:
        """A keyed hash of the client's credential: runs are bound to it, it is never stored."""
        token = request.headers.get("authorization", "")
        if not token:
            return b""
        return hmac.new(self._owner_key, token.encode(), hashlib.sha256).digest()[:16]

    async def _wait_ready(self) -> str | None:
        """Wait (bounded) until the streamer runs; the reason it cannot serve, or None."""
        if not self._ready.is_set():
            try:
                async with asyncio.timeout(self.startup_wait):
                    await self._ready.wait()
            except TimeoutError:
                return "cursor-byok is still starting; try again"
        return self._start_error

    async def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live:
            return
        path = self._ours(flow)
        if path is None:
            return
        flow.metadata[PATH_KEY] = path
        request = flow.request
        if path == RUN_PATH:
            self._note_activity(flow, path)
        unsupported = _unsupported_content_type(path, request)
        if unsupported and path != RUN_PATH:
            log.warning("%s: %s", path.rsplit("/", 1)[-1], unsupported)
            flow.response = connect_error_response("invalid_argument", unsupported)
            return
        too_large = _declared_size(request) > MAX_BODY
        if path != RUN_PATH and not too_large:
            return  # unary-ish bodies stay buffered; handled in `request`
        problem = await self._wait_ready()
        if problem is not None:
            flow.response = self._error(flow, "unavailable", problem)
            return
        if unsupported:
            log.warning("Run: %s", unsupported)
            self._answer_from_loopback(flow, "invalid_argument", unsupported, stream=True)
            return
        if too_large:
            log.warning("%s: request body of %d bytes refused", path, _declared_size(request))
            self._answer_from_loopback(
                flow, "resource_exhausted", "request body too large", stream=path == RUN_PATH
            )
            return
        try:
            self._open_run_stream(flow)
        except ByokError as exc:
            log.warning("Run rejected: %s", exc)
            code, message = exc.code, str(exc)
            _forget(exc)
            self._answer_from_loopback(flow, code, message, stream=True)

    async def request(self, flow: http.HTTPFlow) -> None:
        path = flow.metadata.get(PATH_KEY)
        upload = flow.metadata.get(UPLOAD_KEY)
        if upload is not None:
            upload.close()  # with request streaming this hook fires when the upload ends
            return
        if flow.response or flow.error or not flow.live:
            return
        if path is None:
            path = self._ours(flow)
        if path == RUN_PATH or flow.metadata.get(LOOPBACK_KEY):
            return
        self._note_activity(flow, path)
        if path is None:
            return
        problem = await self._wait_ready()
        if problem is not None:
            flow.response = self._error(flow, "unavailable", problem)
            return
        try:
            if path == BIDI_APPEND_PATH:
                request = flow.request
                append = decode_bidi_append(
                    self._body(request), request.headers.get("content-type")
                )
                if await self._append_route(append) == CURSOR:
                    self._pass_through(flow, path, append.request_id)
                    return
                self._bidi_append(flow, append)
            else:
                self._run_sse(flow)
        except ByokError as exc:
            log.warning("%s rejected: %s", path.rsplit("/", 1)[-1], exc)
            code, message = exc.code, str(exc)
            _forget(exc)  # before Response.make: see _forget
            flow.response = self._error(flow, code, message)
        except Exception:
            # Never let an Agent RPC fall through to Cursor's servers because we failed.
            log.exception("cursor-byok failed on %s", path)
            flow.response = self._error(flow, "internal", "cursor-byok internal error")
        finally:
            self._collect_after(len(flow.request.raw_content or b""))

    def _collect_after(self, size: int) -> None:
        """Run a full GC once every GC_EVERY bytes of large bodies.

        mitmproxy's Request/Response constructors leave reference cycles through their frames,
        so every large body stays in memory until a full collection, which CPython rarely runs
        on its own: a flood of 1 MiB uploads grew the proxy by 200 MiB. A full GC costs tens of
        milliseconds, so it runs once per GC_EVERY bytes of bodies (a flood stays bounded; a
        normal turn, with one or two large uploads, rarely pays it)."""
        if size < LARGE_BODY:
            return
        self._large_bytes += size
        if self._large_bytes >= GC_EVERY:
            self._large_bytes = 0
            gc.collect()

    def _error(self, flow: http.HTTPFlow, code: str, message: str) -> http.Response:
        """A unary error answer in the client's protocol."""
        if _is_grpc_web(flow.request):
            headers = {"content-type": "application/grpc-web+proto"}
            headers.update(connect.grpc_web_trailers(connect.EndStreamError(code, message)))
            return http.Response.make(200, b"", headers)
        return connect_error_response(code, message)

    def _note_activity(self, flow: http.HTTPFlow, path: str | None) -> None:
        """Record Cursor calls for `cursor-byok doctor`, which reads them from the data dir."""
        if self.activity is None:
            return
        if path is not None:
            route = route_label(ctx.options.mode, flow.request.http_version)
            transport = "Run (HTTP/2 stream)" if path == RUN_PATH else path.rsplit("/", 1)[-1]
            self.activity.note("agent", transport, route)
        elif host_matches(flow.request.pretty_host, ctx.options.cursor_byok_hosts):
            self.activity.note("other")

    def _body(self, request: http.Request) -> bytes:
        """The request body, its HTTP compression undone by our bounded decoder (never
        mitmproxy's, which inflates without limit and caches the result)."""
        raw = request.raw_content or b""
        encoding = request.headers.get("content-encoding")
        try:
            return connect.decompress(raw, encoding, limit=MAX_BODY)
        except connect.ConnectError as exc:
            raise BadFraming(f"request body: {exc}") from None

    async def _append_route(self, append) -> str:
        """The route of this append's run; the run request decides it, other appends of a run
        not yet decided wait for it (bounded; then they go to Cursor as they came)."""
        assert self.registry is not None
        message = append.message
        if message is not None and message.WhichOneof("message") == "run_request":
            return self._decide(append.request_id, message.run_request)
        route = self.routes.get(append.request_id)
        if route is not None:
            return route
        if self.registry.run_for(append.request_id) is not None or not self._may_pass():
            return LOCAL
        if self.routes.waiting >= MAX_ROUTE_WAITERS:
            return LOCAL  # bounded: a flood of appends for unknown ids is not held in memory
        route = await self.routes.wait(append.request_id, self.route_wait)
        # No run request within the wait: this id goes to Cursor from now on, so its later
        # appends do not wait again (and a run split across both sides cannot happen).
        return route or self.routes.decide(append.request_id, CURSOR)

    def _pass_through(self, flow: http.HTTPFlow, path: str, request_id: str) -> None:
        """Leave the flow as the client sent it: it goes to Cursor's backend."""
        flow.metadata[METADATA_KEY] = request_id
        flow.metadata[PASS_KEY] = True
        log.debug("%s %s → Cursor's backend", path.rsplit("/", 1)[-1], request_id)

    def _bidi_append(self, flow: http.HTTPFlow, append) -> None:
        assert self.registry is not None
        request = flow.request
        flow.metadata[METADATA_KEY] = append.request_id
        kind = append.message.WhichOneof("message") if append.message else None
        log.debug("BidiAppend %s seq %d: %s", append.request_id, append.seqno, kind)
        if self.recorder is not None:  # before the turn it may start emits anything
            self.recorder.client(append.request_id, append.seqno, append.raw, dict(request.headers))
        self.registry.receive(
            append.request_id,
            append.seqno,
            append.message,
            raw=append.raw,
            owner=self._owner(request),
        )
        del append  # see _forget: Response.make must not find the body on this frame
        if _is_grpc_web(request):
            body = connect.encode_frame(b"") + connect.encode_grpc_web_trailer(None)
            flow.response = http.Response.make(
                200, body, {"content-type": "application/grpc-web+proto"}
            )
        else:
            flow.response = http.Response.make(200, b"", {"content-type": "application/proto"})

    def _run_sse(self, flow: http.HTTPFlow) -> None:
        assert self.registry is not None
        request = flow.request
        grpc_web = _is_grpc_web(request)
        request_id = decode_run_sse_request(
            self._body(request), request.headers.get("content-type") or "application/connect+proto"
        )
        route = self.routes.get(request_id)
        if route == CURSOR:
            self._pass_through(flow, RUN_SSE_PATH, request_id)
            log.info("RunSSE %s → Cursor's backend", request_id)
            return
        forward = ""
        if route is None and self.registry.run_for(request_id) is None and self._may_pass():
            # Its run request has not come yet (Cursor opens RunSSE first, and may wait for
            # its response head before it sends it): serve the head from the loopback now;
            # the streamer relays it to Cursor if the run turns out to be on a Cursor model.
            assert self.streamer is not None
            forward = self.streamer.hold_forward(
                _forward_of(request, body=request.raw_content or b"")
            )
        owner = self._owner(request)
        self.registry.core.attempt(request_id, owner=owner, now=self.registry.clock())
        flow.metadata[METADATA_KEY] = request_id
        accept = request.headers.get(
            "grpc-accept-encoding" if grpc_web else "connect-accept-encoding"
        )
        spec = StreamSpec(
            request_id,
            owner=owner,
            encoding=connect.pick_encoding(accept),
            content_type="application/grpc-web+proto" if grpc_web else "text/event-stream",
            grpc_web=grpc_web,
            forward=forward,
        )
        self._to_loopback(flow, spec)
        request.headers["content-length"] = str(len(request.raw_content or b""))
        log.info("RunSSE %s opened", request_id)

    def _open_run_stream(self, flow: http.HTTPFlow) -> None:
        """`Run`: stream the upload into the attempt, serve the response from the loopback."""
        assert self.registry is not None
        request = flow.request
        headers = request.headers
        request_id = headers.get("x-request-id") or headers.get("x-original-request-id")
        request_id = validate_request_id(request_id) if request_id else f"run-{uuid.uuid4()}"
        grpc_web = _is_grpc_web(request)
        encoding_header = "grpc-encoding" if grpc_web else "connect-content-encoding"
        try:
            upload_encoding = connect.normalise_encoding(headers.get(encoding_header))
        except connect.ConnectError as exc:
            raise BadFraming(str(exc)) from None
        owner = self._owner(request)
        self.registry.core.attempt(
            request_id, owner=owner, now=self.registry.clock(), transport="run"
        )
        forward = ""
        pipe: asyncio.Queue | None = None
        known = self.routes.get(request_id)
        if known == CURSOR or (known is None and self._may_pass()):
            # The first envelope says which model; the upstream is fixed by now (before any
            # body), so if it is Cursor's the streamer itself relays the stream to Cursor.
            assert self.streamer is not None
            pipe = asyncio.Queue()
            forward = self.streamer.hold_forward(
                _forward_of(
                    request,
                    body=b"",
                    upload=pipe,
                    authority=request.authority or request.host_header or "",
                )
            )
        opened = "HTTP/{}{}".format(
            "2" if request.is_http2 else "1.1",
            ", x-blob-encryption-key present" if "x-blob-encryption-key" in headers else "",
        )
        upload = RunUpload(
            self.registry,
            request_id,
            owner,
            upload_encoding,
            self.recorder,
            pipe=pipe,
            decide=self._decide_first if pipe is not None else None,
            opened=opened,
        )
        flow.metadata[METADATA_KEY] = request_id
        flow.metadata[UPLOAD_KEY] = upload
        accept = headers.get("grpc-accept-encoding" if grpc_web else "connect-accept-encoding")
        content_type = "application/grpc-web+proto" if grpc_web else "application/connect+proto"
        spec = StreamSpec(
            request_id,
            owner=owner,
            encoding=connect.pick_encoding(accept),
            content_type=content_type,
            grpc_web=grpc_web,
            transport="run",
            forward=forward,
        )
        request.stream = upload
        self._to_loopback(flow, spec)
        request.headers["content-length"] = "0"  # the loopback hop carries no body
        if pipe is None:
            log.info("Run %s opened (%s)", request_id, opened)
        else:  # the route line says it (or the upload, if it ends before its first message)
            log.debug("Run %s opened (%s)", request_id, opened)

    def _answer_from_loopback(self, flow: http.HTTPFlow, code: str, message: str, stream: bool):
        """An error answer for a flow whose body we must not buffer: the loopback sends it."""
        assert self.streamer is not None
        spec = StreamSpec("", error=(code, message), error_stream=stream)
        flow.request.stream = _discard
        self._to_loopback(flow, spec)
        flow.request.headers["content-length"] = "0"

    def _to_loopback(self, flow: http.HTTPFlow, spec: StreamSpec) -> None:
        assert self.streamer is not None and self.ports is not None
        request = flow.request
        for name in ("transfer-encoding", "authorization", "cookie", "x-blob-encryption-key"):
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
        self.loopback_log.opened(flow.client_conn.peername)
        flow.metadata[LOOPBACK_KEY] = True

    def _loopback_done(self, flow: http.HTTPFlow) -> None:
        port = flow.metadata.pop(PORT_KEY, None)
        if port is not None and self.ports is not None:
            self.ports.give(flow.client_conn.id, port)
            self.loopback_log.closed(flow.client_conn.peername)

    def client_disconnected(self, client: connection.Client) -> None:
        if self.ports is not None:
            self.ports.forget(client.id)
        self.loopback_log.forget(client.peername)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(PASS_KEY) and flow.response is not None:
            flow.response.stream = True  # Cursor's own stream: relayed as it comes, never held
            return
        if not flow.metadata.get(LOOPBACK_KEY) or flow.response is None:
            return
        flow.response.stream = True
        for name in ("server", "date"):
            flow.response.headers.pop(name, None)

    def response(self, flow: http.HTTPFlow) -> None:
        self._loopback_done(flow)
        # mitmproxy withholds an HTTP/2 stream's END_STREAM while the client's upload is open
        # unless the response has trailers (mitmproxy.md §3.3); Cursor keeps `Run` uploads open.
        if (
            flow.metadata.get(LOOPBACK_KEY)
            and flow.response is not None
            and flow.request.is_http2
            and not flow.response.trailers
        ):
            flow.response.trailers = http.Headers([(b"x-cursor-byok", b"end")])

    def error(self, flow: http.HTTPFlow) -> None:
        self._loopback_done(flow)
        request_id = flow.metadata.get(METADATA_KEY)
        if request_id and flow.metadata.get(LOOPBACK_KEY):
            path = flow.metadata.get(PATH_KEY, "")
            log.info(
                "%s %s: client went away (%s)", path.rsplit("/", 1)[-1], request_id, flow.error
            )
        upload = flow.metadata.get(UPLOAD_KEY)
        if upload is not None:
            upload.abandon()


_CONTENT_TYPES = {
    BIDI_APPEND_PATH: ("application/proto", "application/connect+proto", "application/grpc-web"),
    RUN_SSE_PATH: ("application/connect+proto", "application/grpc-web"),
    RUN_PATH: ("application/connect+proto", "application/grpc-web"),
}


def _unsupported_content_type(path: str, request: http.Request) -> str | None:
    """Why we cannot answer this content type (Connect or gRPC-Web protobuf), or None."""
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if not ctype or ctype.startswith(_CONTENT_TYPES[path]):
        return None
    return f"unsupported content type {ctype!r}: cursor-byok speaks Connect and gRPC-Web protobuf"


def _forward_of(request: http.Request, **extra) -> Forward:
    """What the streamer needs to send this request on to Cursor itself, should its run be on
    a Cursor model (the original target and headers, `authorization` included)."""
    return Forward(
        scheme=request.scheme,
        host=request.host,
        port=request.port,
        sni=request.pretty_host,
        path=request.path,
        headers=tuple(request.headers.fields),
        **extra,
    )


def _forget(exc: BaseException) -> None:
    """Drop what a refused request's traceback holds (its body, parsed several times over).

    mitmproxy's `Response.make` type-checks through an exception it catches, which leaves a
    reference cycle through the calling frames (`f_back`): any body still reachable from those
    frames then lives until the next full GC, megabytes per request under a flood."""
    while exc is not None:
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
            exc.__traceback__ = None
        exc = exc.__context__  # type: ignore[assignment]


def _discard(chunk: bytes) -> list[bytes]:
    return []


def _declared_size(request: http.Request) -> int:
    try:
        return int(request.headers.get("content-length", "0"))
    except ValueError:
        return 0


def _is_grpc_web(request: http.Request) -> bool:
    return (request.headers.get("content-type") or "").lower().startswith("application/grpc-web")


class RunUpload:
    """The request body of one `Run` stream, chunk by chunk: envelopes → client messages.

    mitmproxy calls it with every chunk the client sends (`request.stream`); nothing goes
    upstream. Bad input ends this attempt's stream with a Connect error; the proxy goes on.
    With `decide`, the first client message picks the route: served here (as above), or
    Cursor's backend, when every byte (those already read, then each chunk as it comes) goes
    unparsed into `pipe` for the streamer to relay (None marks the end of the upload).
    """

    def __init__(
        self,
        registry: SessionRegistry,
        request_id: str,
        owner: bytes,
        encoding,
        recorder,
        *,
        pipe: asyncio.Queue | None = None,
        decide=None,
        opened: str = "",
    ) -> None:
        self.registry = registry
        self.request_id = request_id
        self.owner = owner
        self.recorder = recorder
        self.decoder = connect.EnvelopeDecoder(encoding=encoding)
        self.failed = False
        self.messages = 0
        self.pipe = pipe
        self.decide = decide
        self.route: str | None = None if decide is not None else LOCAL
        self.read = bytearray()  # raw upload bytes until the route is known
        self.opened = opened  # how the stream came (HTTP version...), for the route line

    def __call__(self, chunk: bytes) -> list[bytes]:
        if not chunk or self.failed:
            return []
        if self.route == CURSOR:
            assert self.pipe is not None
            self.pipe.put_nowait(bytes(chunk))
            return []
        if self.route is None:
            self.read += chunk
        try:
            for frame in self.decoder.feed(chunk):
                if frame.is_end_stream:
                    continue  # a client end-stream closes its side; nothing to do
                message = parse_client_message(frame.payload)
                if self.route is None:
                    self.route = self.decide(self.request_id, message, self.opened)
                    if self.route == CURSOR:
                        assert self.pipe is not None
                        self.pipe.put_nowait(bytes(self.read))
                        self.read = bytearray()
                        return []
                    self.read = bytearray()
                if self.recorder is not None:
                    self.recorder.client(self.request_id, self.messages, frame.payload, {})
                self.messages += 1
                self.registry.receive(
                    self.request_id,
                    None,
                    message,
                    raw=frame.payload,
                    owner=self.owner,
                    transport="run",
                )
        except ByokError as exc:
            self._fail(exc.code, f"Run request stream: {exc}")
            _forget(exc)
        except Exception:
            log.exception("Run %s: upload failed", self.request_id)
            self._fail("internal", "cursor-byok internal error")
        return []

    def _fail(self, code: str, message: str) -> None:
        self.failed = True
        log.warning("Run %s: %s", self.request_id, message)
        self.registry.close_attempt(self.request_id, connect.EndStreamError(code, message))

    def _unrouted(self) -> None:
        """The upload ends before its first message: say the stream opened (the route line,
        which would have said it, never comes)."""
        if self.route is None and self.opened:
            log.info("Run %s opened (%s), no run request", self.request_id, self.opened)
            self.opened = ""

    def close(self) -> None:
        """The client closed its upload: fine between envelopes, an error inside one."""
        self._unrouted()
        if self.pipe is not None and self.route != LOCAL:
            self.pipe.put_nowait(None)  # relayed (or not decided yet): end Cursor's upload too
            return
        if not self.failed and self.decoder.buffered:
            self._fail("invalid_argument", "Run request stream ended inside an envelope")

    def abandon(self) -> None:
        self._unrouted()
        self.failed = True
        if self.pipe is not None and self.route == CURSOR:
            self.pipe.put_nowait(RELAY_RESET)
