"""HTTP/2 like Chromium: RST_STREAM(CANCEL) on RunSSE, then a BidiAppend on the same connection.

httpx never sends RST_STREAM on an early close, so this speaks HTTP/2 with the h2 library over a
CONNECT tunnel and TLS with ALPN h2 (mitmproxy.md §6).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import uuid

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from mitm import TEST_HOST

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(60)


class H2Client:
    def __init__(self, proxy_port: int, ca_file) -> None:
        raw = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
        raw.sendall(f"CONNECT {TEST_HOST}:443 HTTP/1.1\r\nHost: {TEST_HOST}:443\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += raw.recv(4096)
        assert head.startswith(b"HTTP/1.1 200"), head
        context = ssl.create_default_context(cafile=str(ca_file))
        context.set_alpn_protocols(["h2"])
        self.sock = context.wrap_socket(raw, server_hostname=TEST_HOST)
        assert self.sock.selected_alpn_protocol() == "h2"
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def request(self, path: str, body: bytes, content_type: str) -> int:
        stream = self.conn.get_next_available_stream_id()
        headers = [
            (":method", "POST"),
            (":path", path),
            (":scheme", "https"),
            (":authority", TEST_HOST),
            ("content-type", content_type),
            ("connect-protocol-version", "1"),
            ("authorization", FAKE_TOKEN),  # the same client as the CursorTurn below
        ]
        self.conn.send_headers(stream, headers)
        self.conn.send_data(stream, body, end_stream=True)
        self.flush()
        return stream

    def events(self) -> list:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        events = self.conn.receive_data(data)
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        self.flush()
        return events


def scenario(port: int, ca_file, request_id: str, run_request: bytes) -> tuple[int, int]:
    client = H2Client(port, ca_file)
    sse = client.request(
        "/agent.v1.AgentService/RunSSE",
        connect.encode_frame(encode_run_sse_request(request_id)),
        "application/connect+proto",
    )
    client.request(
        "/aiserver.v1.BidiService/BidiAppend",
        encode_bidi_append(request_id, 0, run_request),
        "application/proto",
    )
    data_events = 0
    while data_events < 2:  # read two chunks of the stream, then hang up on it
        data_events += sum(
            isinstance(e, h2.events.DataReceived) and e.stream_id == sse for e in client.events()
        )
    client.conn.reset_stream(sse, error_code=h2.errors.ErrorCodes.CANCEL)
    client.flush()
    heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()).SerializeToString()
    append = client.request(
        "/aiserver.v1.BidiService/BidiAppend",
        encode_bidi_append(request_id, 1, heartbeat),
        "application/proto",
    )
    while True:
        for event in client.events():
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == append:
                return data_events, int(dict(event.headers)[b":status"])


async def test_runsse_reset_then_bidi_append_on_the_same_connection(mitm, workspace) -> None:
    request_id = str(uuid.uuid4())
    first = CursorLikeClient.run_request("read notes.txt", conversation_id="h2-conv")
    chunks, status = await asyncio.to_thread(
        scenario, mitm.port, mitm.ca_file, request_id, first.SerializeToString()
    )
    assert chunks >= 2 and status == 200
    for _ in range(100):  # mitmproxy reports the reset as a flow error
        if f"RunSSE {request_id}: client went away" in mitm.log():
            break
        await asyncio.sleep(0.05)
    assert f"RunSSE {request_id}: client went away" in mitm.log()
    # The turn is still there: a new RunSSE for the request id picks it up from the backlog.
    client = CursorLikeClient.through(mitm, workspace)
    try:
        turn = CursorTurn(client, request_id)
        turn.seqno = 2
        result = await turn.run(pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()))
    finally:
        await client.aclose()
    assert result.kinds()[0] == "step_started"  # replayed from the start of the turn
    assert result.end.ok  # the exec the first stream left unanswered was answered after all
    assert "alpha" in result.text
