"""The bench's plain relays on Cursor's own transports (issue 38): the feeder playing Cursor's
server for the HTTP/1.1 fallback (BA) must hold RunSSE until the run request comes by
BidiAppend, stream the deltas, then the recorded close frames, then the end, and answer every
BidiAppend at once; for the HTTP/1.0 mode (BP) it must hand the same frames to RunPoll, each
once, in order, with `eof` and the end last; otherwise BA's and BP's ratios are not a turn's."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import streamlib  # noqa: E402

from cursor_byok.pb import agent_v1_pb2 as pb  # noqa: E402
from cursor_byok.pb import aiserver_v1_pb2 as aipb  # noqa: E402
from cursor_byok.wire import connect  # noqa: E402
from cursor_byok.wire.bidi import encode_bidi_append  # noqa: E402
from cursor_byok.wire.bidi import encode_run_poll_request  # noqa: E402
from cursor_byok.wire.bidi import encode_run_sse_request  # noqa: E402


def _close_frames() -> list[bytes]:
    kv = pb.AgentServerMessage()
    kv.kv_server_message.id = 7
    kv.kv_server_message.set_blob_args.blob_id = b"\x01" * 32
    ended = pb.AgentServerMessage()
    ended.interaction_update.turn_ended.SetInParent()
    return [connect.encode_frame(m.SerializeToString()) for m in (kv, ended)]


@contextlib.asynccontextmanager
async def _feeder(tmp_path: Path) -> AsyncIterator[tuple[streamlib.Feeder, int]]:
    """A feeder on 127.0.0.1 whose turns close with `_close_frames`, its ticker running."""
    close = tmp_path / "close-frames.bin"
    close.write_bytes(b"".join(_close_frames()))
    feeder = streamlib.Feeder(deltas=200, interval=0.001, close_frames=close)
    server = await asyncio.start_server(feeder.serve, "127.0.0.1", 0)
    ticker = asyncio.ensure_future(feeder.ticker())
    try:
        yield feeder, server.sockets[0].getsockname()[1]
    finally:
        ticker.cancel()
        server.close()


async def _append(
    uploads: streamlib.Http1, rid: str, seqno: int, message: pb.AgentClientMessage
) -> int:
    """One BidiAppend of `message`; its HTTP status."""
    headers = {"content-type": "application/proto", "x-request-id": rid}
    body = encode_bidi_append(rid, seqno, message.SerializeToString(), binary=True)
    _, appended = await uploads.request("POST", streamlib.BIDI_APPEND, headers, body)
    return (await appended).status


def _run_request(deltas: int) -> pb.AgentClientMessage:
    run = pb.AgentClientMessage()
    run.run_request.action.user_message_action.user_message.text = f"go bench-deltas={deltas}"
    return run


def _kind(payload: bytes) -> object:
    message = pb.AgentServerMessage.FromString(payload)
    return "delta" if message.interaction_update.HasField("text_delta") else payload


CLOSE = [f[connect.HEADER_SIZE :] for f in _close_frames()]


async def test_a_fallback_turn_streams_after_its_run_request_then_closes(tmp_path) -> None:
    rid = str(uuid.uuid4())
    pieces: list[bytes] = []
    async with _feeder(tmp_path) as (feeder, port):
        sse = await streamlib.open_http(port)
        uploads = await streamlib.open_http(port)
        try:
            head, result = await sse.request(
                "POST",
                streamlib.RUN_SSE,
                {"content-type": "application/connect+proto", "x-request-id": rid},
                connect.encode_frame(encode_run_sse_request(rid)),
                sink=lambda piece, _now: pieces.append(piece),
            )
            assert (await head).status == 200
            await asyncio.sleep(0.02)
            assert pieces == [] and feeder.streams == 0  # nothing before the run request
            assert await _append(uploads, rid, 0, _run_request(3)) == 200
            ack = pb.AgentClientMessage()
            ack.kv_client_message.id = 7
            ack.kv_client_message.set_blob_result.SetInParent()
            assert await _append(uploads, rid, 1, ack) == 200
            await asyncio.wait_for(result, 5)
        finally:
            sse.close()
            uploads.close()

    frames = list(connect.decode_envelopes(b"".join(pieces)))
    kinds = ["end" if f.is_end_stream else _kind(f.payload) for f in frames]
    assert kinds == ["delta"] * 3 + CLOSE + ["end"]
    assert feeder.streams == 1 and feeder.fallback == {}


async def test_an_http10_turn_is_read_back_by_polls_each_frame_once(tmp_path) -> None:
    rid = str(uuid.uuid4())
    responses: list[aipb.BidiPollResponse] = []
    ends: list[int] = []  # after how many responses each poll's end-stream came
    async with _feeder(tmp_path) as (feeder, port):
        polls = await streamlib.open_http(port)
        uploads = await streamlib.open_http(port)
        try:
            assert await _append(uploads, rid, 0, _run_request(200)) == 200
            while not responses or not responses[-1].eof:
                assert len(ends) < 300, "the polls never reached eof"
                _, result = await polls.request(
                    "POST",
                    streamlib.RUN_POLL,
                    {"content-type": "application/connect+proto", "x-request-id": rid},
                    connect.encode_frame(encode_run_poll_request(rid, start=not ends)),
                )
                answer = await asyncio.wait_for(result, 5)
                assert answer.status == 200
                frames = list(connect.decode_envelopes(answer.body))
                assert frames[-1].is_end_stream and not any(f.is_end_stream for f in frames[:-1])
                responses += [aipb.BidiPollResponse.FromString(f.payload) for f in frames[:-1]]
                ends.append(len(responses))
        finally:
            polls.close()
            uploads.close()

    assert [r.seqno for r in responses] == list(range(len(responses)))
    kinds = [_kind(bytes.fromhex(r.data)) for r in responses[:-1]]
    deltas = kinds.index(CLOSE[0])
    assert kinds[:deltas] == ["delta"] * deltas and kinds[deltas:] == CLOSE
    text = "".join(
        pb.AgentServerMessage.FromString(bytes.fromhex(r.data)).interaction_update.text_delta.text
        for r in responses[:deltas]
    )
    assert len(streamlib.STAMP_RE.findall(text)) == 200  # every delta once, in order
    assert streamlib.STAMP_RE.findall(text) == sorted(streamlib.STAMP_RE.findall(text), key=int)
    # coalesced as the run core coalesces (fewer frames than deltas), and many polls, fewer
    # than the frames: a poll that waits is held as the addon's RunPoll holds it
    assert 1 < deltas < 200
    assert 1 < len(ends) < deltas
    assert responses[-1].eof and not responses[-1].data
    assert feeder.polled == {}  # the run is let go once its end was read


async def test_a_poll_run_hands_over_every_delta_held_at_its_end() -> None:
    """A turn that closes with no frames (no addon configuration recorded any) still releases
    the deltas held in its last window."""
    run = streamlib._PollRun()
    run.add(streamlib.delta_message("t=0;"))  # the first goes at once, and a poll takes it
    bodies = [await run.answer()]
    for n in range(1, 5):  # the rest come within its window: held
        run.add(streamlib.delta_message(f"t={n};"))
    assert run.outbox.readable() < len(run.outbox.entries)
    run.end([])
    while not run.answered_end:
        bodies.append(await run.answer())
    text = ""
    for body in bodies:
        for frame in connect.decode_envelopes(body):
            poll = None if frame.is_end_stream else aipb.BidiPollResponse.FromString(frame.payload)
            if poll is not None and poll.data:
                message = pb.AgentServerMessage.FromString(bytes.fromhex(poll.data))
                text += message.interaction_update.text_delta.text
    assert streamlib.STAMP_RE.findall(text) == [str(n) for n in range(5)]


def test_read_frames_reads_what_record_close_wrote(tmp_path) -> None:
    path = tmp_path / "frames.bin"
    assert streamlib.read_frames(path) == []  # no recording: the turns close with nothing
    path.write_bytes(b"".join(_close_frames()))
    assert streamlib.read_frames(path) == _close_frames()


async def test_a_run_turn_streams_after_its_run_request_and_reads_the_upload_to_its_end(
    tmp_path,
) -> None:
    """BR: the upload comes unframed (as mitmproxy hands an HTTP/2 upload without a length to
    an HTTP/1.1 server); the deltas, the close frames and the end go down after its first
    envelope, and the rest of the upload is read until the proxy closes the hop."""
    async with _feeder(tmp_path) as (feeder, port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(
                f"POST {streamlib.RUN} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                "content-type: application/connect+proto\r\n\r\n".encode()
            )
            writer.write(connect.encode_frame(_run_request(3).SerializeToString()))
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head
            body = await asyncio.wait_for(reader.readuntil(b"\r\n0\r\n\r\n"), 5)
            ack = pb.AgentClientMessage()
            ack.kv_client_message.id = 7
            ack.kv_client_message.set_blob_result.SetInParent()
            writer.write(connect.encode_frame(ack.SerializeToString()))
            writer.write_eof()
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed after the upload
        finally:
            writer.close()

    chunks = streamlib._Chunked()
    frames = list(connect.decode_envelopes(b"".join(chunks.feed(body))))
    kinds = ["end" if f.is_end_stream else _kind(f.payload) for f in frames]
    assert kinds == ["delta"] * 3 + CLOSE + ["end"]
    assert feeder.streams == 1 and feeder.active == []
