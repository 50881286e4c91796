"""The mitmweb side of `cursor-byok run --web`: Cursor's Agent calls as a person wants to see them.

Loaded as a second script next to the cursor-byok addon (`-s script.py -s webview.py`), so the
proxy without `--web` does not change at all. It registers the "Cursor Connect" content view
(`capture/traffic_view.py` renders) and tidies the flows of Agent calls for the flow list:

- both bodies of Cursor's default transport, the HTTP/2 `Run` stream: the upload is streamed
  into the run chunk by chunk and never forwarded, so mitmproxy keeps nothing of it; a bounded
  copy is kept here (the response, our stream, is kept by `store_streamed_bodies`, set by
  `run --web`);
- a stream we serve is listed under the Cursor host it was sent to, not the loopback server on
  127.0.0.1 it was pointed at, and without our internal stream header (it carries an HMAC);
- a mark (and a comment) says whether cursor-byok answered the call or passed it to Cursor;
- BidiAppend uploads that are only heartbeats are folded into their RunSSE stream (its comment
  counts them), so a turn is a few rows, not 45.

Everything here happens after mitmproxy has sent the request on (in `responseheaders` and
later) or only copies bytes, so what goes over the wire is what it is without `--web`.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from mitmproxy import contentviews
from mitmproxy import ctx
from mitmproxy import http
from mitmproxy.contentviews import Contentview
from mitmproxy.contentviews import Metadata
from mitmproxy.hooks import UpdateHook

from cursor_byok.capture import traffic_view
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.agent_rpc import BIDI_APPEND_PATH
from cursor_byok.proxy.agent_rpc import METADATA_KEY
from cursor_byok.proxy.agent_rpc import PASS_KEY
from cursor_byok.proxy.agent_rpc import PATH_KEY
from cursor_byok.proxy.agent_rpc import RUN_PATH
from cursor_byok.proxy.agent_rpc import RUN_SSE_PATH
from cursor_byok.proxy.agent_rpc import UPLOAD_KEY
from cursor_byok.proxy.loopback.addon import LOOPBACK_KEY
from cursor_byok.proxy.loopback.addon import ORIGIN_KEY
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.wire.bidi import BidiDecodeError
from cursor_byok.wire.bidi import decode_bidi_append

log = logging.getLogger(__name__)

MAX_UPLOAD_COPY = 8 * 1024 * 1024  # of one Run upload, for looking at (a first turn: ~1.5 MB)
SERVED_MARK = ":house:"  # answered by cursor-byok
PASSED_MARK = ":arrow_right:"  # passed to Cursor's backend unchanged
STREAMS_KEPT = 256  # RunSSE flows remembered for folding their heartbeat appends
COPY_KEY = "cursor_byok_upload_copy"
FOLDED_KEY = "cursor_byok_folded"


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


class _UploadCopy:
    """Wraps a `Run` upload's stream callable: each chunk goes on to it unchanged, and into a
    bounded copy that is the request's content for the view."""

    def __init__(self, flow: http.HTTPFlow, inner) -> None:
        self.flow = flow
        self.inner = inner
        self.data = bytearray()
        self.truncated = False

    def __call__(self, chunk: bytes):
        if chunk and not self.truncated:
            room = MAX_UPLOAD_COPY - len(self.data)
            self.data += chunk[:room]
            self.truncated = len(chunk) > room
            self.show()
        return self.inner(chunk)

    def show(self) -> None:
        self.flow.request.data.content = bytes(self.data)


class WebView:
    def __init__(self) -> None:
        self.streams: OrderedDict[str, http.HTTPFlow] = OrderedDict()  # request id -> RunSSE

    def load(self, loader) -> None:
        contentviews.add(CursorConnectView())

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        upload = flow.metadata.get(UPLOAD_KEY)
        if upload is not None and callable(flow.request.stream):
            copy = _UploadCopy(flow, flow.request.stream)
            flow.request.stream = copy
            flow.metadata[COPY_KEY] = copy

    def request(self, flow: http.HTTPFlow) -> None:
        copy = flow.metadata.get(COPY_KEY)
        if copy is not None:  # mitmproxy stored what was forwarded (nothing): ours instead
            copy.show()

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get(LOOPBACK_KEY):
            _show_at_origin(flow)
            _mark(flow)
            if flow.metadata.get(PATH_KEY) == RUN_SSE_PATH:
                self._remember(flow)
            _updated(flow)

    def response(self, flow: http.HTTPFlow) -> None:
        path = flow.metadata.get(PATH_KEY)
        if path is None or flow.metadata.get(LOOPBACK_KEY):
            if flow.metadata.get(COPY_KEY) is not None:
                flow.metadata[COPY_KEY].show()
            return
        _mark(flow)
        if path == BIDI_APPEND_PATH and not flow.metadata.get(PASS_KEY) and _is_heartbeat(flow):
            stream = self.streams.get(str(flow.metadata.get(METADATA_KEY)))
            if stream is not None:
                self._fold(flow, stream)
                return
        _updated(flow)

    def _remember(self, flow: http.HTTPFlow) -> None:
        request_id = flow.metadata.get(METADATA_KEY)
        if request_id:
            self.streams[str(request_id)] = flow
            self.streams.move_to_end(str(request_id))
            while len(self.streams) > STREAMS_KEPT:
                self.streams.popitem(last=False)

    def _fold(self, append: http.HTTPFlow, stream: http.HTTPFlow) -> None:
        """Count a heartbeat append on its stream's row and take its own row out of the
        list, once mitmproxy is done with it (removing a live flow would kill it)."""
        folded = stream.metadata.get(FOLDED_KEY, 0) + 1
        stream.metadata[FOLDED_KEY] = folded
        stream.comment = _comment(stream) + f"; {folded} heartbeat append(s) folded in here"
        _updated(stream)
        asyncio.get_running_loop().call_soon(_remove_when_done, append, 20)


def _remove_when_done(flow: http.HTTPFlow, tries: int) -> None:
    if flow.live and tries > 0:
        asyncio.get_running_loop().call_soon(_remove_when_done, flow, tries - 1)
        return
    if flow.live:
        return  # still being answered: leave its row rather than kill it
    if "view.flows.remove" in ctx.master.commands.commands:  # mitmweb's flow list
        ctx.master.commands.call("view.flows.remove", [flow])


def _is_heartbeat(flow: http.HTTPFlow) -> bool:
    """A BidiAppend that carries only a client heartbeat (or nothing)."""
    request = flow.request
    try:
        append = decode_bidi_append(
            request.raw_content or b"",
            request.headers.get("content-type"),
            request.headers.get("content-encoding"),
        )
    except BidiDecodeError:
        return False
    message: pb.AgentClientMessage | None = append.message
    return message is None or message.WhichOneof("message") == "client_heartbeat"


def _show_at_origin(flow: http.HTTPFlow) -> None:
    """List a served stream under the Cursor host it was sent to and drop our internal header;
    the request has gone to the loopback server already, so this changes only what is shown."""
    origin = flow.metadata.get(ORIGIN_KEY)
    request = flow.request
    request.headers.pop(STREAM_HEADER, None)
    if flow.metadata.get(UPLOAD_KEY) is not None:  # `Run`: the 0 was for the loopback hop
        request.headers.pop("content-length", None)
    if origin is None:
        return
    scheme, host, port, authority, host_header = origin
    request.scheme, request.host, request.port = scheme, host, port
    request.authority = authority
    if host_header is not None:
        request.headers["host"] = host_header
    elif "host" in request.headers:
        del request.headers["host"]


def _comment(flow: http.HTTPFlow) -> str:
    if flow.metadata.get(PASS_KEY):
        return "cursor-byok: passed to Cursor's backend unchanged (a Cursor model)"
    if flow.metadata.get(PATH_KEY) in (RUN_PATH, RUN_SSE_PATH, BIDI_APPEND_PATH):
        return "cursor-byok: answered here"
    return ""


def _mark(flow: http.HTTPFlow) -> None:
    comment = _comment(flow)
    if not comment:
        return
    flow.marked = PASSED_MARK if flow.metadata.get(PASS_KEY) else SERVED_MARK
    if not flow.comment.startswith("cursor-byok:"):
        flow.comment = comment


def _updated(flow: http.HTTPFlow) -> None:
    """Tell mitmweb the flow changed (its own hooks ran before ours)."""
    ctx.master.addons.trigger(UpdateHook([flow]))


addons = [WebView()]
