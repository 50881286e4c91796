"""Cursor's default transport: the full-duplex HTTP/2 `Run` stream, through a real mitmdump.

The client is our own h2 client (tests/e2e/h2_client.py): CONNECT, TLS with ALPN h2, one
connection, and it waits for each server frame before it answers.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import string
import uuid

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from mitm import TEST_HOST
from mitm import start_mitmdump

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(90)
RUN = "/agent.v1.AgentService/Run"


def run_client(mitm, workspace, **kwargs) -> CursorLikeClient:
    return CursorLikeClient.through(mitm, workspace, transport="run", **kwargs)


async def test_turn_over_run_with_exec_kv_and_checkpoints(mitm, workspace) -> None:
    client = run_client(mitm, workspace)
    try:
        first = client.run_request("please look at README.md", conversation_id="run-1")
        result = await client.turn(first)
    finally:
        await client.aclose()
    assert result.end.ok, result.end.error
    kinds = result.kinds()
    assert kinds.index("exec:read_args") < kinds.index("tool_call_completed")
    assert "kv:set_blob_args" in kinds
    assert kinds.index("turn_ended") < kinds.index("conversation_checkpoint_update")
    assert "# Demo project" in result.text
    final = result.checkpoints[-1]
    for ident in list(final.root_prompt_messages_json) + list(final.turns):
        assert ident in client.blobs  # every referenced blob was SET and acknowledged
    # The server ended first while our upload stayed open: END_STREAM must still arrive promptly
    # (mitmproxy withholds it unless the response has trailers). Measured ~2 ms; the bound only
    # separates "prompt" from "withheld until the client gives up".
    assert result.end_stream_gap is not None and result.end_stream_gap < 0.5
    # The activity file is rewritten at most twice a second (activity.WRITE_INTERVAL).
    activity = mitm.data_dir / "activity.json"
    deadline = asyncio.get_running_loop().time() + 10
    while "Run (HTTP/2 stream)" not in (activity.read_text() if activity.exists() else ""):
        assert asyncio.get_running_loop().time() < deadline, "the Run call was not recorded"
        await asyncio.sleep(0.05)


async def test_second_turn_over_run_restores_history(mitm, workspace) -> None:
    client = run_client(mitm, workspace)
    try:
        one = await client.turn(client.run_request("read notes.txt", conversation_id="run-2"))
        two = await client.turn(
            client.run_request("again", conversation_id="run-2", state=one.checkpoints[-1])
        )
    finally:
        await client.aclose()
    assert one.end.ok and two.end.ok, two.end.error


async def test_two_run_streams_and_an_unrelated_request_on_one_connection(mitm, workspace) -> None:
    client = run_client(mitm, workspace)
    try:
        h2 = await client.h2()
        unrelated = await h2.request(
            "/aiserver.v1.AiService/Unrelated",
            {":authority": TEST_HOST, "content-type": "application/proto"},
            body=b"",
            end=True,
        )
        a, b = await asyncio.gather(
            client.turn(client.run_request("read notes.txt", conversation_id="run-a")),
            client.turn(client.run_request("read README.md", conversation_id="run-b")),
        )
        [chunk async for chunk in unrelated.chunks()]
    finally:
        await client.aclose()
    assert a.end.ok and b.end.ok
    assert "alpha" in a.text and "Demo project" in b.text
    assert unrelated.status is not None  # answered (upstream is unreachable: an error page)


async def test_more_concurrent_run_streams_than_mitmproxy_opens_per_address(
    mitm, workspace
) -> None:
    """Cursor multiplexes every Agent run on one HTTP/2 connection, and mitmproxy opens at most 5
    upstream connections per address per client connection: 8 runs must all be served at once
    (none of them can end before every one has its exec request)."""
    client = run_client(mitm, workspace)
    client.answer_execs = False
    streams = 8
    seen: set[str] = set()
    everyone = asyncio.Event()

    def hold_until_all_have_their_exec(run) -> None:
        def on_message(message: pb.AgentServerMessage) -> None:
            if not message.HasField("exec_server_message"):
                return
            seen.add(run.request_id)
            if len(seen) == streams:
                everyone.set()

            async def answer() -> None:
                await everyone.wait()
                await run._exec(message.exec_server_message)

            run.spawn(answer())

        run.on_message = on_message

    try:
        connection = await client.h2()  # open first: every turn then shares it, as in Cursor
        async with asyncio.timeout(60):
            results = await asyncio.gather(
                *(
                    client.turn(
                        client.run_request("read notes.txt", conversation_id=f"many-{i}"),
                        during=hold_until_all_have_their_exec,
                    )
                    for i in range(streams)
                )
            )
        assert await client.h2() is connection
    finally:
        await client.aclose()
    assert len(seen) == streams
    assert all(r.end.ok and "alpha" in r.text for r in results)


async def test_reset_mid_turn_then_a_new_run_attempt_continues_the_run(mitm, workspace) -> None:
    client = run_client(mitm, workspace, drop_after=[2], reconnect_new_id=True)
    try:
        first = client.run_request("read notes.txt", conversation_id="run-rst")
        first.run_request.run_id = "run-rst-1"
        result = await client.turn(first, request_id="run-rst-1")
    finally:
        await client.aclose()
    assert result.reconnects == 1
    assert result.end.ok, result.end.error
    assert "alpha" in result.text
    assert len(client.exec_log) == 1  # the read ran once on the client
    assert "client went away" in mitm.log()


async def test_retried_run_after_the_end_is_answered_from_what_was_sent(mitm, workspace) -> None:
    client = run_client(mitm, workspace)
    try:
        first = client.run_request("read notes.txt", conversation_id="run-retry")
        first.run_request.run_id = "run-retry-1"
        done = await client.turn(first, request_id="run-retry-1")
        execs = len(client.exec_log)
        again = await client.turn(first, request_id=str(uuid.uuid4()))
    finally:
        await client.aclose()
    assert done.end.ok and again.end.ok
    assert again.text == done.text  # replayed, not recomputed
    assert len(client.exec_log) == execs == 1
    assert mitm.log().count("attaches to run run-retry-1 (finished)") == 1


async def _raw_run(mitm, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    client = run_client(mitm, None)
    try:
        h2 = await client.h2()
        stream = await h2.request(
            RUN,
            {
                ":authority": TEST_HOST,
                "content-type": "application/connect+proto",
                "authorization": FAKE_TOKEN,
                "x-request-id": str(uuid.uuid4()),
                **(headers or {}),
            },
            body=body,
            end=False,  # the upload stays open, as Cursor's does
        )
        out = b"".join([chunk async for chunk in stream.chunks()])
        assert stream.status == 200 and stream.ended_at is not None
        return out
    finally:
        await client.aclose()


def _end(body: bytes) -> connect.EndStream:
    frames = connect.decode_envelopes(body)
    assert frames[-1].is_end_stream
    return connect.parse_end_stream(frames[-1].payload)


@pytest.mark.parametrize(
    "body,code",
    [
        (b"\x07\x00\x00\x00\x01x", "invalid_argument"),  # unknown flags
        (b"\x00\xff\xff\xff\xff", "invalid_argument"),  # oversized frame
        (connect.encode_frame(b"\xff\xff\xff"), "invalid_argument"),  # not protobuf
        (
            connect.encode_frame(
                pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()).SerializeToString()
            ),
            "invalid_argument",
        ),  # the first message is not a run request
        (
            connect.encode_frame_raw(connect.FLAG_COMPRESSED, gzip.compress(b"\x00" * (80 << 20))),
            "invalid_argument",
        ),  # gzip bomb
    ],
    ids=["flags", "oversized", "garbage", "not-run-request", "gzip-bomb"],
)
async def test_bad_input_ends_that_stream_with_a_connect_error(mitm, workspace, body, code):
    end = _end(await _raw_run(mitm, body, {"connect-content-encoding": "gzip"}))
    assert end.error is not None and end.error.code == code, end
    # the proxy goes on: a normal turn still works
    client = run_client(mitm, workspace)
    try:
        result = await client.turn(client.run_request("read notes.txt", conversation_id="ok"))
    finally:
        await client.aclose()
    assert result.end.ok


async def test_result_for_an_exec_never_sent_ends_the_stream(mitm, workspace) -> None:
    turn_client = run_client(mitm, workspace)
    try:
        run = CursorTurn(turn_client, str(uuid.uuid4()))
        bogus = pb.AgentClientMessage()
        bogus.exec_client_message.id = 999
        bogus.exec_client_message.read_result.success.content = "injected"
        original = run._handle

        def inject_once(message):  # answer the first frame with a result nobody asked for
            run._handle = original
            run.spawn(run.append(bogus))
            original(message)

        run._handle = inject_once
        result = await run.run(turn_client.run_request("read notes.txt", conversation_id="inj"))
    finally:
        await turn_client.aclose()
    assert result.end.error is not None and result.end.error.code == "invalid_argument"
    assert "never sent" in result.end.error.message


async def test_an_http1_client_of_run_streams_both_ways(mitm, workspace) -> None:
    """`Run` over HTTP/1.1: a chunked request body that stays open while frames come back."""
    import ssl

    reader, writer = await asyncio.open_connection("127.0.0.1", mitm.port)
    writer.write(f"CONNECT {TEST_HOST}:443 HTTP/1.1\r\nHost: {TEST_HOST}:443\r\n\r\n".encode())
    await writer.drain()
    assert b" 200 " in await reader.readuntil(b"\r\n\r\n")
    context = ssl.create_default_context(cafile=str(mitm.ca_file))
    context.set_alpn_protocols(["http/1.1"])
    await writer.start_tls(context, server_hostname=TEST_HOST)

    def chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    client = run_client(mitm, workspace)
    first = client.run_request("read notes.txt", conversation_id="h1-run")
    writer.write(
        (
            f"POST {RUN} HTTP/1.1\r\nHost: {TEST_HOST}\r\n"
            "content-type: application/connect+proto\r\n"
            f"authorization: {FAKE_TOKEN}\r\nx-request-id: {uuid.uuid4()}\r\n"
            "transfer-encoding: chunked\r\n\r\n"
        ).encode()
        + chunk(connect.encode_frame(first.SerializeToString()))
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0] and b"chunked" in head.lower()
    decoder = connect.EnvelopeDecoder()
    end = None
    texts = []
    while end is None:
        size = int((await reader.readuntil(b"\r\n")).strip(), 16)
        data = await reader.readexactly(size + 2)
        for frame in decoder.feed(data[:-2]):
            if frame.is_end_stream:
                end = connect.parse_end_stream(frame.payload)
                break
            message = pb.AgentServerMessage.FromString(frame.payload)
            if message.HasField("exec_server_message"):  # answer on the open request body
                reply = pb.AgentClientMessage()
                reply.exec_client_message.id = message.exec_server_message.id
                reply.exec_client_message.read_result.success.content = "alpha\nbeta\n"
                writer.write(chunk(connect.encode_frame(reply.SerializeToString())))
            elif message.HasField("kv_server_message"):
                reply = pb.AgentClientMessage()
                reply.kv_client_message.id = message.kv_server_message.id
                reply.kv_client_message.set_blob_result.SetInParent()
                writer.write(chunk(connect.encode_frame(reply.SerializeToString())))
            elif message.interaction_update.HasField("text_delta"):
                texts.append(message.interaction_update.text_delta.text)
            await writer.drain()
    writer.write(b"0\r\n\r\n")  # only now does the client end its upload
    await writer.drain()
    writer.close()
    await client.aclose()
    assert end.ok, end.error
    assert "alpha" in "".join(texts)


async def test_a_run_ends_whole_for_a_client_that_reads_slower_than_the_turn(
    tmp_path, workspace
) -> None:
    """The client reads slower than the turn: when the turn ends, most of the answer still
    waits in mitmproxy for the client's flow-control window. The loopback hop stays open until
    mitmproxy closes it; closing it first made mitmproxy reset the stream (INTERNAL_ERROR: its
    HTTP/1 reader saw the hop end while the client's upload was open) and drop what it held, so
    the client lost the rest of the answer and the end of the turn."""
    line = "".join(random.Random(7).choices(string.ascii_letters, k=300_000))  # gzip: ~225 KB
    (workspace / "big.txt").write_text(line + "\nend\n")
    proxy = start_mitmdump(
        tmp_path, "--set", "cursor_byok_heartbeat_ms=300", "--set", "cursor_byok_ack_timeout_ms=300"
    )
    client = run_client(proxy, workspace, await_run_reset=True)
    try:
        h2 = await client.h2()
        h2.holding = True  # acknowledge nothing: the stream's window (64 KiB) fills
        turn = asyncio.ensure_future(
            client.turn(client.run_request("read big.txt", conversation_id=str(uuid.uuid4())))
        )
        async with asyncio.timeout(30):  # mitmproxy has the whole response: its flow line
            while f"{RUN} HTTP/2.0" not in proxy.log():
                assert not turn.done(), turn.result()
                await asyncio.sleep(0.02)
        await h2.release()
        result = await asyncio.wait_for(turn, 30)
    finally:
        await client.aclose()
        proxy.stop()
    # The whole stream came: every frame, then its end (the blob acks this client could not
    # send while it read nothing are past the 0.3 s given to them: that is the end it names).
    assert line in result.text
    assert result.end.error is not None and "acknowledge stored blobs" in result.end.error.message
    # and the stream is released once its END_STREAM, queued behind that data, has gone out
    assert result.run_reset == 0  # RST_STREAM(NO_ERROR), as at the end of any turn
    assert "client went away" not in proxy.log()
