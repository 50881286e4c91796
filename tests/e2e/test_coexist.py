"""Coexisting with Cursor's own models: runs on them go to Cursor's backend untouched.

A real mitmdump (regular mode) between the Cursor-like client and a loopback stand-in for
Cursor's backend (tests/fakes/fake_cursor.py: HTTP/1.1 over TLS on 127.0.0.1 with a self-made
certificate the mitmdump trusts through `ssl_verify_upstream_trusted_ca`). The client talks to
`https://127.0.0.1:<backend port>` and the proxy treats that host as Cursor's
(`cursor_byok_hosts=127.0.0.1`). BYOK models are answered by the fake provider.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_cursor import FakeCursor
from fakes.fake_provider import FakeProvider
from h2_client import H2Client
from mitm import start_in_front_of
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import decode_bidi_append
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(120)
CURSOR_MODEL = "composer-1"
HEARTBEAT = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())


class Setup:
    def __init__(
        self, tmp: Path, workspace: Path, fp, backend: FakeCursor, route: str = "", *extra: str
    ):
        config = write_config(tmp, fp, "openai-chat")
        if route:
            config.write_text(f'route_other_models = "{route}"\n' + config.read_text())
        self.proxy = start_in_front_of(
            backend,
            tmp / "proxy",
            config,
            *extra,
        )
        self.workspace = workspace

    def client(self, **kwargs) -> CursorLikeClient:
        return CursorLikeClient.to_backend(
            self.backend_port,
            self.proxy,
            self.workspace,
            heartbeat_interval=3600,  # the test sends its appends itself, in a known order
            **kwargs,
        )

    def blobs(self) -> list[Path]:
        root = self.proxy.data_dir / "blobs"
        return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def more_appends_then_release(backend: FakeCursor, count: int = 3):
    """On the first frame: send `count` more appends one after another, then let the backend
    finish (so the first frame provably arrived before the backend's stream ended)."""

    def during(run) -> None:
        seen = []

        async def more() -> None:
            for _ in range(count):
                await run.append(HEARTBEAT)
            backend.release.set()

        def on_message(message: pb.AgentServerMessage) -> None:
            if not seen:
                seen.append(message)
                run.spawn(more())

        run.on_message = on_message

    return during


async def cursor_turn_then_byok_turn(setup: Setup, client, fp, backend: FakeCursor, workspace):
    """One conversation: a turn on a Cursor model (the backend holds its stream until three more
    appends went up), then one on ours. Returns the Cursor turn's request id, both results, the
    requests the backend had seen and the `Run` bytes the client had sent after the first."""
    conversation = str(uuid.uuid4())
    request_id = str(uuid.uuid4())
    try:
        first = client.run_request(
            "hi", conversation_id=conversation, model=CURSOR_MODEL, workspace=workspace
        )
        result = await client.turn(
            first, request_id=request_id, during=more_appends_then_release(backend)
        )
        cursor_requests = len(backend.requests)
        sent_run = b"".join(client.sent_run)
        assert setup.blobs() == []
        fp.script.text("served here")
        byok = await client.turn(
            client.run_request(
                "again", conversation_id=conversation, model=MODEL, workspace=workspace
            )
        )
    finally:
        await client.aclose()
        setup.proxy.stop()
    return request_id, result, byok, cursor_requests, sent_run


@pytest.mark.parametrize("upload_first", [False, True], ids=["runsse-first", "append-first"])
async def test_cursor_model_runs_pass_through_then_byok_is_served_here(
    tmp_path, workspace, upload_first
) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(tmp_path, workspace, fp, backend)
        setup.backend_port = backend.port
        client = setup.client(upload_first=upload_first)
        request_id, result, byok, cursor_requests, _ = await cursor_turn_then_byok_turn(
            setup, client, fp, backend, workspace
        )
    log = setup.proxy.log()
    # The Cursor run: answered by the backend, bytes unchanged both ways, incrementally.
    assert result.end.ok, result.end
    assert result.text == "cursor says hi from its own model"
    assert backend.released_by_client, "the first frame did not reach the client in time"
    assert [connect.encode_frame(f) for f in result.frames] == backend.sent[:2]
    appends = backend.appends()
    assert [a.body for a in appends] == client.sent_appends[:4]  # byte-identical, in order
    decoded = [decode_bidi_append(a.body, "application/proto") for a in appends]
    assert [d.seqno for d in decoded] == [0, 1, 2, 3]
    assert decoded[0].message.run_request.requested_model.model_id == CURSOR_MODEL
    assert all(a.headers["authorization"] == FAKE_TOKEN for a in appends)
    [run_sse] = backend.run_sses()
    assert run_sse.body == connect.encode_frame(encode_run_sse_request(request_id))
    assert run_sse.headers["authorization"] == FAKE_TOKEN
    # The BYOK run right after, same conversation: served here, never reaching the backend.
    assert byok.end.ok, byok.end
    assert byok.text == "served here"
    assert len(backend.requests) == cursor_requests == 5
    assert len(fp.requests) == 1  # and the Cursor run never called the provider
    assert f"model '{CURSOR_MODEL}' → Cursor's backend" in log
    assert f"model '{MODEL}' → served here" in log
    assert "sk-test" not in log and FAKE_TOKEN not in log
    if upload_first:  # decided before RunSSE came: the flow itself went upstream
        assert f"RunSSE {request_id} → Cursor's backend" in log
    else:  # RunSSE came first: its head from the loopback, its body relayed from the backend
        assert f"RunSSE {request_id}: run is on a Cursor model, relayed to Cursor" in log


async def test_error_route_keeps_the_clear_error(tmp_path, workspace) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(tmp_path, workspace, fp, backend, route="error")
        setup.backend_port = backend.port
        client = setup.client()
        try:
            result = await client.turn(
                client.run_request("hi", conversation_id="c", model=CURSOR_MODEL)
            )
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert result.end.error.code == "invalid_argument"
    [detail] = result.end.error.details
    assert MODEL in aipb.ErrorDetails.FromString(detail.value).details.detail
    assert backend.requests == [] and fp.requests == []


async def test_cursor_model_run_stream_is_relayed_over_h2_then_byok_is_served_here(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(tmp_path, workspace, fp, backend)
        setup.backend_port = backend.port
        client = setup.client(transport="run", h2_target=("127.0.0.1", backend.port))
        request_id, result, byok, _, sent = await cursor_turn_then_byok_turn(
            setup, client, fp, backend, workspace
        )
    log = setup.proxy.log()
    assert result.end.ok, result.end
    assert result.text == "cursor says hi from its own model"
    assert backend.released_by_client, "the first frame did not reach the client in time"
    assert [connect.encode_frame(f) for f in result.frames] == backend.sent[:2]
    assert len(client.sent_run) >= 4  # the run request and three more envelopes
    assert bytes(backend.run_upload) == sent  # every upload byte, unchanged and in order
    [run] = backend.requests
    assert run.path == "/agent.v1.AgentService/Run"
    assert run.headers["authorization"] == FAKE_TOKEN
    assert run.headers["x-request-id"] == request_id
    assert run.headers["content-type"] == "application/connect+proto"
    assert f"Run {request_id}: run is on a Cursor model, relayed to Cursor" in log
    assert byok.end.ok, byok.end
    assert byok.text == "served here"
    assert len(backend.requests) == 1 and len(fp.requests) == 1
    assert FAKE_TOKEN not in log


async def test_a_run_request_that_never_comes_releases_the_held_runsse_to_cursor(
    tmp_path, workspace
) -> None:
    """No run request within the route wait: the held RunSSE goes to Cursor as it came, its
    first frame arrives while Cursor's stream is open, and the run's late appends follow it."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        setup = Setup(
            tmp_path, workspace, fp, backend, "", "--set", "cursor_byok_route_wait_ms=300"
        )
        setup.backend_port = backend.port
        client = setup.client()
        request_id = str(uuid.uuid4())
        base = f"https://127.0.0.1:{backend.port}"
        headers = {
            "content-type": "application/connect+proto",
            "connect-protocol-version": "1",
            "authorization": FAKE_TOKEN,
        }
        run_sse = connect.encode_frame(encode_run_sse_request(request_id))
        body = bytearray()
        try:
            async with client.http.stream(
                "POST", base + "/agent.v1.AgentService/RunSSE", content=run_sse, headers=headers
            ) as response:
                assert response.status_code == 200
                chunks = response.aiter_raw()
                while len(body) < len(backend.first):  # Cursor's first frame, before release
                    body += await anext(chunks)
                late = client.run_request("late", conversation_id="c", model=MODEL)
                append = await client.http.post(
                    base + "/aiserver.v1.BidiService/BidiAppend",
                    content=encode_bidi_append(request_id, 0, late.SerializeToString()),
                    headers={**headers, "content-type": "application/proto"},
                )
                backend.release.set()
                async for chunk in chunks:
                    body += chunk
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert bytes(body) == b"".join(backend.sent)  # Cursor's bytes, unchanged
    assert append.status_code == 200  # Cursor's answer: the run went there, even on our model
    [sse] = backend.run_sses()
    assert sse.body == run_sse
    [sent] = backend.appends()
    assert decode_bidi_append(sent.body, "application/proto").message == late
    assert fp.requests == [] and setup.blobs() == []
    log = setup.proxy.log()
    assert f"request {request_id}: no run request in 0.3 s, passed through to Cursor" in log


async def test_an_upstream_refusal_of_a_relayed_stream_reaches_the_client_as_its_error(
    tmp_path, workspace
) -> None:
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend", refuse=401) as backend:
        setup = Setup(tmp_path, workspace, fp, backend)
        setup.backend_port = backend.port
        client = setup.client()  # RunSSE first: its head is ours, Cursor's answer is relayed
        try:
            result = await client.turn(
                client.run_request("hi", conversation_id="c", model=CURSOR_MODEL)
            )
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert result.end.error.code == "unauthenticated"
    assert result.end.error.message == "not signed in to Cursor"
    assert len(backend.run_sses()) == 1 and fp.requests == []


async def test_one_conversation_alternates_byok_cursor_byok(tmp_path, workspace, transport) -> None:
    """BYOK → Cursor → BYOK: the Cursor run gets our checkpoint unchanged; the BYOK run after it
    still has the first turn's history. (The stand-in writes no checkpoint of its own here, so
    the third turn continues from ours; test_coexist_checkpoints.py reads Cursor's.)"""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("The answer is 42.")
        fp.script.text("You asked about the answer.")
        setup = Setup(tmp_path, workspace, fp, backend)
        setup.backend_port = backend.port
        client = setup.client(transport=transport, h2_target=("127.0.0.1", backend.port))
        conversation = str(uuid.uuid4())

        def ask(text: str, model: str, state=None) -> pb.AgentClientMessage:
            return client.run_request(
                text, conversation_id=conversation, model=model, workspace=workspace, state=state
            )

        try:
            one = await client.turn(ask("what is the answer?", MODEL))
            state = one.checkpoints[-1]
            two = await client.turn(
                ask("and in Cursor?", CURSOR_MODEL, state),
                during=more_appends_then_release(backend, 0),
            )
            three = await client.turn(ask("what did I ask?", MODEL, state))
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert one.end.ok and two.end.ok and three.end.ok
    assert two.text == "cursor says hi from its own model"
    if transport == "run":
        [first, *_] = connect.EnvelopeDecoder().feed(bytes(backend.run_upload))
        sent = pb.AgentClientMessage.FromString(first.payload)
    else:
        sent = decode_bidi_append(backend.appends()[0].body, "application/proto").message
    assert sent.run_request.conversation_state == state  # our checkpoint reached Cursor
    assert len(fp.requests) == 2
    text = str(fp.requests[1].json)
    assert "what is the answer?" in text and "The answer is 42." in text
    assert "and in Cursor?" not in text
    assert three.text == "You asked about the answer."


async def test_a_client_reset_of_a_relayed_run_resets_cursors_stream_and_the_retry_relays_again(
    tmp_path, workspace
) -> None:
    # The first stream is held after one frame (the client resets it then); the retry is not.
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend", held_streams=1) as backend:
        setup = Setup(tmp_path, workspace, fp, backend)
        setup.backend_port = backend.port
        client = setup.client(
            transport="run", h2_target=("127.0.0.1", backend.port), drop_after=[1]
        )
        try:
            result = await client.turn(
                client.run_request("hi", conversation_id="c", model=CURSOR_MODEL)
            )
        finally:
            await client.aclose()
            setup.proxy.stop()
    assert result.reconnects == 1
    assert result.end.ok and result.text == "cursor says hi from its own model"
    assert [r.path for r in backend.requests] == ["/agent.v1.AgentService/Run"] * 2
    assert backend.run_resets == 1  # the client's RST_STREAM reached Cursor's side
    assert fp.requests == []


async def test_an_upstream_reset_of_a_relayed_run_resets_the_clients_stream(
    tmp_path, workspace
) -> None:
    async with (
        FakeProvider() as fp,
        FakeCursor(tmp_path / "backend", reset_after_first=True) as backend,
    ):
        setup = Setup(tmp_path, workspace, fp, backend)
        h2 = await H2Client.connect(
            setup.proxy.port, "127.0.0.1", setup.proxy.ca_file, backend.port
        )
        first = CursorLikeClient.run_request("hi", conversation_id="c", model=CURSOR_MODEL)
        try:
            stream = await h2.request(
                "/agent.v1.AgentService/Run",
                {
                    ":authority": f"127.0.0.1:{backend.port}",
                    "content-type": "application/connect+proto",
                    "connect-protocol-version": "1",
                    "authorization": FAKE_TOKEN,
                    "x-request-id": str(uuid.uuid4()),
                },
            )
            await stream.send(connect.encode_frame(first.SerializeToString()))
            received = b""
            async with asyncio.timeout(20):
                async for chunk in stream.chunks():
                    received += chunk
        finally:
            await h2.aclose()
            setup.proxy.stop()
    assert received == backend.first  # what came before the reset arrived unchanged
    assert stream.reset  # then the client's stream was reset, not ended cleanly
    assert fp.requests == []
