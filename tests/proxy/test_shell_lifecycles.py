"""The shell's lifecycles as states (issue 32 item 1): the turn task's interrupt
(`live_run.TASK_TRANSITIONS`), a response stream's writer (`write_pump.PUMP_TRANSITIONS`) and the
`Run` upload's route (`run_upload.ROUTE_TRANSITIONS`)."""

from __future__ import annotations

import asyncio

import pytest

from cursor_byok.agent.turn import TurnCancelled
from cursor_byok.agent.turn import TurnFailed
from cursor_byok.core.states import IllegalEvent
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.live_run import TaskState
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.write_pump import PumpState
from cursor_byok.proxy.write_pump import WritePump

OWNER = b"me"


def _run_request() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "c"
    message.run_request.action.user_message_action.user_message.text = "hi"
    return message


async def test_the_first_interrupt_wins_until_taken_and_a_closing_turn_hears_the_next() -> None:
    running, closing = asyncio.Event(), asyncio.Event()
    heard: list[BaseException | None] = []

    async def runner(live, request) -> None:
        try:
            running.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            heard.append(live.take_interrupt())
            heard.append(live.take_interrupt())  # once
            try:
                closing.set()
                await asyncio.Event().wait()  # a checkpoint that hangs
            except asyncio.CancelledError:
                heard.append(live.take_interrupt())
            live.finish()

    registry = RunRegistry(runner)
    registry.start()
    registry.receive("r", 0, _run_request(), raw=b"1", owner=OWNER)
    live = registry.run_for("r")
    assert live is not None
    await asyncio.wait_for(running.wait(), 5)
    assert live.task_state is TaskState.RUNNING
    live.interrupt(TurnCancelled("first"))
    live.interrupt(TurnFailed("internal", "second"))  # dropped: the first is not taken yet
    assert live.task_state is TaskState.INTERRUPTED
    await asyncio.wait_for(closing.wait(), 5)
    assert live.task_state is TaskState.CLOSING
    live.interrupt(TurnFailed("deadline_exceeded", "third"))
    assert live.task is not None
    await asyncio.wait_for(live.task, 5)
    first, again, third = heard
    assert isinstance(first, TurnCancelled) and first.reason == "first" and again is None
    assert isinstance(third, TurnFailed) and third.code == "deadline_exceeded"
    assert live.task_state is TaskState.DONE
    live.interrupt(TurnCancelled("late"))  # a done turn hears nothing
    with pytest.raises(IllegalEvent):  # a run never starts its turn twice
        live.start(live.core.run_request, runner)
    await registry.stop()


async def test_a_pump_blocks_while_full_writes_after_the_drain_and_ends_once() -> None:
    reads = [([b"a", b"b"], False), ([b"c"], False), ([b"end"], True)]
    written: list[bytes] = []
    drained = asyncio.Event()

    def read() -> tuple[list[bytes], bool]:
        return reads.pop(0) if reads else ([], False)

    async def drain() -> None:
        await drained.wait()

    pump = WritePump(read, written.append, full=lambda: len(written) < 2, drain=drain)
    never = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(pump.run(never))
    await asyncio.sleep(0)
    assert pump.state is PumpState.BLOCKED and written == [b"ab"]
    pump()  # a wake-up while blocked writes nothing
    assert written == [b"ab"]
    drained.set()
    await asyncio.sleep(0)
    assert written == [b"ab", b"c"] and pump.state is PumpState.WRITING
    pump()
    await asyncio.wait_for(task, 5)
    assert pump.state is PumpState.ENDED and written[-1] == b"end" and pump.chunks == 3
    pump()
    assert pump.chunks == 3


async def test_a_failing_writer_ends_its_stream_and_says_why() -> None:
    def write(_chunk: bytes) -> None:
        raise ConnectionResetError("gone")

    pump = WritePump(lambda: ([b"x"], False), write, full=lambda: False, drain=None)
    never = asyncio.get_running_loop().create_future()
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(pump.run(never), 5)
    assert pump.state is PumpState.ENDED


class _Registry:
    """What a `RunUpload` calls of the registry, recorded."""

    def __init__(self) -> None:
        self.parents: dict[str, tuple[str, str]] = {}
        self.received: list[str | None] = []
        self.closed: list[str] = []

    def receive(self, request_id, seqno, message, **_kw) -> None:
        self.received.append(message.WhichOneof("message"))

    def close_attempt(self, request_id, error) -> None:
        self.closed.append(error.code)


class _Recording:
    def client(self, *_args) -> None:
        pass


def _upload(route: str | None):
    from cursor_byok.proxy.run_upload import RunUpload

    registry = _Registry()
    pipe: asyncio.Queue = asyncio.Queue()
    decide = None if route is None else (lambda _rid, _message, _opened: route)
    upload = RunUpload(
        registry,  # type: ignore[arg-type]
        "r",
        OWNER,
        None,
        _Recording(),  # type: ignore[arg-type]
        pipe=pipe if route is not None else None,
        decide=decide,
    )
    return upload, registry, pipe


def _drain(pipe: asyncio.Queue) -> list:
    out = []
    while not pipe.empty():
        out.append(pipe.get_nowait())
    return out


def test_a_served_upload_feeds_the_registry_and_fails_on_a_cut_envelope() -> None:
    from cursor_byok.proxy.routing import LOCAL
    from cursor_byok.proxy.run_upload import Route
    from cursor_byok.wire import connect

    upload, registry, pipe = _upload(LOCAL)
    assert upload.route is Route.UNDECIDED
    frame = connect.encode_frame(_run_request().SerializeToString())
    upload(frame)
    assert upload.route is Route.SERVED and registry.received == ["run_request"]
    upload(frame[:3])  # half an envelope, then the client closes
    upload.close()
    assert upload.route is Route.STOPPED and registry.closed == ["invalid_argument"]
    upload(frame)  # nothing is read once stopped
    assert registry.received == ["run_request"] and _drain(pipe) == []


def test_a_relayed_upload_pipes_every_byte_and_resets_cursor_when_the_client_goes() -> None:
    from cursor_byok.proxy.loopback.spec import RELAY_RESET
    from cursor_byok.proxy.routing import CURSOR
    from cursor_byok.proxy.run_upload import Route
    from cursor_byok.wire import connect

    upload, registry, pipe = _upload(CURSOR)
    frame = connect.encode_frame(_run_request().SerializeToString())
    upload(frame[:4])
    upload(frame[4:] + b"more")
    assert upload.route is Route.RELAYED and registry.received == []
    upload(b"later")
    assert _drain(pipe) == [frame + b"more", b"later"]
    upload.abandon()
    upload.close()
    assert upload.route is Route.STOPPED and _drain(pipe) == [RELAY_RESET, None]


def test_bad_bytes_before_the_route_stop_the_upload_and_end_cursors_side() -> None:
    from cursor_byok.proxy.routing import CURSOR
    from cursor_byok.proxy.run_upload import Route

    upload, registry, pipe = _upload(CURSOR)
    upload(b"\xff\x00\x00\x00\x01x")  # unknown envelope flags
    assert upload.route is Route.STOPPED and registry.closed
    upload.close()
    assert _drain(pipe) == [None]
