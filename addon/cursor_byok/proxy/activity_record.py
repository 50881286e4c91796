"""An addon that keeps the activity record `cursor-byok doctor` reads: which Cursor calls reach the
proxy, on which transport and route (`activity.json` in the data dir, private to the user).
"""

from __future__ import annotations

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.proxy import options
from cursor_byok.proxy.hosts import host_matches
from cursor_byok.store.activity import Activity
from cursor_byok.store.activity import route_label


class ActivityRecord:
    def __init__(self) -> None:
        self.activity: Activity | None = None

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_data_dir", "cursor_byok_hosts")

    def configure(self, updated: set[str]) -> None:
        if "cursor_byok_data_dir" in updated or self.activity is None:
            self.activity = Activity(options.data_dir(ctx.options))

    def running(self) -> None:
        if self.activity is not None and "listen_port" in ctx.options:
            self.activity.started(
                listen_host=ctx.options.listen_host, listen_port=ctx.options.listen_port
            )

    def done(self) -> None:
        if self.activity is not None:  # the calls of the last write interval (a write: ~1 ms)
            self.activity.flush(1.0)

    def agent_call(self, flow: http.HTTPFlow, path: str) -> None:
        """An Agent RPC (`path`) arrived."""
        if self.activity is not None:
            route = route_label(ctx.options.mode, flow.request.http_version)
            transport = "Run (HTTP/2 stream)" if path.endswith("/Run") else path.rsplit("/", 1)[-1]
            self.activity.note("agent", transport, route)

    def other_call(self, flow: http.HTTPFlow) -> None:
        """Any other request; counted when it is for one of Cursor's hosts."""
        if self.activity is not None and host_matches(
            flow.request.pretty_host, ctx.options.cursor_byok_hosts
        ):
            self.activity.note("other")
