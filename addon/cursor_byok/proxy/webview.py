"""The mitmweb side of `cursor-byok run --web`: Cursor's Connect/protobuf bodies as trees.

Loaded as a second script next to the cursor-byok addon (`-s script.py -s webview.py`), so the
proxy itself does not change: this only registers a content view. mitmweb picks it for Cursor's
`application/connect+proto` and `application/proto` bodies; the RunSSE streams we synthesise are
kept for it by `--set store_streamed_bodies=true` (set by `run --web`).
"""

from __future__ import annotations

from mitmproxy import contentviews
from mitmproxy import http
from mitmproxy.contentviews import Contentview
from mitmproxy.contentviews import Metadata

from cursor_byok.capture import traffic_view


class CursorConnectView(Contentview):
    """Agent calls decoded like `cursor-byok decode`; other Cursor calls as protobuf trees."""

    @property
    def name(self) -> str:
        return "Cursor Connect"

    def render_priority(self, data: bytes, metadata: Metadata) -> float:
        path, is_request = _where(metadata)
        if traffic_view.agent_kind(path, is_request) is not None:
            return 2  # RunSSE answers are text/event-stream carrying Connect envelopes
        if not traffic_view.is_connect_body(metadata.content_type):
            return -1
        return 2  # above mitmproxy's schema-less protobuf / gRPC views

    def prettify(self, data: bytes, metadata: Metadata) -> str:
        path, is_request = _where(metadata)
        return traffic_view.render(
            data,
            path=path,
            is_request=is_request,
            content_type=metadata.content_type,
            fallback=lambda payload: _schemaless(payload, metadata),
        )


def _where(metadata: Metadata) -> tuple[str, bool]:
    """The RPC path and whether the body is the request's."""
    flow = metadata.flow
    path = flow.request.path if isinstance(flow, http.HTTPFlow) else ""
    return path, isinstance(metadata.http_message, http.Request)


def _schemaless(payload: bytes, metadata: Metadata) -> str:
    """mitmproxy's own protobuf decoding (field numbers, no names) for types we do not know."""
    try:
        view = contentviews.registry["protobuf"]
        return view.prettify(payload, metadata)
    except Exception:
        return payload.hex()


class WebView:
    def load(self, loader) -> None:
        contentviews.add(CursorConnectView())


addons = [WebView()]
