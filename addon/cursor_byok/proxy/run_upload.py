"""The request body of one HTTP/2 `Run` stream, fed chunk by chunk into its attempt.

Cursor keeps its upload open for the whole turn and sends a Connect envelope per client message
(tool results, KV answers, heartbeats); mitmproxy hands us each chunk as it comes
(`request.stream`), nothing goes upstream. The first message decides the route: served here,
or relayed unparsed to Cursor by the loopback server (`pipe`). Its lifecycle is
`ROUTE_TRANSITIONS`:

    UNDECIDED ─serve→ SERVED | ─relay→ RELAYED      (the first client message decides)
    any ─stop→ STOPPED                              (bad input, or the client went away)
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable

from cursor_byok.core.states import step
from cursor_byok.errors import ByokError
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.loopback.spec import RELAY_RESET
from cursor_byok.proxy.mitmproxy_compat import forget_traceback
from cursor_byok.proxy.recording import Recording
from cursor_byok.proxy.routing import CURSOR
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import parse_client_message

log = logging.getLogger(__name__)


class Route(enum.Enum):
    UNDECIDED = "undecided"  # the first message decides; the bytes read are kept until then
    SERVED = "served"  # served here: each client message goes to the registry
    RELAYED = "relayed"  # Cursor's: every byte goes unparsed into the pipe
    STOPPED = "stopped"  # bad input ended its stream, or the client went away: nothing is read


class RouteEvent(enum.Enum):
    SERVE = "serve"
    RELAY = "relay"
    STOP = "stop"


_U, _UE = Route, RouteEvent
ROUTE_TRANSITIONS: dict[tuple[Route, RouteEvent], Route] = {
    (_U.UNDECIDED, _UE.SERVE): _U.SERVED,
    (_U.UNDECIDED, _UE.RELAY): _U.RELAYED,
    (_U.UNDECIDED, _UE.STOP): _U.STOPPED,
    (_U.SERVED, _UE.STOP): _U.STOPPED,
    (_U.RELAYED, _UE.STOP): _U.STOPPED,  # the client went away: Cursor's stream is reset
    (_U.STOPPED, _UE.STOP): _U.STOPPED,  # it went away after bad input
}


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
        registry: RunRegistry,
        request_id: str,
        owner: bytes,
        encoding: str | None,
        recording: Recording,
        *,
        pipe: asyncio.Queue | None = None,
        decide: Callable[[str, pb.AgentClientMessage, str], str] | None = None,
        opened: str = "",
        observe: Callable[[str, pb.AgentClientMessage], None] | None = None,
        parent: tuple[str, str] | None = None,
        client: str = "",
    ) -> None:
        self.registry = registry
        self.client = client
        self.request_id = request_id
        self.owner = owner
        self.recording = recording
        self.decoder = connect.EnvelopeDecoder(encoding=encoding)
        self.messages = 0
        self.pipe = pipe
        self.decide = decide
        self.route = Route.UNDECIDED if decide is not None else Route.SERVED
        self.read = bytearray()  # raw upload bytes until the route is known
        self.opened = opened  # how the stream came (HTTP version...), for the route line
        self.observe = observe  # the census: what served messages carry that we do not model
        self.parent = parent  # a subagent's (parent request id, parent tool call id), headers

    def _step(self, event: RouteEvent) -> None:
        self.route = step(ROUTE_TRANSITIONS, self.route, event, f"Run {self.request_id} upload")

    def __call__(self, chunk: bytes) -> list[bytes]:
        if not chunk or self.route is Route.STOPPED:
            return []
        if self.route is Route.RELAYED:
            assert self.pipe is not None
            self.pipe.put_nowait(bytes(chunk))
            return []
        if self.route is Route.UNDECIDED:
            self.read += chunk
        try:
            for frame in self.decoder.feed(chunk):
                if frame.is_end_stream:
                    continue  # a client end-stream closes its side; nothing to do
                message = parse_client_message(frame.payload)
                if self.route is Route.UNDECIDED and self._decide(message):
                    return []  # relayed: what was read went into the pipe
                self._serve(frame.payload, message)
        except ByokError as exc:
            self._fail(exc.code, f"Run request stream: {exc}")
            forget_traceback(exc)
        except Exception:
            log.exception("Run %s: upload failed", self.request_id)
            self._fail("internal", "cursor-byok internal error")
        return []

    def _decide(self, message: pb.AgentClientMessage) -> bool:
        """Route the upload by its first message; True when it goes to Cursor."""
        assert self.decide is not None
        relayed = self.decide(self.request_id, message, self.opened) == CURSOR
        self._step(RouteEvent.RELAY if relayed else RouteEvent.SERVE)
        if relayed:
            assert self.pipe is not None
            self.pipe.put_nowait(bytes(self.read))
        self.read = bytearray()
        return relayed

    def _serve(self, payload: bytes, message: pb.AgentClientMessage) -> None:
        """One client message of a served upload, to the registry."""
        self.recording.client(self.request_id, self.messages, payload, {})
        if self.observe is not None:
            self.observe(self.request_id, message)
        self.messages += 1
        starts = message.WhichOneof("message") == "run_request"
        self.registry.receive(
            self.request_id,
            None,
            message,
            raw=payload,
            owner=self.owner,
            transport="run",
            client=self.client,
            parent=self.parent if starts else None,  # for its run's start
        )

    def _stop(self) -> None:
        """Nothing more is read; one that stops before its route says it opened (the route
        line, which would have said it, never comes)."""
        self._unrouted()
        self._step(RouteEvent.STOP)

    def _fail(self, code: str, message: str) -> None:
        self._stop()
        log.warning("Run %s: %s", self.request_id, message)
        self.registry.close_attempt(self.request_id, connect.EndStreamError(code, message))

    def _unrouted(self) -> None:
        """The upload ends before its first message: say the stream opened (the route line,
        which would have said it, never comes)."""
        if self.route is Route.UNDECIDED and self.opened:
            log.info("Run %s opened (%s), no run request", self.request_id, self.opened)
            self.opened = ""

    def close(self) -> None:
        """The client closed its upload: fine between envelopes, an error inside one."""
        self._unrouted()
        if self.pipe is not None and self.route is not Route.SERVED:
            # Relayed or undecided (or stopped: a served one's pipe is never read): end
            # Cursor's upload too.
            self.pipe.put_nowait(None)
            return
        if self.route is Route.SERVED and self.decoder.buffered:
            self._fail("invalid_argument", "Run request stream ended inside an envelope")

    def abandon(self) -> None:
        relayed = self.route is Route.RELAYED
        self._stop()
        if self.pipe is not None and relayed:
            self.pipe.put_nowait(RELAY_RESET)
