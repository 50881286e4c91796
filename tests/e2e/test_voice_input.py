"""Voice input shares the BidiAppend envelope (HTTP/1.1) and the agent's HTTP/2 connection:
what is not an Agent message of a run we serve goes to Cursor byte for byte (issue 25 item 2).

A real mitmdump between a Cursor-like client and a stand-in for Cursor's backend
(tests/fakes/fake_cursor.py) that records every request it gets.
"""

from __future__ import annotations

import time
import uuid

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
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(120)
STT_SSE = "/aiserver.v1.AiService/StreamSttSSE"
STT = "/aiserver.v1.AiService/StreamStt"
BIDI_APPEND = "/aiserver.v1.BidiService/BidiAppend"
ROUTE_WAIT_MS = 20_000


def tag(number: int, wire: int) -> bytes:
    return bytes([number << 3 | wire])


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + bytes([len(payload)]) + payload


# aiserver.v1.SttClientMessage: config=1 {language=1, punctuate=2}, audio=2 {pcm16=1},
# control=3 {type=1: STOP}; the last one is byte for byte an Agent KvClientMessage{id=1}.
STT_MESSAGES = [
    ld(1, ld(1, b"en-US") + tag(2, 0) + b"\x01"),
    ld(2, ld(1, bytes(range(64)))),
    ld(3, tag(1, 0) + b"\x01"),
]


def proxy_for(tmp_path, fp, backend, route: str = ""):
    config = write_config(tmp_path, fp, "openai-chat")
    if route:
        config.write_text(f'route_other_models = "{route}"\n' + config.read_text())
    return start_in_front_of(
        backend,
        tmp_path / "proxy",
        config,
        "--set",
        f"cursor_byok_route_wait_ms={ROUTE_WAIT_MS}",
    )


@pytest.mark.parametrize("route", ["cursor", "error"])
async def test_stt_appends_reach_cursor_byte_for_byte(tmp_path, workspace, route) -> None:
    """Voice input in HTTP/1.1 mode: its stream (`StreamSttSSE`) and its appends go to Cursor
    unchanged and without waiting, in both routing modes, while an Agent turn is served here."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("served here")
        proxy = proxy_for(tmp_path, fp, backend, route)
        client = CursorLikeClient.to_backend(
            backend.port,
            proxy,
            workspace,
        )
        stt_id = str(uuid.uuid4())
        headers = {
            "authorization": FAKE_TOKEN,
            "connect-protocol-version": "1",
            "x-request-id": stt_id,
        }
        bodies = [
            encode_bidi_append(stt_id, seqno, message) for seqno, message in enumerate(STT_MESSAGES)
        ]
        try:
            started = time.monotonic()
            opened = await client.http.post(
                client.base_url + STT_SSE,
                content=connect.encode_frame(encode_run_sse_request(stt_id)),
                headers={**headers, "content-type": "application/connect+proto"},
            )
            answers = [
                await client.http.post(
                    client.base_url + BIDI_APPEND,
                    content=body,
                    headers={**headers, "content-type": "application/proto"},
                )
                for body in bodies
            ]
            elapsed = time.monotonic() - started
            turn = await client.turn(
                client.run_request("hi", conversation_id=str(uuid.uuid4()), model=MODEL)
            )
        finally:
            await client.aclose()
            proxy.stop()
    assert opened.status_code == 200
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [r.path for r in backend.requests] == [STT_SSE, BIDI_APPEND, BIDI_APPEND, BIDI_APPEND]
    assert [a.body for a in backend.appends()] == bodies  # byte for byte, in order
    assert elapsed < ROUTE_WAIT_MS / 2000  # nothing waited for a run request
    assert turn.end.ok and turn.text == "served here"  # the Agent turn: served here


async def test_an_undecodable_append_of_a_served_run_is_refused_not_forwarded(
    tmp_path, workspace
) -> None:
    """The other side of the rule: an append that is not an Agent message but names a run we
    serve is refused (invalid_argument), never sent to Cursor."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        fp.script.text("served here")
        proxy = proxy_for(tmp_path, fp, backend)
        client = CursorLikeClient.to_backend(
            backend.port,
            proxy,
            workspace,
        )
        request_id = str(uuid.uuid4())
        try:
            turn = await client.turn(
                client.run_request("hi", conversation_id=str(uuid.uuid4()), model=MODEL),
                request_id=request_id,
            )
            stray = await client.http.post(
                client.base_url + BIDI_APPEND,
                content=encode_bidi_append(request_id, 99, STT_MESSAGES[0]),
                headers={"authorization": FAKE_TOKEN, "content-type": "application/proto"},
            )
        finally:
            await client.aclose()
            proxy.stop()
    assert turn.end.ok
    assert stray.status_code == 400 and stray.json()["code"] == "invalid_argument"
    assert backend.requests == []


async def test_stt_stream_shares_the_agent_h2_connection(tmp_path, workspace) -> None:
    """HTTP/2: voice input's own bidi stream goes to Cursor on the connection that also carries
    a `Run` stream we serve."""
    async with FakeProvider() as fp, FakeCursor(tmp_path / "backend") as backend:
        backend.held_streams = 0  # answer at once
        fp.script.text("served here")
        proxy = proxy_for(tmp_path, fp, backend)
        client = CursorLikeClient.to_backend(
            backend.port,
            proxy,
            workspace,
            transport="run",
            h2_target=("127.0.0.1", backend.port),
        )
        try:
            turn = await client.turn(
                client.run_request("hi", conversation_id=str(uuid.uuid4()), model=MODEL)
            )
            h2: H2Client = await client.h2()
            stream = await h2.request(
                STT,
                {
                    ":authority": f"127.0.0.1:{backend.port}",
                    "content-type": "application/connect+proto",
                    "authorization": FAKE_TOKEN,
                },
                body=connect.encode_frame(STT_MESSAGES[0]),
                end=True,
            )
            body = b"".join([chunk async for chunk in stream.chunks()])
        finally:
            await client.aclose()
            proxy.stop()
    assert turn.end.ok and turn.text == "served here"
    assert stream.status == 200 and body.startswith(backend.first)
    assert [r.path for r in backend.requests] == [STT]
    assert bytes(backend.run_upload) == connect.encode_frame(STT_MESSAGES[0])


def test_the_stt_messages_look_as_described() -> None:
    """The fixtures: the config and audio do not parse as Agent messages of the right shape;
    the stop does (which is why the request id decides)."""
    from cursor_byok.wire.shape import classify

    assert [classify(m).agent for m in STT_MESSAGES] == [False, False, True]
    assert pb.AgentClientMessage.FromString(STT_MESSAGES[2]).kv_client_message.id == 1
