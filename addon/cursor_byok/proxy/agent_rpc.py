"""An addon that recognises Cursor's Agent RPCs on all three transports and serves them.

Everything that is not one of our paths passes through untouched. The Agent paths of runs we
serve never go upstream: BidiAppend is answered in the `request` hook, and so is RunPoll (one
short answer per poll, `run_poll.py`); RunSSE and the HTTP/2 `Run` stream are pointed at the
in-process loopback server and streamed back (mitmproxy.md §3), and a `Run` upload is fed, chunk
by chunk, into its attempt (§3.3, `run_upload.py`). A run on one of Cursor's own models goes to
Cursor as it came (`routing.py`), and so does every append that is not an Agent message (voice
input shares the BidiAppend envelope, protocol.md §2.5).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import logging
import secrets
import uuid

from mitmproxy import ctx
from mitmproxy import http

from cursor_byok.core.runs import Refused
from cursor_byok.errors import ByokError
from cursor_byok.proxy import options
from cursor_byok.proxy.activity_record import CENSUS_KEY
from cursor_byok.proxy.activity_record import STREAMER
from cursor_byok.proxy.activity_record import ActivityRecord
from cursor_byok.proxy.hosts import cursor_host
from cursor_byok.proxy.loopback.addon import LOOPBACK_KEY
from cursor_byok.proxy.loopback.addon import Loopback
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.proxy.mitmproxy_compat import forget_traceback
from cursor_byok.proxy.mitmproxy_compat import give_end_stream_trailers
from cursor_byok.proxy.recording import Recording
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.routing import Routing
from cursor_byok.proxy.run_poll import RunPolls
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.run_upload import RunUpload
from cursor_byok.proxy.turns import ToolChoices
from cursor_byok.store.census import SERVED
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import BadFraming
from cursor_byok.wire.bidi import decode_bidi_append
from cursor_byok.wire.bidi import decode_run_poll_request
from cursor_byok.wire.bidi import decode_run_sse_request
from cursor_byok.wire.bidi import validate_request_id

log = logging.getLogger(__name__)

BIDI_APPEND_PATH = "/aiserver.v1.BidiService/BidiAppend"
RUN_SSE_PATH = "/agent.v1.AgentService/RunSSE"
RUN_PATH = "/agent.v1.AgentService/Run"
RUN_POLL_PATH = "/agent.v1.AgentService/RunPoll"
AGENT_PATHS = (BIDI_APPEND_PATH, RUN_SSE_PATH, RUN_PATH, RUN_POLL_PATH)
METADATA_KEY = "cursor_byok"  # the request id of an Agent flow
PATH_KEY = "cursor_byok_path"
UPLOAD_KEY = "cursor_byok_upload"  # the RunUpload of a `Run` flow
PASS_KEY = "cursor_byok_pass"  # the flow belongs to a run on a Cursor model: upstream, untouched
MAX_OWNERS_KEPT = 64  # credentials whose owner hash is kept (`_owner`): a few per machine
MAX_BODY = 32 * 1024 * 1024  # a unary Agent body, decoded (a first-turn upload is ~1.5 MB)
MAX_STREAM_OPEN = 1024  # a `...SSE` / `...Poll` request body of another service worth decoding


PARENT_REQUEST = "x-parent-request-id"
PARENT_TOOL_CALL = "x-parent-agent-tool-call-id"
MAX_TOOL_CALL_ID = 512
NO_CREDENTIAL = (
    "cursor-byok serves Agent requests only to a client that sends an Authorization header "
    "(Cursor and its SDK always do: a run is bound to it); this request has none"
)


def parent_link(request: http.Request) -> tuple[str, str] | None:
    """A subagent run's parent, from the headers Cursor puts on child runs: (parent request id,
    the parent's Task tool call id). Both or neither (protocol.md §2.3); a lone or malformed one
    is ignored with a line in the log, and the child is linked by its prompt as before."""
    parent = request.headers.get(PARENT_REQUEST, "")
    call = request.headers.get(PARENT_TOOL_CALL, "")
    if not parent and not call:
        return None
    if not parent or not call:
        log.warning(
            "%s without %s: the subagent is linked to its parent by its prompt",
            PARENT_REQUEST if parent else PARENT_TOOL_CALL,
            PARENT_TOOL_CALL if parent else PARENT_REQUEST,
        )
        return None
    try:
        validate_request_id(parent)
    except ByokError as exc:
        log.warning("%s: %s; ignored", PARENT_REQUEST, exc)
        return None
    if len(call) > MAX_TOOL_CALL_ID or not call.isprintable():
        log.warning("%s: not a tool call id; ignored", PARENT_TOOL_CALL)
        return None
    return parent, call


def connect_error_response(code: str, message: str) -> http.Response:
    status, body = connect.unary_error(code, message)
    return http.Response.make(status, body, {"content-type": "application/json"})


class AgentRpc:
    """Flow classification and the hooks of the Agent RPCs; the work happens in the run core
    (`shell.py`), the loopback server, the poll cursors and the turns."""

    def __init__(
        self,
        registry: RunRegistry,
        loopback: Loopback,
        routing: Routing,
        recording: Recording,
        activity: ActivityRecord,
        tool_choices: ToolChoices | None = None,
    ) -> None:
        self.registry = registry
        self.tool_choices = tool_choices if tool_choices is not None else ToolChoices()
        self.loopback = loopback
        self.routing = routing
        self.recording = recording
        self.activity = activity
        self.polls = RunPolls(registry)
        self._owner_key = secrets.token_bytes(32)  # keys the credential hashes runs are bound to
        self._owners: dict[str, bytes] = {}  # credential → its hash, the last few (`_owner`)

    def load(self, loader) -> None:
        options.declare(loader, "cursor_byok_hosts", "cursor_byok_poll_data")

    def configure(self, updated: set[str]) -> None:
        if options.changed(ctx.options, updated, "cursor_byok_poll_data"):
            self.polls.data = ctx.options.cursor_byok_poll_data

    def _ours(self, flow: http.HTTPFlow) -> str | None:
        """Which of our RPCs this flow is, if any."""
        request = flow.request
        path = request.path.split("?")[0]
        if request.method != "POST" or path not in AGENT_PATHS:
            return None
        if not cursor_host(flow):
            return None
        return path

    def _owner(self, flow: http.HTTPFlow) -> bytes:
        """What a run and its request ids are bound to, as a keyed hash (never stored): the
        client's credential (`authorization`). A request without one is refused at once, on
        every transport (issue 33 item 5): bound to its connection instead, as it was, its
        RunSSE + BidiAppend or RunPoll turns hung (their appends come on other connections and
        were refused), and every new connection was a new owner with a bound of its own."""
        token = flow.request.headers.get("authorization", "")
        if not token:
            raise Refused("unauthenticated", NO_CREDENTIAL)
        owner = self._owners.get(token)
        if owner is None:  # one HMAC per credential, not one per BidiAppend and RunPoll
            material = b"credential:" + token.encode()
            owner = hmac.new(self._owner_key, material, hashlib.sha256).digest()[:16]
            if len(self._owners) >= MAX_OWNERS_KEPT:
                self._owners.clear()
            self._owners[token] = owner
        return owner

    @staticmethod
    def _client(flow: http.HTTPFlow) -> str:
        """The client connection, for the fair share of the global bound (`limits.displace`)."""
        return flow.client_conn.id

    async def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or not flow.live:
            return
        path = self._ours(flow)
        if path is None:
            return
        flow.metadata[PATH_KEY] = path
        request = flow.request
        # Cursor's SDK sends its `tools` / `disallowed_tools` options as headers of every attempt
        self.tool_choices.note(request.headers.get("x-request-id"), request.headers)
        if path == RUN_PATH:
            self.activity.agent_call(flow, path)
        unsupported = _unsupported_content_type(path, request)
        if unsupported and path != RUN_PATH:
            log.warning("%s: %s", path.rsplit("/", 1)[-1], unsupported)
            flow.response = connect_error_response("invalid_argument", unsupported)
            return
        too_large = _declared_size(request) > MAX_BODY
        if path != RUN_PATH and not too_large:
            return  # unary-ish bodies stay buffered; handled in `request`
        problem = await self.loopback.wait_ready()
        if problem is not None:
            flow.response = self._error(flow, "unavailable", problem)
            return
        if unsupported:
            log.warning("Run: %s", unsupported)
            self.loopback.answer_error(flow, "invalid_argument", unsupported, stream=True)
            return
        if too_large:
            log.warning("%s: request body of %d bytes refused", path, _declared_size(request))
            self.loopback.answer_error(
                flow, "resource_exhausted", "request body too large", stream=path == RUN_PATH
            )
            return
        try:
            self._open_run_stream(flow)
        except ByokError as exc:
            log.warning("Run rejected: %s", exc)
            code, message = exc.code, str(exc)
            forget_traceback(exc)
            self.loopback.answer_error(flow, code, message, stream=True)

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
        if path is None:
            self.activity.other_call(flow)
            self._note_foreign_stream(flow)
            return
        self.activity.agent_call(flow, path)
        problem = await self.loopback.wait_ready()
        if problem is not None:
            flow.response = self._error(flow, "unavailable", problem)
            flow.metadata[CENSUS_KEY] = SERVED
            return
        try:
            if path == BIDI_APPEND_PATH:
                request = flow.request
                append = decode_bidi_append(
                    self._body(request), request.headers.get("content-type")
                )
                link = parent_link(request) if _is_run_request(append.message) else None
                parent = link[0] if link else ""
                if await self.routing.append_route(append, parent) == CURSOR:
                    self._pass_through(flow, path, append.request_id)
                    return
                flow.metadata[CENSUS_KEY] = SERVED
                if not append.agent and append.raw:
                    raise BadFraming("BidiAppendRequest.data is not an Agent client message")
                self._bidi_append(flow, append, link)
            elif path == RUN_POLL_PATH:
                await self._run_poll(flow)
            else:
                self._run_sse(flow)
        except ByokError as exc:
            log.warning("%s rejected: %s", path.rsplit("/", 1)[-1], exc)
            code, message = exc.code, str(exc)
            forget_traceback(exc)  # before Response.make: see _forget
            flow.response = self._error(flow, code, message, stream=path == RUN_POLL_PATH)
            flow.metadata[CENSUS_KEY] = SERVED
        except Exception:
            # Never let an Agent RPC fall through to Cursor's servers because we failed.
            log.exception("cursor-byok failed on %s", path)
            flow.response = self._error(
                flow, "internal", "cursor-byok internal error", stream=path == RUN_POLL_PATH
            )
            flow.metadata[CENSUS_KEY] = SERVED

    def _error(
        self, flow: http.HTTPFlow, code: str, message: str, *, stream: bool = False
    ) -> http.Response:
        """An error answer in the client's protocol (`stream`: a server stream's end, RunPoll)."""
        if stream:
            body = connect.encode_end_stream(connect.EndStreamError(code, message))
            return http.Response.make(200, body, {"content-type": "application/connect+proto"})
        if _is_grpc_web(flow.request):
            headers = {"content-type": "application/grpc-web+proto"}
            headers.update(connect.grpc_web_trailers(connect.EndStreamError(code, message)))
            return http.Response.make(200, b"", headers)
        return connect_error_response(code, message)

    def _body(self, request: http.Request) -> bytes:
        """The request body, its HTTP compression undone by our bounded decoder (never
        mitmproxy's, which inflates without limit and caches the result)."""
        raw = request.raw_content or b""
        encoding = request.headers.get("content-encoding")
        try:
            return connect.decompress_body(raw, encoding, limit=MAX_BODY)
        except connect.ConnectError as exc:
            raise BadFraming(f"request body: {exc}") from None

    def _pass_through(self, flow: http.HTTPFlow, path: str, request_id: str) -> None:
        """Leave the flow as the client sent it: it goes to Cursor's backend."""
        flow.metadata[METADATA_KEY] = request_id
        flow.metadata[PASS_KEY] = True
        log.debug("%s %s → Cursor's backend", path.rsplit("/", 1)[-1], request_id)

    def _note_foreign_stream(self, flow: http.HTTPFlow) -> None:
        """Another service's bidi stream (`...SSE` / `...Poll` with a BidiRequestId body, e.g.
        voice input's `AiService/StreamSttSSE`): its request id is not an Agent run, so its
        appends go to Cursor at once, even those whose bytes happen to parse as Agent messages."""
        request = flow.request
        path = request.path.split("?")[0]
        if request.method != "POST" or not path.endswith(("SSE", "Poll")):
            return
        body = request.raw_content or b""
        if not body or len(body) > MAX_STREAM_OPEN or not cursor_host(flow):
            return
        try:
            request_id = decode_run_sse_request(body, request.headers.get("content-type"))
        except ByokError:
            return
        if self.routing.routes.get(request_id) is None and not self.registry.knows(request_id):
            self.routing.routes.decide(request_id, CURSOR)
            log.debug("%s %s: another service's stream", path.rsplit("/", 1)[-1], request_id)

    async def _run_poll(self, flow: http.HTTPFlow) -> None:
        """One poll: answered here for a run we serve, else it goes to Cursor as it came."""
        request = flow.request
        poll = decode_run_poll_request(
            self._body(request), request.headers.get("content-type") or "application/connect+proto"
        )
        request_id = poll.request_id
        if await self.routing.poll_route(request_id) == CURSOR:
            self._pass_through(flow, RUN_POLL_PATH, request_id)
            return
        flow.metadata[METADATA_KEY] = request_id
        flow.metadata[CENSUS_KEY] = SERVED
        await self.polls.answer(flow, poll, self._owner(flow))

    def _bidi_append(
        self, flow: http.HTTPFlow, append, parent: tuple[str, str] | None = None
    ) -> None:
        """One BidiAppend; `parent`: a subagent's parent link, from its run request's headers."""
        request = flow.request
        flow.metadata[METADATA_KEY] = append.request_id
        kind = append.message.WhichOneof("message") if append.message else None
        log.debug("BidiAppend %s seq %d: %s", append.request_id, append.seqno, kind)
        if append.message is not None:
            self.activity.observe(append.request_id, append.message)
        # before the turn it may start emits anything
        self.recording.client(append.request_id, append.seqno, append.raw, request.headers)
        self.registry.receive(
            append.request_id,
            append.seqno,
            append.message,
            raw=append.raw,
            owner=self._owner(flow),
            client=self._client(flow),
            parent=parent,
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
        request = flow.request
        grpc_web = _is_grpc_web(request)
        request_id = decode_run_sse_request(
            self._body(request), request.headers.get("content-type") or "application/connect+proto"
        )
        route = self.routing.routes.get(request_id)
        if route == CURSOR:
            self._pass_through(flow, RUN_SSE_PATH, request_id)
            log.info("RunSSE %s → Cursor's backend", request_id)
            return
        forward = ""
        if route is None and self.registry.run_for(request_id) is None and self.routing.may_pass():
            # Its run request has not come yet (Cursor opens RunSSE first, and may wait for
            # its response head before it sends it): serve the head from the loopback now;
            # the streamer relays it to Cursor if the run turns out to be on a Cursor model.
            forward = self.loopback.hold_forward(
                _forward_of(request, body=request.raw_content or b"")
            )
        owner = self._owner(flow)
        self.registry.open_attempt(request_id, owner=owner, client=self._client(flow))
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
            client=self._client(flow),
        )
        self.loopback.point(flow, spec)
        flow.metadata[CENSUS_KEY] = STREAMER if forward else SERVED
        request.headers["content-length"] = str(len(request.raw_content or b""))
        log.info("RunSSE %s opened", request_id)

    def _open_run_stream(self, flow: http.HTTPFlow) -> None:
        """`Run`: stream the upload into the attempt, serve the response from the loopback.

        An upload encoding we cannot read is refused before any attempt opens; what may go to
        Cursor is held by `_hold_run_forward`, the upload's reader is `_run_upload`."""
        request = flow.request
        headers = request.headers
        request_id = headers.get("x-request-id") or headers.get("x-original-request-id")
        request_id = validate_request_id(request_id) if request_id else f"run-{uuid.uuid4()}"
        grpc_web = _is_grpc_web(request)
        upload_encoding = _upload_encoding(headers, grpc_web)
        owner = self._owner(flow)
        self.registry.open_attempt(
            request_id, owner=owner, transport="run", client=self._client(flow)
        )
        pipe, forward = self._hold_run_forward(request, request_id)
        opened = "HTTP/{}{}".format(
            "2" if request.is_http2 else "1.1",
            ", x-blob-encryption-key present" if "x-blob-encryption-key" in headers else "",
        )
        upload = self._run_upload(flow, request_id, owner, upload_encoding, pipe, opened)
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
            client=self._client(flow),
        )
        request.stream = upload
        self.loopback.point(flow, spec)
        flow.metadata[CENSUS_KEY] = STREAMER if forward else SERVED
        request.headers["content-length"] = "0"  # the loopback hop carries no body
        if pipe is None:
            log.info("Run %s opened (%s)", request_id, opened)
        else:  # the route line says it (or the upload, if it ends before its first message)
            log.debug("Run %s opened (%s)", request_id, opened)

    def _hold_run_forward(
        self, request: http.Request, request_id: str
    ) -> tuple[asyncio.Queue | None, str]:
        """The upload pipe and held forward of a `Run` that may turn out to be Cursor's, else
        (None, ""): the upstream is fixed before any body, so the streamer must be ready to
        relay it to Cursor before the first envelope says which model."""
        known = self.routing.routes.get(request_id)
        if not (known == CURSOR or (known is None and self.routing.may_pass())):
            return None, ""
        pipe: asyncio.Queue = asyncio.Queue()
        forward = self.loopback.hold_forward(
            _forward_of(
                request,
                body=b"",
                upload=pipe,
                authority=request.authority or request.host_header or "",
            )
        )
        return pipe, forward

    def _run_upload(
        self,
        flow: http.HTTPFlow,
        request_id: str,
        owner: bytes,
        encoding: str | None,
        pipe: asyncio.Queue | None,
        opened: str,
    ) -> RunUpload:
        """The reader of a `Run` upload; only one that may go to Cursor decides its route on
        the first message (the parent link, from the headers, places a subagent's run)."""
        link = parent_link(flow.request)
        decide = functools.partial(self.routing.decide_first, parent=link[0] if link else "")
        return RunUpload(
            self.registry,
            request_id,
            owner,
            encoding,
            self.recording,
            pipe=pipe,
            decide=decide if pipe is not None else None,
            opened=opened,
            observe=self.activity.observe,
            parent=link,
            client=self._client(flow),
        )

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
        # Cursor keeps its `Run` upload open for the whole turn: without trailers mitmproxy
        # would withhold our END_STREAM, and the marker in them makes mitmproxy release the
        # stream after it (RST_STREAM NO_ERROR, mitmproxy_compat.py).
        if flow.metadata.get(LOOPBACK_KEY):
            give_end_stream_trailers(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self.polls.failed(flow)
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
    RUN_POLL_PATH: ("application/connect+proto",),
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


def _is_run_request(message) -> bool:
    return message is not None and message.WhichOneof("message") == "run_request"


def _declared_size(request: http.Request) -> int:
    try:
        return int(request.headers.get("content-length", "0"))
    except ValueError:
        return 0


def _upload_encoding(headers: http.Headers, grpc_web: bool) -> str | None:
    """A `Run` upload's content encoding; one we cannot read is bad framing (the client's
    fault), refused before an attempt is opened for it."""
    try:
        return connect.normalise_encoding(
            headers.get("grpc-encoding" if grpc_web else "connect-content-encoding")
        )
    except connect.ConnectError as exc:
        raise BadFraming(str(exc)) from None


def _is_grpc_web(request: http.Request) -> bool:
    return (request.headers.get("content-type") or "").lower().startswith("application/grpc-web")
