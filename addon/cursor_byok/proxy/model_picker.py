"""The model-picker addon: put the configured models into Cursor's model pickers.

The catalog itself (entries, merging, wire formats) is pure and lives in
`cursor_byok.config.catalog`, so the agent can look models up without importing mitmproxy.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from google.protobuf.message import DecodeError
from mitmproxy import ctx
from mitmproxy import http
from mitmproxy.proxy import server_hooks

from cursor_byok.config import Config
from cursor_byok.config import ConfigError
from cursor_byok.config import ConfigSource
from cursor_byok.config.catalog import CACHE_ENTRIES
from cursor_byok.config.catalog import METADATA_KEY
from cursor_byok.config.catalog import OFFLINE_RETRY_SECONDS
from cursor_byok.config.catalog import UnsupportedBody
from cursor_byok.config.catalog import classify
from cursor_byok.config.catalog import is_rest_models
from cursor_byok.config.catalog import local_answer
from cursor_byok.config.catalog import merge
from cursor_byok.config.catalog import merge_body
from cursor_byok.config.catalog import rest_models_body
from cursor_byok.config.catalog import wire_format
from cursor_byok.proxy import options
from cursor_byok.proxy import unary
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.hosts import cursor_hostname
from cursor_byok.proxy.reachability import PROBE_TIMEOUT
from cursor_byok.proxy.reachability import Probe
from cursor_byok.proxy.reachability import Reachability
from cursor_byok.proxy.reachability import tcp_probe

log = logging.getLogger(__name__)

__all__ = ["PROBE_TIMEOUT", "ModelPicker", "Probe", "tcp_probe"]


# --- the addon ----------------------------------------------------------------------------------


class ModelPicker:
    """Merges (or answers) Cursor's model-picker calls with the configured models.

    Never breaks the picker: a broken config, a body we cannot parse, a non-2xx answer or a
    streamed response all pass through unchanged. Needs `connection_strategy=lazy`.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        probe: Probe = tcp_probe,
        reach: Reachability | None = None,
    ) -> None:
        # Cursor's reachability, shared with the other calls answered offline (compose.py); this
        # addon's server-connection hooks keep it current.
        self.reach = reach if reach is not None else Reachability(clock, probe)
        self._source: ConfigSource | None = None
        self._config_problem: str | None = None
        self._cache: OrderedDict[tuple[str, bytes], bytes] = OrderedDict()  # plain proto
        self._said_offline: set[tuple[str, int]] = set()  # hosts whose going offline was logged
        self.stats = {"merged": 0, "answered": 0, "passed": 0}

    def load(self, loader) -> None:
        options.declare(
            loader, "cursor_byok_models_mode", "cursor_byok_config", "cursor_byok_hosts"
        )

    def configure(self, updated: set[str]) -> None:
        mine = options.changed(
            ctx.options, updated, "cursor_byok_models_mode", "cursor_byok_config"
        )
        if "cursor_byok_models_mode" in mine:
            self.reach.clear()
        if mine and ctx.options.cursor_byok_models_mode != "off":
            self.config()

    # --- config -----------------------------------------------------------------------------

    def config(self) -> Config | None:
        """The current config, or None when it is broken (logged once per distinct problem)."""
        path = options.config_path(ctx.options)
        if self._source is None or self._source.path != path:
            self._source = ConfigSource(path)
        try:
            config = self._source.get()
        except ConfigError as exc:
            if str(exc) != self._config_problem:
                self._config_problem = str(exc)
                # A warning, not an error: mitmdump exits on errors logged during startup, and
                # the proxy must keep running while the user fixes the file.
                log.warning("model picker: %s; Cursor's model lists pass through unchanged", exc)
            return None
        if self._config_problem is not None:
            self._config_problem = None
            log.info("model picker: config fixed; models %s", ", ".join(config.model_names()))
        return config

    # --- flows ------------------------------------------------------------------------------

    def _picker_call(self, flow: http.HTTPFlow) -> str | None:
        method = classify(flow.request.path)
        if method is None or not cursor_host(flow):
            return None
        return method

    def _rest_call(self, flow: http.HTTPFlow) -> bool:
        """Cursor's REST model list (`GET /v1/models`), which the SDK checks model names with."""
        request = flow.request
        return is_rest_models(request.method, request.path) and cursor_host(flow)

    def _answer_rest(
        self, flow: http.HTTPFlow, config: Config, upstream: bytes | None, how: str
    ) -> None:
        """Answer `GET /v1/models` with the configured models (added to Cursor's list when
        `upstream` is one). Cursor's API host itself has no such path, so without this an SDK
        agent on a BYOK model could not even be created."""
        flow.response = http.Response.make(
            200, rest_models_body(config, upstream), {"content-type": "application/json"}
        )
        flow.metadata[METADATA_KEY] = how
        self.stats["merged" if upstream is not None else "answered"] += 1
        log.info(
            "model picker: %s: %s, %d configured model(s)",
            flow.request.path,
            how,
            len(config.models),
        )

    async def _unreachable(self, flow: http.HTTPFlow) -> bool:
        """Whether Cursor's API host for this picker call cannot be reached right now (probed
        first unless a connection is open; `reachability.py`). Picker calls are rare, so the
        probe costs little; when it fails this call is answered here at once, and so are the
        next ones until `OFFLINE_RETRY_SECONDS` pass."""
        key = (flow.request.host, flow.request.port)
        offline = await self.reach.unreachable(flow)
        if offline and self.reach.offline(key) and key not in self._said_offline:
            self._said_offline.add(key)
            self._log_offline(key, "probe connection failed")
        return offline

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live:
            return
        mode = ctx.options.cursor_byok_models_mode
        if mode == "off":
            return
        rest = self._rest_call(flow)
        method = None if rest else self._picker_call(flow)
        if method is None and not rest:
            return
        offline = mode == "merge" and await self._unreachable(flow)
        if mode == "merge" and not offline:
            return  # go upstream; merged in `response`
        if flow.response or flow.error or not flow.live:
            return  # settled while we probed
        config = self.config()
        if config is None:
            self.stats["passed"] += 1
            return
        if rest or method is None:
            self._answer_rest(flow, config, None, "offline" if offline else "replace")
            return
        request = flow.request
        fmt = wire_format(request.headers.get("content-type"))
        if request.method == "GET":  # Connect GET: the codec is a query parameter
            fmt = "json" if request.query.get("encoding") == "json" else "proto"
        cached = self._cache.get(self._cache_key(flow)) if offline else None
        body, ctype = self._local_body(method, config, fmt, cached)
        unary.answer_bytes(flow, body, ctype)
        flow.metadata[METADATA_KEY] = "offline" if offline else "replace"
        self.stats["answered"] += 1
        log.info(
            "model picker: answered %s locally (%s, %d model(s)%s)",
            request.path,
            "Cursor unreachable" if offline else "replace mode",
            len(config.models),
            ", with Cursor's last list" if cached is not None else "",
        )

    def _local_body(
        self, method: str, config: Config, fmt: str, cached: bytes | None
    ) -> tuple[bytes, str]:
        if cached is not None and fmt == "proto":
            try:
                return merge(method, cached, config), "application/proto"
            except DecodeError:
                pass
        return unary.encode(local_answer(method, config), fmt)

    @staticmethod
    def _cache_key(flow: http.HTTPFlow) -> tuple[str, bytes]:
        path = flow.request.path.split("?", 1)[0]
        return path, hashlib.sha256(flow.request.raw_content or b"").digest()

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.error or not flow.live or flow.response is None:
            return
        if METADATA_KEY in flow.metadata or ctx.options.cursor_byok_models_mode != "merge":
            return  # our own local answer, or not merging
        if self._rest_call(flow):
            self._merge_rest(flow)
            return
        method = self._picker_call(flow)
        if method is None:
            return
        response = flow.response
        path = flow.request.path
        if not 200 <= response.status_code < 300:
            log.info("model picker: %s answered %d; passed through", path, response.status_code)
            return
        if response.stream or response.raw_content is None:
            log.warning("model picker: %s was streamed; cannot add our models", path)
            return
        config = self.config()
        if config is None:
            self.stats["passed"] += 1
            return
        try:
            body = response.content or b""
            ctype = response.headers.get("content-type")
            merged = merge_body(
                method,
                body,
                config,
                content_type=ctype,
                envelope_encoding=response.headers.get("connect-content-encoding"),
            )
        except (UnsupportedBody, ValueError) as exc:
            self.stats["passed"] += 1
            log.warning("model picker: %s: %s; passed through without our models", path, exc)
            return
        if wire_format(ctype) == "proto":
            self._remember(flow, body)
        response.content = merged
        flow.metadata[METADATA_KEY] = "merged"
        self.stats["merged"] += 1
        log.info("model picker: %s: merged %d configured model(s)", path, len(config.models))

    def _merge_rest(self, flow: http.HTTPFlow) -> None:
        """Cursor's answer to `GET /v1/models`: merged when it is a list, else replaced by ours
        (its API host answers 404 there; the SDK then refuses every model)."""
        config = self.config()
        response = flow.response
        if config is None or response is None:
            return
        listed = 200 <= response.status_code < 300 and not response.stream
        body = response.content if listed else None
        how = "merged" if listed else f"Cursor answered {response.status_code}; answered locally"
        self._answer_rest(flow, config, body, how)

    def _remember(self, flow: http.HTTPFlow, body: bytes) -> None:
        """Keep Cursor's last answer per call, so offline answers still list Cursor's models."""
        key = self._cache_key(flow)
        self._cache[key] = body
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)

    # --- upstream reachability (merge mode) -------------------------------------------------

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        """Remember a Cursor host we could not reach (e.g. it went down after a probe said it
        was up): the failing flow itself already got mitmproxy's 502, but the next calls to it
        are answered locally until `OFFLINE_RETRY_SECONDS` pass."""
        address = data.server.address
        if address is None or not cursor_hostname(address[0]):
            return
        key = (address[0], address[1])
        if self.reach.mark_offline(key) and ctx.options.cursor_byok_models_mode == "merge":
            self._said_offline.add(key)
            self._log_offline(key, data.server.error or "connection failed")

    def _log_offline(self, key: tuple[str, int], why: str) -> None:
        log.warning(
            "model picker: cannot reach %s:%d (%s); answering model-picker calls locally "
            "with the configured models for %ds",
            key[0],
            key[1],
            why,
            OFFLINE_RETRY_SECONDS,
        )

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        address = data.server.address
        if address is None:
            return
        key = (address[0], address[1])
        self._said_offline.discard(key)
        if self.reach.connected(key):
            log.info("model picker: %s:%d reachable again", address[0], address[1])

    def server_disconnected(self, data: server_hooks.ServerConnectionHookData) -> None:
        address = data.server.address
        if address is not None:
            self.reach.disconnected((address[0], address[1]))
