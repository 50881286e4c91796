"""A Cursor-like client: speaks the Agent protocol the way Cursor's desktop client does.

It opens RunSSE first (or, with `transport="poll"`, polls RunPoll after its first append, as
Cursor's HTTP/1.0 compatibility mode does), then uploads the run request and heartbeats over
concurrent BidiAppends,
executes exec requests in a temporary workspace, acknowledges KV SETs, answers KV GETs from its
own blob store, answers interaction queries from a script, and collects every frame. It talks
through the proxy with the proxy's CA, over HTTP/1.1 or HTTP/2.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import random
import ssl
import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import httpx
from h2_client import H2Client
from h2_client import H2Stream
from workspace_exec import execute

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_poll_request
from cursor_byok.wire.bidi import encode_run_sse_request

RUN_SSE = "/agent.v1.AgentService/RunSSE"
RUN_POLL = "/agent.v1.AgentService/RunPoll"
RUN = "/agent.v1.AgentService/Run"
BIDI_APPEND = "/aiserver.v1.BidiService/BidiAppend"
FAKE_TOKEN = "Bearer eyJfake.cursor.token"


@dataclass
class TurnResult:
    messages: list[pb.AgentServerMessage]
    end: connect.EndStream
    frames: list[bytes]
    reconnects: int = 0
    heartbeats: int = 0
    compressed: int = 0
    end_stream_gap: float | None = None  # `Run`: end-stream envelope → END_STREAM, seconds
    run_reset: int | None = None  # `Run`: the RST_STREAM code the server sent after END_STREAM
    polls: int = 0  # RunPoll requests made (transport "poll")
    poll_seqnos: list[int] = field(default_factory=list)  # BidiPollResponse seqnos, as received

    def updates(self, kind: str) -> list:
        return [
            getattr(m.interaction_update, kind)
            for m in self.messages
            if m.WhichOneof("message") == "interaction_update"
            and m.interaction_update.WhichOneof("message") == kind
        ]

    @property
    def text(self) -> str:
        return "".join(u.text for u in self.updates("text_delta"))

    @property
    def checkpoints(self) -> list[pb.ConversationStateStructure]:
        return [
            m.conversation_checkpoint_update
            for m in self.messages
            if m.WhichOneof("message") == "conversation_checkpoint_update"
        ]

    def kinds(self) -> list[str]:
        """A readable sequence of message kinds (interaction updates by variant). Consecutive
        deltas of one kind count once: how the server coalesces them depends on timing."""
        out: list[str] = []
        for m in self.messages:
            kind = m.WhichOneof("message")
            if kind == "interaction_update":
                kind = m.interaction_update.WhichOneof("message")
            elif kind == "exec_server_message":
                kind = "exec:" + (m.exec_server_message.WhichOneof("message") or "?")
            elif kind == "kv_server_message":
                kind = "kv:" + (m.kv_server_message.WhichOneof("message") or "?")
            if kind in _DELTAS and out and out[-1] == kind:
                continue
            out.append(kind)
        return out


def ssl_context(ca_file: Path, http2: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca_file))
    context.set_alpn_protocols(["h2", "http/1.1"] if http2 else ["http/1.1"])
    return context


@dataclass
class CursorLikeClient:
    base_url: str  # e.g. https://api2.cursor.test
    workspace: Path
    proxy: str | None = None
    ca_file: Path | None = None
    http2: bool = False
    heartbeat_interval: float = 0.5
    shuffle_appends: bool = False
    duplicate_appends: bool = False
    answers: dict[str, Callable[[pb.InteractionQuery], pb.InteractionResponse]] = field(
        default_factory=dict
    )
    drop_after: list[int] = field(default_factory=list)  # close RunSSE after N frames, reopen
    reconnect_delay: float = 0.0  # seconds between a dropped RunSSE and the reopened one
    # Drop the stream once, at the first server message this says yes to (besides drop_after).
    drop_on: Callable[[pb.AgentServerMessage], bool] | None = None
    # Awaited instead of `reconnect_delay` before a reconnect (wait on an event, not a clock).
    before_reconnect: Callable[[], Awaitable[None]] | None = None
    answer_execs: bool = True  # False: leave exec requests unanswered (to test cancel/grace)
    exec_gate: asyncio.Event | None = None  # when set: tool requests wait for it (a slow tool)
    answer_kv: bool = True  # False: never acknowledge KV requests (to test the ack barrier)
    upload_first: bool = False  # send the run request before opening RunSSE (Cursor: after)
    # "bidi" (RunSSE + BidiAppend), "run" (one HTTP/2 stream) or "poll" (RunPoll + BidiAppend)
    transport: str = "bidi"
    poll_data: str = "hex"  # how BidiPollResponse.data carries a message (the proxy's option)
    extra_headers: dict[str, str] = field(default_factory=dict)  # on every request of a turn
    await_run_reset: bool = False  # `Run`: after END_STREAM, wait for the server's RST_STREAM
    reconnect_new_id: bool = False  # reconnect as captured: new request id, same run request
    replays: bool = True  # False: a reopened stream replays nothing (the proxy was restarted)
    grpc_web: bool = False  # speak gRPC-Web (application/grpc-web+proto) instead of Connect
    seed: int = 0
    blobs: dict[bytes, bytes] = field(default_factory=dict)
    sent_appends: list[bytes] = field(default_factory=list)  # BidiAppend bodies, as sent
    sent_run: list[bytes] = field(default_factory=list)  # envelopes sent on `Run` streams
    h2_target: tuple[str, int] | None = None  # CONNECT target of `Run` (default: test host)

    @classmethod
    def to_backend(cls, port: int, proxy, workspace: Path, **kwargs) -> CursorLikeClient:
        """A client of a stand-in Cursor backend on 127.0.0.1:`port`, through a started proxy."""
        return cls(
            base_url=f"https://127.0.0.1:{port}",
            workspace=workspace,
            proxy=proxy.proxy_url,
            ca_file=proxy.ca_file,
            **kwargs,
        )

    @classmethod
    def through(cls, proxy, workspace: Path, **kwargs) -> CursorLikeClient:
        """A client for the test host, through a started proxy (tests/e2e/mitm.py)."""
        from mitm import TEST_HOST

        return cls(
            base_url=f"https://{TEST_HOST}",
            workspace=workspace,
            proxy=proxy.proxy_url,
            ca_file=proxy.ca_file,
            **kwargs,
        )

    def __post_init__(self) -> None:
        verify: ssl.SSLContext | bool = True
        if self.ca_file is not None:
            verify = ssl_context(self.ca_file, self.http2)
        self.http = httpx.AsyncClient(
            proxy=self.proxy,
            verify=verify,
            http2=self.http2,
            http1=True,
            timeout=httpx.Timeout(30.0),
            trust_env=False,
        )
        self.rng = random.Random(self.seed)
        self.append_log: list[tuple[int, str]] = []
        self.exec_log: list[pb.ExecServerMessage] = []  # execs this client ran (once each)
        self._h2: H2Client | None = None
        self._h2_lock = asyncio.Lock()  # turns started together must share one connection

    async def h2(self) -> H2Client:
        """One HTTP/2 connection for every `Run` stream of this client, as Cursor keeps one."""
        async with self._h2_lock:
            if self._h2 is None or self._h2.closed.is_set():
                from mitm import TEST_HOST

                port = int((self.proxy or "").rsplit(":", 1)[1])
                assert self.ca_file is not None
                host, target_port = self.h2_target or (TEST_HOST, 443)
                self._h2 = await H2Client.connect(port, host, self.ca_file, target_port)
            return self._h2

    async def aclose(self) -> None:
        await self.http.aclose()
        if self._h2 is not None:
            await self._h2.aclose()

    # --- building requests ---------------------------------------------------------------

    @staticmethod
    def run_request(
        text: str,
        *,
        conversation_id: str,
        state: pb.ConversationStateStructure | None = None,
        mode: int = 1,
        model: str = "test-model",
        workspace: Path | None = None,
    ) -> pb.AgentClientMessage:
        request = pb.AgentRunRequest(conversation_id=conversation_id)
        if state is not None:
            request.conversation_state.CopyFrom(state)
        else:
            request.conversation_state.SetInParent()
        action = request.action.user_message_action
        action.user_message.text = text
        action.user_message.message_id = str(uuid.uuid4())
        action.user_message.mode = mode
        env = action.request_context.env
        env.os_version = "linux 6.8"
        env.shell = "bash"
        if workspace is not None:
            env.workspace_paths.append(str(workspace))
        request.requested_model.model_id = model
        request.model_details.model_id = model
        return pb.AgentClientMessage(run_request=request)

    # --- one turn ------------------------------------------------------------------------

    async def turn(
        self,
        first: pb.AgentClientMessage,
        *,
        request_id: str | None = None,
        during: Callable[[CursorTurn], None] | None = None,
    ) -> TurnResult:
        request_id = request_id or str(uuid.uuid4())
        run = CursorTurn(self, request_id)
        if during is not None:
            during(run)
        return await run.run(first)


class CursorTurn:
    def __init__(self, client: CursorLikeClient, request_id: str) -> None:
        self.client = client
        self.request_id = request_id
        self.seqno = 0
        self.messages: list[pb.AgentServerMessage] = []
        self.frames: list[bytes] = []  # data frames in stream order (heartbeats excluded)
        self.tasks: set[asyncio.Task] = set()
        self.end: connect.EndStream | None = None
        self.pending_appends: list[tuple[int, bytes]] = []
        self.reconnects = 0
        self.heartbeats = 0
        self.compressed = 0  # frames that arrived with flag 0x01 (gzip)
        self.on_message: Callable[[pb.AgentServerMessage], None] | None = None
        self.stream: H2Stream | None = None  # the open `Run` stream
        self.unsent: list[pb.AgentClientMessage] = []
        # A new request id's first append is its run request, as Cursor sends it: answers
        # computed meanwhile wait for it (else they would reach the proxy before the run).
        self.awaiting_run_request = False
        self.end_stream_gap: float | None = None
        self.end_seen_at: float | None = None
        self.run_reset: int | None = None
        self.exec_results: dict[int, list[pb.AgentClientMessage]] = {}  # by exec id, this run
        self.headers_extra: dict[str, str] = dict(client.extra_headers)
        self.polls = 0
        self.poll_seqnos: list[int] = []
        self.dropped_on = False  # the drop_on drop happened

    @property
    def http(self) -> httpx.AsyncClient:
        return self.client.http

    def headers(self, content_type: str) -> dict[str, str]:
        return {
            "content-type": content_type,
            "connect-protocol-version": "1",
            "user-agent": "connect-es/1.6.1",
            "x-request-id": self.request_id,
            "authorization": FAKE_TOKEN,
            **self.headers_extra,
        }

    async def append(self, message: pb.AgentClientMessage) -> None:
        """One BidiAppend with the next seqno (possibly shuffled / duplicated in flight), or the
        next envelope on the open `Run` stream."""
        if self.client.transport == "run":
            if self.stream is None:
                if message.WhichOneof("message") != "client_heartbeat":
                    self.unsent.append(message)
                return
            self.client.append_log.append((self.seqno, message.WhichOneof("message")))
            self.seqno += 1
            envelope = connect.encode_frame(message.SerializeToString())
            self.client.sent_run.append(envelope)
            await self.stream.send(envelope)
            return
        if self.awaiting_run_request:
            if message.WhichOneof("message") != "run_request":
                if message.WhichOneof("message") != "client_heartbeat":
                    self.unsent.append(message)
                return
            self.awaiting_run_request = False
            await self._append_bidi(message)
            held, self.unsent = self.unsent, []
            for answer in held:
                await self._append_bidi(answer)
            return
        await self._append_bidi(message)

    async def _append_bidi(self, message: pb.AgentClientMessage) -> None:
        seqno = self.seqno
        self.seqno += 1
        body = encode_bidi_append(
            self.request_id, seqno, message.SerializeToString(), binary=seqno % 2 == 1
        )
        self.client.append_log.append((seqno, message.WhichOneof("message")))
        self.client.sent_appends.append(body)
        if self.client.shuffle_appends:
            await asyncio.sleep(self.client.rng.random() * 0.05)
        copies = 2 if self.client.duplicate_appends and self.client.rng.random() < 0.5 else 1
        await asyncio.gather(*(self._post_append(body) for _ in range(copies)))

    async def _post_append(self, body: bytes) -> None:
        if self.client.grpc_web:
            response = await self.http.post(
                self.client.base_url + BIDI_APPEND,
                content=connect.encode_frame(body),
                headers=self.headers("application/grpc-web+proto"),
            )
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/grpc-web+proto"
            assert b"grpc-status: 0" in response.content, response.content
            return
        response = await self.http.post(
            self.client.base_url + BIDI_APPEND,
            content=body,
            headers=self.headers("application/proto"),
        )
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/proto"

    def spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def on_exec(
        self, kind: str, handler: Callable[[pb.ExecServerMessage], Awaitable[None]]
    ) -> None:
        """Answer every exec request of `kind` (e.g. "subagent_args") with `handler`, in a task
        of its own, instead of the client's built-in answer."""

        def on_message(message: pb.AgentServerMessage) -> None:
            if message.WhichOneof("message") != "exec_server_message":
                return
            request = message.exec_server_message
            if request.WhichOneof("message") == kind:
                self.spawn(handler(request))

        self.on_message = on_message

    async def run(self, first: pb.AgentClientMessage) -> TurnResult:
        heartbeat = asyncio.ensure_future(self._heartbeats())
        try:
            drops = list(self.client.drop_after)
            attempt = 0
            while self.end is None:
                limit = drops.pop(0) if drops else None
                new_id = False
                if attempt:
                    self.reconnects += 1
                    if self.client.before_reconnect is not None:
                        await self.client.before_reconnect()
                    else:
                        await asyncio.sleep(self.client.reconnect_delay)
                    if self.client.reconnect_new_id:
                        new_id = True
                        self.request_id = str(uuid.uuid4())
                        self.seqno = 0
                        self.awaiting_run_request = self.client.transport != "run"
                if self.client.transport == "run":
                    await self._run_stream(first, limit, new_id)
                elif self.client.transport == "poll":
                    await self._run_poll(first, limit, resend=attempt == 0 or new_id, new_id=new_id)
                else:
                    await self._run_sse(first, limit, resend=attempt == 0 or new_id, new_id=new_id)
                attempt += 1
            # no heartbeat after the last stream: one spawned while the answers below finish
            # would be cancelled on its way, sent and maybe never seen by the proxy
            heartbeat.cancel()
            await asyncio.gather(*list(self.tasks))
        finally:
            heartbeat.cancel()
            for task in list(self.tasks):
                task.cancel()
        return TurnResult(
            self.messages,
            self.end,
            self.frames,
            self.reconnects,
            self.heartbeats,
            self.compressed,
            self.end_stream_gap,
            self.run_reset,
            self.polls,
            self.poll_seqnos,
        )

    async def _run_sse(
        self, first: pb.AgentClientMessage, limit: int | None, *, resend: bool, new_id: bool
    ) -> None:
        if resend and self.client.upload_first:
            await self.append(first)
            resend = False
        grpc_web = self.client.grpc_web
        headers = {
            **self.headers("application/connect+proto"),
            "connect-accept-encoding": "gzip",
            "connect-content-encoding": "gzip",
        }
        if grpc_web:
            headers = {**self.headers("application/grpc-web+proto"), "grpc-accept-encoding": "gzip"}
        async with self.http.stream(
            "POST",
            self.client.base_url + RUN_SSE,
            content=connect.encode_frame(encode_run_sse_request(self.request_id)),
            headers=headers,
        ) as response:
            assert response.status_code == 200, await response.aread()
            expected = "application/grpc-web+proto" if grpc_web else "text/event-stream"
            assert response.headers["content-type"] == expected
            if resend:
                self.spawn(self.append(first))
            encoding = response.headers.get(
                "grpc-encoding" if grpc_web else "connect-content-encoding"
            )
            decoder = (
                GrpcWebDecoder(encoding) if grpc_web else connect.EnvelopeDecoder(encoding=encoding)
            )
            replay = _Replay(self.frames if self.client.replays else [], new_attempt=new_id)
            async for chunk in response.aiter_raw():
                if self._feed(decoder, chunk, replay, limit):
                    return

    async def _run_poll(
        self, first: pb.AgentClientMessage, limit: int | None, *, resend: bool, new_id: bool
    ) -> None:
        """RunPoll as Cursor's HTTP/1.0 mode uses it: the run request goes up first, then one
        short poll after another, each answered with BidiPollResponses (seqno, data, eof) and a
        Connect end-stream; the last one carries `eof` and the run's end."""
        if resend:
            await self.append(first)
        decoder = connect.EnvelopeDecoder()
        replay = _Replay(self.frames if self.client.replays else [], new_attempt=new_id)
        expected = 0
        start = True
        while True:
            self.polls += 1
            response = await self.http.post(
                self.client.base_url + RUN_POLL,
                content=connect.encode_frame(encode_run_poll_request(self.request_id, start=start)),
                headers=self.headers("application/connect+proto"),
            )
            start = False
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/connect+proto"
            frames = connect.decode_envelopes(response.content)
            assert frames and frames[-1].is_end_stream, "a poll answer ends with its end-stream"
            stream = b""
            eof = False
            for frame in frames[:-1]:
                poll = aipb.BidiPollResponse.FromString(frame.payload)
                self.poll_seqnos.append(poll.seqno)
                if poll.seqno < expected:
                    continue  # seen already (a resent answer)
                assert poll.seqno == expected, f"poll seqno {poll.seqno}, expected {expected}"
                expected += 1
                if poll.data:
                    payload = (
                        bytes.fromhex(poll.data)
                        if self.client.poll_data == "hex"
                        else base64.b64decode(poll.data, validate=True)
                    )
                    stream += connect.encode_frame(payload)
                if poll.eof:
                    eof = True
                    stream += connect.encode_frame_raw(connect.FLAG_END_STREAM, frames[-1].payload)
            if not eof:
                assert connect.parse_end_stream(frames[-1].payload).ok  # a poll's own end: {}
            if stream and self._feed(decoder, stream, replay, limit):
                return

    async def _run_stream(self, first: pb.AgentClientMessage, limit: int | None, new_id: bool):
        """One full-duplex `Run` stream: the upload stays open while frames come back."""
        h2 = await self.client.h2()
        self.stream = await h2.request(
            RUN,
            {
                ":authority": self.client.base_url.split("://", 1)[1],
                **self.headers("application/connect+proto"),
                "connect-accept-encoding": "gzip",
                "te": "trailers",
            },
        )
        await self.append(first)
        for message in self.unsent:  # answers computed while no stream was open
            await self.append(message)
        self.unsent.clear()
        decoder = connect.EnvelopeDecoder(encoding="gzip")
        replay = _Replay(self.frames if self.client.replays else [], new_attempt=new_id)
        stream = self.stream
        async for chunk in stream.chunks():
            stop = self.end is None and self._feed(decoder, chunk, replay, limit)
            if stop and self.end is None:  # the limit, not the end: drop this stream
                await stream.cancel()  # simulate a dropped stream (RST_STREAM)
                self.stream = None
                return
        self.stream = None
        assert stream.status == 200, stream.status
        assert self.end is not None, "the Run stream ended without an end-stream envelope"
        if stream.ended_at is not None and self.end_seen_at is not None:
            self.end_stream_gap = stream.ended_at - self.end_seen_at
        if self.client.await_run_reset:  # a server that releases the upload says so at once
            async with asyncio.timeout(10):
                await stream.reset_seen.wait()
        self.run_reset = stream.reset_code

    def _feed(self, decoder, chunk: bytes, replay: _Replay, limit: int | None) -> bool:
        """Handle the frames in one chunk; True when this connection should stop reading."""
        for frame in decoder.feed(chunk):
            if frame.is_end_stream:
                self.end = connect.parse_end_stream(frame.payload)
                self.end_seen_at = time.monotonic()
                return True
            message = pb.AgentServerMessage.FromString(frame.payload)
            self.compressed += frame.was_compressed
            if _is_heartbeat(message):
                self.heartbeats += 1
                continue
            if not replay.is_new(frame.payload):
                continue
            self.frames.append(frame.payload)
            replay.seen += 1
            self.messages.append(message)
            self._handle(message)
            if limit is not None and replay.seen >= limit:
                return True  # simulate a dropped connection
            drop_on = self.client.drop_on
            if drop_on is not None and not self.dropped_on and drop_on(message):
                self.dropped_on = True
                return True
        return False

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.client.heartbeat_interval)
            self.spawn(self.append(pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())))

    # --- answering the server -------------------------------------------------------------

    def _handle(self, message: pb.AgentServerMessage) -> None:
        if self.on_message is not None:
            self.on_message(message)
        kind = message.WhichOneof("message")
        if kind == "kv_server_message":
            if self.client.answer_kv:
                self.spawn(self._kv(message.kv_server_message))
        elif kind == "exec_server_message":
            if message.exec_server_message.id not in self.exec_results:
                self.client.exec_log.append(message.exec_server_message)
            if self.client.answer_execs:
                self.spawn(self._exec(message.exec_server_message))
        elif kind == "interaction_query":
            self.spawn(self._interact(message.interaction_query))

    async def _kv(self, kv: pb.KvServerMessage) -> None:
        reply = pb.KvClientMessage(id=kv.id)
        if kv.WhichOneof("message") == "set_blob_args":
            data = kv.set_blob_args.blob_data
            assert hashlib.sha256(data).digest() == kv.set_blob_args.blob_id
            self.client.blobs[kv.set_blob_args.blob_id] = data
            reply.set_blob_result.SetInParent()
        else:
            data = self.client.blobs.get(kv.get_blob_args.blob_id)
            reply.get_blob_result.SetInParent()
            if data is not None:
                reply.get_blob_result.blob_data = data
        await self.append(pb.AgentClientMessage(kv_client_message=reply))

    async def _interact(self, query: pb.InteractionQuery) -> None:
        kind = query.WhichOneof("query")
        answer = self.client.answers.get(kind)
        response = answer(query) if answer else pb.InteractionResponse()
        response.id = query.id
        await self.append(pb.AgentClientMessage(interaction_response=response))

    async def _exec(self, request: pb.ExecServerMessage) -> None:
        kind = request.WhichOneof("message")
        done = self.exec_results.get(request.id)
        if done is not None:  # sent again on a new attempt: answer, never run it twice
            for message in done:
                await self.append(message)
            return
        if self.client.exec_gate is not None:
            await self.client.exec_gate.wait()
        results = await asyncio.to_thread(execute, self.client.workspace, request)
        answers = []
        for result in results:
            result.id = request.id
            answers.append(pb.AgentClientMessage(exec_client_message=result))
        self.exec_results[request.id] = answers
        for message in answers:
            await self.append(message)
        if kind in ("shell_stream_args",):
            close = pb.ExecClientControlMessage(
                stream_close=pb.ExecClientStreamClose(id=request.id)
            )
            await self.append(pb.AgentClientMessage(exec_client_control_message=close))


class GrpcWebDecoder:
    """gRPC-Web response frames: data envelopes, then a trailer frame (flag 0x80) whose
    grpc-status becomes a Connect end of stream."""

    def __init__(self, encoding: str | None) -> None:
        self.encoding = encoding
        self.buffer = b""

    def feed(self, data: bytes) -> list[connect.Frame]:
        self.buffer += data
        frames = []
        while len(self.buffer) >= 5:
            flags, length = self.buffer[0], int.from_bytes(self.buffer[1:5], "big")
            if len(self.buffer) < 5 + length:
                break
            payload, self.buffer = self.buffer[5 : 5 + length], self.buffer[5 + length :]
            if flags & 0x80:
                frames.append(connect.Frame(connect.FLAG_END_STREAM, _grpc_end(payload)))
            elif flags & connect.FLAG_COMPRESSED:
                frames.append(connect.Frame(flags, connect.decompress(payload, self.encoding)))
            else:
                frames.append(connect.Frame(flags, payload))
        return frames


def _grpc_end(trailer: bytes) -> bytes:
    """The gRPC-Web trailer as the Connect end-stream JSON the rest of the client reads."""
    import json
    from urllib.parse import unquote

    fields = dict(line.split(": ", 1) for line in trailer.decode().split("\r\n") if ": " in line)
    status = int(fields["grpc-status"])
    if status == 0:
        return b"{}"
    code = {v: k for k, v in connect.GRPC_STATUS.items()}[status]
    message = unquote(fields.get("grpc-message", ""))
    return json.dumps({"error": {"code": code, "message": message}}).encode()


_DELTAS = frozenset({"text_delta", "thinking_delta", "token_delta"})


class _Replay:
    """Checks what a (re)opened stream replays against the frames we already have.

    The same attempt replays byte-identical; a new attempt leaves out requests we answered."""

    def __init__(self, frames: list[bytes], *, new_attempt: bool) -> None:
        self.frames = frames
        self.new_attempt = new_attempt
        self.cursor = 0
        self.seen = 0  # frames of this connection, replayed or new

    def is_new(self, payload: bytes) -> bool:
        while self.cursor < len(self.frames):
            known = self.frames[self.cursor]
            self.cursor += 1
            if known == payload:
                self.seen += 1
                return False
            message = pb.AgentServerMessage.FromString(known)
            kind = message.WhichOneof("message")
            if self.new_attempt and kind in ("exec_server_message", "kv_server_message"):
                continue  # answered on the earlier attempt: not sent again
            raise AssertionError(f"replayed prefix differs at frame {self.cursor - 1}")
        self.cursor = len(self.frames) + 1
        return True


def _is_heartbeat(message: pb.AgentServerMessage) -> bool:
    return (
        message.WhichOneof("message") == "interaction_update"
        and message.interaction_update.WhichOneof("message") == "heartbeat"
    )
