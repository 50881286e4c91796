"""An addon that keeps the activity record `cursor-byok doctor` reads: which Cursor calls reach the
proxy, on which transport and route, and the RPC census (`activity.json` in the data dir, private
to the user; `store/census.py`).

Every Cursor call is counted once in the census, when it ends: as the addon that decided its fate
marked it (`CENSUS_KEY`: served here, relayed by the loopback server), else as passed through.
Streams whose fate the loopback server decides later are marked `STREAMER` and counted there.
"""

from __future__ import annotations

import logging

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.config.catalog import METADATA_KEY as PICKER_KEY
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy import options
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.store.activity import Activity
from cursor_byok.store.activity import route_label
from cursor_byok.store.census import PASSED
from cursor_byok.store.census import SERVED
from cursor_byok.store.census import Census
from cursor_byok.store.files import lock_data_dir
from cursor_byok.wire.shape import unmodelled

log = logging.getLogger(__name__)

CENSUS_KEY = "cursor_byok_census"  # flow metadata: "served", "relayed", "passed" or STREAMER
CENSUS_PATH = "cursor_byok_census_path"  # flow metadata: the path to count it under, if not its own
STREAMER = "streamer"  # the loopback server counts it when the stream's route is known
_COUNTED = "cursor_byok_census_done"


class ActivityRecord:
    def __init__(self) -> None:
        self.activity: Activity | None = None
        self.census = Census(on_change=self._census_changed)

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_data_dir", "cursor_byok_hosts")

    def configure(self, updated: set[str]) -> None:
        if "cursor_byok_data_dir" in updated or self.activity is None:
            self.activity = Activity(options.data_dir(ctx.options), census=self.census)

    def running(self) -> None:
        self._take_data_dir()
        if self.activity is not None and "listen_port" in ctx.options:
            self.activity.started(
                listen_host=ctx.options.listen_host, listen_port=ctx.options.listen_port
            )

    def _take_data_dir(self) -> None:
        """One proxy per data dir: a second one would overwrite this record with its own (the
        doctor would then blame Cursor's settings) and share the blob store. It stops here,
        before its record is written, with one line."""
        data_dir = options.data_dir(ctx.options)
        try:
            holder = lock_data_dir(data_dir)
        except OSError as exc:  # the data dir's own checks say what is wrong with it
            log.debug("no lock on %s: %s", data_dir, exc)
            return
        if holder is not None:
            log.error(
                "cursor-byok cannot start: another cursor-byok proxy (%s) uses the data dir "
                "%s; stop it, or give this one its own --data-dir",
                holder,
                data_dir,
            )
            self.activity = None  # the other proxy's record stays as it is
            raise SystemExit(2)  # not Exception: mitmproxy's safecall lets it out

    def done(self) -> None:
        if self.activity is not None:  # the calls of the last write interval (a write: ~1 ms)
            self.activity.flush(1.0)

    def _census_changed(self) -> None:
        if self.activity is not None:
            self.activity.touch()

    def agent_call(self, flow: http.HTTPFlow, path: str) -> None:
        """An Agent RPC (`path`) arrived."""
        transport = "Run (HTTP/2 stream)" if path.endswith("/Run") else path.rsplit("/", 1)[-1]
        if self.activity is not None:
            route = route_label(ctx.options.mode, flow.request.http_version)
            self.activity.note("agent", transport, route)
        self.census.transport(transport)

    def observe(self, request_id: str, message: pb.AgentClientMessage) -> None:
        """A client message of a run we serve: count what it carries that we do not model, and
        say so once per kind (a Cursor update may have added it)."""
        for item in unmodelled(message):
            if self.census.unmodelled(item.key, item.describe()):
                log.warning(
                    "request %s: %s; a newer Cursor? (counted by `cursor-byok doctor --watch`)",
                    request_id,
                    item.describe(),
                )

    def unresolved(self, kind: str, ident: str) -> None:
        """A request id or blob id nothing could resolve (the census counts them)."""
        self.census.unresolved(kind, ident)
        log.debug("unresolved %s %s", kind, ident)

    def other_call(self, flow: http.HTTPFlow) -> None:
        """Any other request; counted when it is for one of Cursor's hosts."""
        if self.activity is not None and cursor_host(flow):
            self.activity.note("other")

    # --- the census: every Cursor call, once, when it ends ----------------------------------

    def response(self, flow: http.HTTPFlow) -> None:
        self._count(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._count(flow)

    def _count(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(_COUNTED):
            return
        outcome = flow.metadata.get(CENSUS_KEY)
        # A flow one of our addons marked is Cursor's, even once pointed at the loopback server
        # (its host is then 127.0.0.1).
        if outcome is None and not cursor_host(flow):
            return
        flow.metadata[_COUNTED] = True
        if outcome == STREAMER:
            return
        if outcome is None:
            picker = flow.metadata.get(PICKER_KEY)
            outcome = SERVED if picker in ("replace", "offline") else PASSED
        self.census.rpc(flow.metadata.get(CENSUS_PATH) or flow.request.path, outcome)
