"""The asyncio shell in-process: RunRegistry, LiveRun, the loopback streamer and run_turn,
driven by a tiny in-process client (no mitmproxy, no provider)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import httpx
import pytest

from cursor_byok.agent.scripted import ScriptedAgent
from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.agent.turn import TurnOptions
from cursor_byok.agent.turn import run_turn
from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.loopback.server import Streamer
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.turn_pacing import Pacer
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire import connect
from cursor_byok.wire.connect import EndStreamError

OWNER = b"me"


async def frames(registry: RunRegistry, sub) -> AsyncIterator[bytes]:
    """A stream's chunks as `stream_to` writes them, as an async iterator."""
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    never = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(registry.stream_to(sub, queue.put_nowait, until=never))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (chunk := await queue.get()) is not None:
            yield chunk
        task.result()
    finally:
        task.cancel()


def run_request(text: str, run_id: str = "") -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "c"
    message.run_request.run_id = run_id
    message.run_request.action.user_message_action.user_message.text = text
    message.run_request.conversation_state.SetInParent()
    return message


class InProcessClient:
    """Reads one attempt's frames from the registry and answers execs and KV like Cursor."""

    def __init__(self, registry: RunRegistry, request_id: str, files: dict[str, str]):
        self.registry = registry
        self.request_id = request_id
        self.files = files
        self.seqno = 0
        self.messages: list[pb.AgentServerMessage] = []
        self.end: connect.EndStream | None = None
        self.execs = 0

    def send(self, message: pb.AgentClientMessage) -> None:
        self.registry.receive(
            self.request_id, self.seqno, message, raw=message.SerializeToString(), owner=OWNER
        )
        self.seqno += 1

    async def run(self, first: pb.AgentClientMessage) -> None:
        sub = self.registry.subscribe(self.request_id, owner=OWNER)
        self.send(first)
        try:
            async for chunk in frames(self.registry, sub):
                for frame in connect.decode_envelopes(chunk):
                    if frame.is_end_stream:
                        self.end = connect.parse_end_stream(frame.payload)
                        return
                    self.handle(pb.AgentServerMessage.FromString(frame.payload))
        finally:
            self.registry.unsubscribe(sub)

    def handle(self, message: pb.AgentServerMessage) -> None:
        self.messages.append(message)
        if message.HasField("exec_server_message"):
            request = message.exec_server_message
            self.execs += 1
            reply = pb.AgentClientMessage()
            reply.exec_client_message.id = request.id
            reply.exec_client_message.read_result.success.content = self.files[
                request.read_args.path
            ]
            self.send(reply)
        elif message.HasField("kv_server_message"):
            kv = message.kv_server_message
            reply = pb.AgentClientMessage()
            reply.kv_client_message.id = kv.id
            reply.kv_client_message.set_blob_result.SetInParent()
            assert hashlib.sha256(kv.set_blob_args.blob_data).digest() == kv.set_blob_args.blob_id
            self.send(reply)


def registry_for(tmp_path, **config) -> RunRegistry:
    blobs = BlobStore(tmp_path / "blobs")

    async def runner(live, request) -> None:
        await run_turn(live, request, blobs=blobs, agent=ScriptedAgent())

    registry = RunRegistry(runner, config=RunConfig(**config))
    registry.start()
    return registry


async def test_run_turn_in_process_with_the_scripted_agent(tmp_path) -> None:
    registry = registry_for(tmp_path)
    client = InProcessClient(registry, "r1", {"notes.txt": "alpha\nbeta\n"})
    seen: list[tuple[str, bool]] = []
    registry.observers.append(lambda run_id, payload, end: seen.append((run_id, end)))
    await asyncio.wait_for(client.run(run_request("read notes.txt")), 10)
    assert client.end is not None and client.end.ok
    assert client.execs == 1
    text = "".join(
        m.interaction_update.text_delta.text
        for m in client.messages
        if m.HasField("interaction_update")
    )
    assert "alpha" in text
    assert seen[-1] == ("r1", True) and all(r == "r1" for r, _ in seen)
    await registry.stop()


async def test_a_reconnect_attaches_and_the_turn_runs_once(tmp_path) -> None:
    registry = registry_for(tmp_path)
    runs = []
    inner = registry.runner

    async def counting(live, request) -> None:
        runs.append(live.request_id)
        await inner(live, request)

    registry.runner = counting
    first = InProcessClient(registry, "a", {"notes.txt": "alpha\n"})
    await asyncio.wait_for(first.run(run_request("read notes.txt", run_id="a")), 10)
    again = InProcessClient(registry, "b", {"notes.txt": "alpha\n"})
    await asyncio.wait_for(again.run(run_request("read notes.txt", run_id="a")), 10)
    assert runs == ["a"]
    assert again.end.ok and again.execs == 0  # answered on the first attempt: not sent again
    await registry.stop()


async def test_timer_fires_at_the_deadline_not_on_a_poll(tmp_path) -> None:
    registry = registry_for(tmp_path, heartbeat_interval=0.05, run_request_timeout=0.2)
    sub = registry.subscribe("idle", owner=OWNER)
    loop = asyncio.get_running_loop()
    started = loop.time()
    chunks = [chunk async for chunk in frames(registry, sub)]
    elapsed = loop.time() - started
    envelopes = connect.decode_envelopes(b"".join(chunks))
    assert connect.parse_end_stream(envelopes[-1].payload).error.code == "not_found"
    assert sum(not f.is_end_stream for f in envelopes) >= 2  # heartbeats while waiting
    assert elapsed < 5  # the timer is armed at the deadline; generous bound for slow machines
    await registry.stop()


async def test_a_failing_timer_callback_is_logged_and_timers_keep_running(
    tmp_path, caplog, monkeypatch
) -> None:
    registry = registry_for(tmp_path, run_request_timeout=0.1)
    calls = []
    real_tick = registry.tick

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        real_tick()

    monkeypatch.setattr(registry, "tick", flaky)
    sub = registry.subscribe("x", owner=OWNER)
    [chunk async for chunk in frames(registry, sub)]  # ends once a later tick closes it
    assert "session timers failed" in caplog.text and len(calls) >= 2
    await registry.stop()


async def test_held_deltas_are_flushed_by_a_timer_and_observed_once_final(tmp_path) -> None:
    """First delta at once; the ones within the window wake no reader until the flush timer
    releases them as one frame; the recorder sees each frame once, with its final payload."""
    emitted = asyncio.Event()
    got_a = asyncio.Event()
    finish = asyncio.Event()

    def delta(text: str) -> pb.AgentServerMessage:
        return pb.AgentServerMessage(
            interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
        )

    async def runner(live, request) -> None:
        live.emit(delta("a"))
        await got_a.wait()  # taken by the stream: b and c cannot join it
        live.emit(delta("b"))
        live.emit(delta("c"))
        emitted.set()
        await finish.wait()
        live.finish()

    registry = RunRegistry(runner, config=RunConfig(coalesce_window=0.05))
    registry.start()
    seen: list[bytes] = []
    registry.observers.append(lambda run_id, payload, end: seen.append(payload))
    sub = registry.subscribe("r", owner=OWNER)
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    stream = frames(registry, sub)
    texts = []
    async with asyncio.timeout(10):
        while len(texts) < 2:
            for frame in connect.decode_envelopes(await anext(stream)):
                message = pb.AgentServerMessage.FromString(frame.payload)
                if message.interaction_update.HasField("heartbeat"):
                    continue
                texts.append(message)
                got_a.set()
            if len(texts) == 1:
                await emitted.wait()
                assert len(seen) == 1  # b, c wait for the timer: not final, not observed
        assert [m.interaction_update.text_delta.text for m in texts] == ["a", "bc"]
        finish.set()
        async for _ in stream:
            pass
    decoded = [pb.AgentServerMessage.FromString(p) for p in seen[:-1]]
    assert [m.interaction_update.text_delta.text for m in decoded] == ["a", "bc"]
    await registry.stop()


async def test_liverun_cancel_interrupts_the_turn_and_aborts_pending(tmp_path) -> None:
    waiting = asyncio.Event()

    async def runner(live, request) -> None:
        try:
            waiting.set()
            await live.exec(pb.ExecServerMessage(read_args=pb.ReadArgs(path="x")))
        except asyncio.CancelledError:
            reason = live.take_interrupt()
            assert isinstance(reason, TurnCancelled)
            live.abort_pending()
            live.finish(EndStreamError("canceled", reason.reason))

    registry = RunRegistry(runner)
    observed: list[tuple[bytes, bool]] = []
    registry.observers.append(lambda run_id, payload, end: observed.append((payload, end)))
    registry.start()
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    await asyncio.wait_for(waiting.wait(), 5)
    cancel = pb.AgentClientMessage()
    cancel.conversation_action.cancel_action.SetInParent()
    registry.receive("r", 1, cancel, raw=b"2", owner=OWNER)
    run = registry.run_for("r")
    await asyncio.wait_for(run.task, 5)
    assert run.finished
    *frames_, (end, is_end) = observed
    assert is_end and connect.parse_end_stream(end).error.code == "canceled"
    kinds = [pb.AgentServerMessage.FromString(p).WhichOneof("message") for p, _ in frames_]
    assert kinds == ["exec_server_message", "exec_server_control_message"]


async def test_streamer_serves_an_attempt_over_loopback_http(tmp_path) -> None:
    registry = registry_for(tmp_path)
    streamer = Streamer(registry)
    port = await streamer.start()
    client = InProcessClient(registry, "s1", {"notes.txt": "alpha\n"})
    spec = StreamSpec("s1", owner=OWNER)
    try:
        async with (
            httpx.AsyncClient(trust_env=False) as http,
            http.stream(
                "POST",
                f"http://127.0.0.1:{port}/",
                headers={STREAM_HEADER: streamer.header_value(spec)},
            ) as response,
        ):
            assert response.headers["content-type"] == "text/event-stream"
            client.send(run_request("read notes.txt"))
            decoder = connect.EnvelopeDecoder()
            async for chunk in response.aiter_raw():
                for frame in decoder.feed(chunk):
                    if frame.is_end_stream:
                        client.end = connect.parse_end_stream(frame.payload)
                    else:
                        client.handle(pb.AgentServerMessage.FromString(frame.payload))
        wrong = await httpx.AsyncClient(trust_env=False).post(
            f"http://127.0.0.1:{port}/", headers={STREAM_HEADER: "not-the-secret:{}"}
        )
    finally:
        await streamer.stop()
        await registry.stop()
    assert client.end is not None and client.end.ok and client.execs == 1
    assert wrong.status_code == 404


@pytest.mark.parametrize("code", ["invalid_argument", "resource_exhausted"])
async def test_streamer_answers_error_specs_without_reading(tmp_path, code) -> None:
    registry = registry_for(tmp_path)
    streamer = Streamer(registry)
    port = await streamer.start()
    try:
        async with httpx.AsyncClient(trust_env=False) as http:
            spec = StreamSpec("", error=(code, "no"), error_stream=True)
            response = await http.post(
                f"http://127.0.0.1:{port}/", headers={STREAM_HEADER: streamer.header_value(spec)}
            )
    finally:
        await streamer.stop()
        await registry.stop()
    [end] = connect.decode_envelopes(response.content)
    assert connect.parse_end_stream(end.payload).error.code == code


def _text(text: str) -> pb.AgentServerMessage:
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
    )


def _texts(chunks: list[bytes]) -> list[str]:
    out = []
    for frame in connect.decode_envelopes(b"".join(chunks)):
        if not frame.is_end_stream:
            message = pb.AgentServerMessage.FromString(frame.payload)
            if message.interaction_update.HasField("text_delta"):
                out.append(message.interaction_update.text_delta.text)
    return out


async def test_frames_are_written_by_the_emitter_and_a_full_writer_waits_for_its_drain() -> None:
    """stream_to writes a frame inside the turn's emit (no reader task to wake); while the
    writer is full nothing more is written, and the rest follows, in order, after its drain."""
    emitted = asyncio.Event()
    written: list[bytes] = []
    seen_inside_emit: list[int] = []
    drains = 0

    def full() -> bool:  # the first chunk fills the writer's buffer, until it drains
        return bool(written) and not drains

    async def runner(live, request) -> None:
        live.emit(_text("a"))
        seen_inside_emit.append(len(written))  # already written, synchronously
        live.emit(_text("b"))
        live.emit(_text("c"))
        emitted.set()
        live.finish()

    async def drain() -> None:
        nonlocal drains
        await emitted.wait()
        assert _texts(written) == ["a"]  # nothing while full
        drains += 1

    registry = RunRegistry(runner, config=RunConfig(coalesce_window=0))
    registry.start()
    sub = registry.subscribe("r", owner=OWNER)
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    gone = asyncio.get_running_loop().create_future()
    async with asyncio.timeout(10):
        chunks = await registry.stream_to(sub, written.append, until=gone, full=full, drain=drain)
    assert seen_inside_emit and seen_inside_emit[0] >= 1
    assert _texts(written) == ["a", "b", "c"] and drains == 1 and chunks == len(written)
    assert connect.decode_envelopes(written[-1])[-1].is_end_stream
    await registry.stop()


async def test_a_failing_writer_ends_its_stream_not_the_turn() -> None:
    finished = asyncio.Event()

    async def runner(live, request) -> None:
        live.emit(_text("a"))
        live.emit(_text("b"))  # the writer is broken by now: the turn goes on
        live.finish()
        finished.set()

    def write(chunk: bytes) -> None:
        raise RuntimeError("loopback gone")

    registry = RunRegistry(runner, config=RunConfig(coalesce_window=0))
    registry.start()
    sub = registry.subscribe("r", owner=OWNER)
    gone = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(registry.stream_to(sub, write, until=gone))
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    async with asyncio.timeout(10):
        with pytest.raises(RuntimeError, match="loopback gone"):
            await task
        await finished.wait()
    assert not registry._pumps  # the stream's writer is gone with it
    await registry.stop()


async def test_the_shell_logs_what_the_core_notes(caplog) -> None:
    """The core logs nothing; the shell logs its notes with their wording and level."""

    async def runner(live, request) -> None:
        live.finish()

    registry = RunRegistry(runner)
    registry.start()
    caplog.set_level("INFO", logger="cursor_byok.proxy.run_registry")
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    heartbeat = pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())
    registry.receive("r", 1, heartbeat, raw=b"2", owner=OWNER)
    registry.receive("r", 1, run_request("again"), raw=b"3", owner=OWNER)  # seqno 1 reused
    [record] = [r for r in caplog.records if "reused" in r.getMessage()]
    assert record.name == "cursor_byok.proxy.run_registry" and record.levelname == "WARNING"
    assert record.getMessage() == (
        "request r: append_seqno 1 reused by a different message (run_request); dropped"
    )
    await registry.stop()


async def test_the_edge_opens_attempts_through_the_shell(caplog) -> None:
    """open_attempt is how the edge makes an attempt as its request arrives: another client's
    request id is refused, and what the core notes on the way (an eviction) is logged."""
    from cursor_byok.core.runs import Refused

    async def runner(live, request) -> None:
        live.finish()

    registry = RunRegistry(runner, config=RunConfig(max_attempts=1))
    registry.start()
    registry.open_attempt("a", owner=OWNER)
    with pytest.raises(Refused) as refused:
        registry.open_attempt("a", owner=b"someone else", transport="run")
    assert refused.value.code == "permission_denied"
    registry.open_attempt("b", owner=OWNER, transport="run")
    assert "request a: dropped to make room for new requests" in caplog.text
    registry.open_attempt("c", owner=OWNER)
    assert "request b: dropped to make room for new requests" in caplog.text
    await registry.stop()


async def test_a_turn_streaming_past_the_backlog_bound_ends_with_resource_exhausted() -> None:
    """A provider that streams without end cannot grow a run's backlog without bound: the turn
    is failed at its next await, and its stream ends with an error naming the limit."""
    limit = 64 * 1024
    chunk = "x" * 1000

    async def runner(live, request) -> None:
        try:
            while True:
                live.emit(_text(chunk))
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            reason = live.take_interrupt()
            live.finish(EndStreamError(reason.code, str(reason)))

    registry = RunRegistry(runner, config=RunConfig(max_backlog_bytes=limit, coalesce_window=0.005))
    registry.start()
    sub = registry.subscribe("r", owner=OWNER)
    registry.receive("r", 0, run_request("x"), raw=b"1", owner=OWNER)
    async with asyncio.timeout(10):
        chunks = [chunk async for chunk in frames(registry, sub)]
    envelopes = connect.decode_envelopes(b"".join(chunks))
    end = connect.parse_end_stream(envelopes[-1].payload)
    assert end.error.code == "resource_exhausted" and "passed 65536 bytes" in end.error.message
    assert "cursor_byok_max_turn_output_mb" in end.error.message
    streamed = sum(len(e.payload) for e in envelopes[:-1])
    assert limit < streamed < limit + 16 * len(chunk)  # a frame or so beyond the bound
    await registry.stop()


async def test_run_turn_waits_for_a_slot_before_its_set_up_and_before_its_close(tmp_path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    pacer = Pacer()
    seen: list[tuple[int, int]] = []  # (slots given, KV frames the client had) at each wait
    client: InProcessClient | None = None

    async def pace() -> None:
        assert client is not None
        kv = sum(m.HasField("kv_server_message") for m in client.messages)
        seen.append((pacer.given, kv))
        await pacer.slot()

    async def runner(live, request) -> None:
        await run_turn(
            live, request, blobs=blobs, agent=ScriptedAgent(), options=TurnOptions(pace=pace)
        )

    registry = RunRegistry(runner, config=RunConfig())
    registry.start()
    client = InProcessClient(registry, "r1", {"notes.txt": "alpha\n"})
    await asyncio.wait_for(client.run(run_request("read notes.txt")), 10)
    assert client.end is not None and client.end.ok
    assert len(seen) == 2 and pacer.given == 2
    # the first before anything was sent; the second before the close's blob SETs
    assert seen[0] == (0, 0)
    assert seen[1][0] == 1
    assert sum(m.HasField("kv_server_message") for m in client.messages) > seen[1][1]
    await registry.stop()
