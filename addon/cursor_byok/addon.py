"""The mitmproxy addon: recognise Cursor's Agent RPCs, answer BidiAppend, stream RunSSE.

Everything that is not one of our paths passes through untouched. The two Agent paths never go
upstream: BidiAppend is answered in the `request` hook, RunSSE is pointed at the in-process
loopback streamer and streamed back (mitmproxy.md §3).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from mitmproxy import ctx
from mitmproxy import exceptions
from mitmproxy import http

from cursor_byok import connect
from cursor_byok.agent.loop import CUSTOM_MESSAGE
from cursor_byok.agent.loop import ProviderAgent
from cursor_byok.agent.scripted import ScriptedAgent
from cursor_byok.bidi import BidiDecodeError
from cursor_byok.bidi import decode_bidi_append
from cursor_byok.bidi import decode_run_sse_request
from cursor_byok.blobs import BlobStore
from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config import default_config_path
from cursor_byok.doctor import ACTIVITY_FILE
from cursor_byok.hosts import DEFAULT_HOSTS
from cursor_byok.hosts import host_matches
from cursor_byok.providers.pool import ProviderPool
from cursor_byok.session import SessionConfig
from cursor_byok.sessions import LiveSession
from cursor_byok.sessions import SessionRegistry
from cursor_byok.sessions import TurnCancelled
from cursor_byok.streamer import ENCODING_HEADER
from cursor_byok.streamer import STREAM_HEADER
from cursor_byok.streamer import Streamer
from cursor_byok.turn import Agent
from cursor_byok.turn import Turn
from cursor_byok.turn import TurnError
from cursor_byok.turn import run_turn

log = logging.getLogger(__name__)

BIDI_APPEND_PATH = "/aiserver.v1.BidiService/BidiAppend"
RUN_SSE_PATH = "/agent.v1.AgentService/RunSSE"
METADATA_KEY = "cursor_byok"
AGENTS = ("provider", "scripted")


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


class CursorByok:
    """Options, flow classification and the hooks; the work happens in sessions and turns."""

    def __init__(self, agent: Agent | None = None) -> None:
        self._agent = agent
        self.registry: SessionRegistry | None = None
        self.streamer: Streamer | None = None
        self.blobs: BlobStore | None = None
        self._ready: asyncio.Event | None = None
        self._tasks: set[asyncio.Task] = set()
        self._config: ConfigSource | None = None
        self.recorder = None  # capture.Recorder while recording
        self.providers = ProviderPool()  # provider clients shared across turns
        self.activity: dict[str, int | str] = {"agent_calls": 0, "other_cursor_calls": 0}
        self._activity_written = 0.0

    # --- lifecycle (sync, so hot reload of `-s` scripts keeps working) ------------------------

    def load(self, loader) -> None:
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
        for name in ("cursor_byok_heartbeat_ms", "cursor_byok_grace_ms"):
            if getattr(opts, name) <= 0:
                raise exceptions.OptionsError(f"{name} must be positive")
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
        )
        if self.registry is None:
            self.registry = SessionRegistry(self._run_turn, config=session_config)
        else:
            self.registry.config = session_config
        if "cursor_byok_record_dir" in updated:
            self._configure_recorder(opts.cursor_byok_record_dir)
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
            from cursor_byok.capture import Recorder

            try:
                self.recorder = Recorder(Path(directory).expanduser())
            except OSError as exc:
                raise exceptions.OptionsError(f"cursor_byok_record_dir: {exc}") from None
            log.info("recording Agent turns into %s", directory)
        assert self.registry is not None
        self.registry.recorder = self.recorder

    def running(self) -> None:
        if self._ready is not None:
            return
        self._ready = asyncio.Event()
        self._spawn(self._start())

    async def _start(self) -> None:
        assert self.registry is not None
        self.streamer = Streamer(self.registry)
        await self.streamer.start()
        self.registry.start()
        assert self._ready is not None
        self._ready.set()
        log.info("cursor-byok ready (RunSSE streamer on 127.0.0.1:%d)", self.streamer.port)

    def done(self) -> None:
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

    async def _run_turn(self, live: LiveSession, run_request) -> None:
        assert self.registry is not None and self.blobs is not None
        if run_request.conversation_id:
            for other in self.registry.running_for(run_request.conversation_id):
                if other is not live:
                    other.interrupt(TurnCancelled("superseded by a newer message"))
        await run_turn(live, run_request, blobs=self.blobs, agent=self.agent())

    # --- flows ----------------------------------------------------------------------------

    def _ours(self, flow: http.HTTPFlow) -> str | None:
        """Which of our RPCs this flow is, if any."""
        request = flow.request
        if request.method != "POST" or request.path.split("?")[0] not in (
            BIDI_APPEND_PATH,
            RUN_SSE_PATH,
        ):
            return None
        reverse = any(str(m).startswith("reverse:") for m in ctx.options.mode)
        if not reverse and not host_matches(request.pretty_host, ctx.options.cursor_byok_hosts):
            return None
        return request.path.split("?")[0]

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live:
            return
        path = self._ours(flow)
        self._note_activity(flow, path)
        if path is None:
            return
        if self._ready is not None:
            await self._ready.wait()
        try:
            if path == BIDI_APPEND_PATH:
                self._bidi_append(flow)
            else:
                self._run_sse(flow)
        except Exception:
            # Never let an Agent RPC fall through to Cursor's servers because we failed.
            log.exception("cursor-byok failed on %s", path)
            flow.response = connect_error_response("internal", "cursor-byok internal error")

    def _note_activity(self, flow: http.HTTPFlow, path: str | None) -> None:
        """Count Cursor calls for `cursor-byok doctor`, which reads them from the data dir."""
        if path is not None:
            self.activity["agent_calls"] += 1
            self.activity["last_agent_call"] = time.strftime("%Y-%m-%d %H:%M:%S")
        elif host_matches(flow.request.pretty_host, ctx.options.cursor_byok_hosts):
            self.activity["other_cursor_calls"] += 1
        else:
            return
        now = time.monotonic()
        if now - self._activity_written < 1.0:
            return
        self._activity_written = now
        try:
            target = Path(ctx.options.cursor_byok_data_dir).expanduser() / ACTIVITY_FILE
            target.write_text(json.dumps(self.activity))
        except OSError as exc:
            log.debug("cannot write the activity file: %s", exc)

    def _bidi_append(self, flow: http.HTTPFlow) -> None:
        assert self.registry is not None
        request = flow.request
        try:
            append = decode_bidi_append(
                request.get_content(strict=False) or b"",
                request.headers.get("content-type"),
            )
        except BidiDecodeError as exc:
            log.warning("BidiAppend rejected: %s", exc)
            flow.response = connect_error_response(exc.code, str(exc))
            return
        flow.metadata[METADATA_KEY] = append.request_id
        live = self.registry.get_or_create(append.request_id)
        kind = append.message.WhichOneof("message") if append.message else None
        log.debug("BidiAppend %s seq %d: %s", append.request_id, append.seqno, kind)
        if self.recorder is not None:
            self.recorder.client(append.request_id, append.seqno, append.raw, dict(request.headers))
        live.receive(append.seqno, append.message, size=len(append.raw))
        flow.response = http.Response.make(200, b"", {"content-type": "application/proto"})

    def _run_sse(self, flow: http.HTTPFlow) -> None:
        assert self.registry is not None and self.streamer is not None
        request = flow.request
        try:
            request_id = decode_run_sse_request(
                request.get_content(strict=False) or b"",
                request.headers.get("content-type") or "application/connect+proto",
            )
        except BidiDecodeError as exc:
            log.warning("RunSSE rejected: %s", exc)
            flow.response = connect_error_response(exc.code, str(exc))
            return
        self.registry.get_or_create(request_id)
        flow.metadata[METADATA_KEY] = request_id
        encoding = connect.pick_encoding(request.headers.get("connect-accept-encoding"))
        request.headers[STREAM_HEADER] = self.streamer.header_value(request_id)
        request.headers[ENCODING_HEADER] = encoding or ""
        for name in ("transfer-encoding", "authorization", "cookie"):
            request.headers.pop(name, None)
        request.headers["content-length"] = str(len(request.raw_content or b""))
        request.scheme = "http"
        request.host = "127.0.0.1"
        request.port = self.streamer.port
        log.info("RunSSE %s opened", request_id)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if METADATA_KEY not in flow.metadata or flow.request.path != RUN_SSE_PATH:
            return
        if flow.response is None:
            return
        flow.response.stream = True
        for name in ("server", "date"):
            flow.response.headers.pop(name, None)

    def error(self, flow: http.HTTPFlow) -> None:
        request_id = flow.metadata.get(METADATA_KEY)
        if request_id and flow.request.path == RUN_SSE_PATH:
            log.info("RunSSE %s: client went away (%s)", request_id, flow.error)
