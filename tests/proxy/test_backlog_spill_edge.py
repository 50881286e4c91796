"""The edge of the backlog spill (issue 38 item 2) in-process: a run past its bound writes its
older frames to its file in a few batches while it streams, a stream reopened later replays them
byte-identical, the file goes when the run is dropped, and a run that cannot write keeps its
frames in memory and ends its turn as usual."""

from __future__ import annotations

import asyncio
import logging

from mitmproxy.test import taddons

from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.proxy.run_settings import RunSettings
from cursor_byok.store import backlog_spill
from cursor_byok.wire import connect

OWNER = b"me"
KiB = 1024
DELTAS = 40


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_request() -> pb.AgentClientMessage:
    message = pb.AgentClientMessage()
    message.run_request.conversation_id = "c"
    message.run_request.action.user_message_action.user_message.text = "x"
    message.run_request.conversation_state.SetInParent()
    return message


def text(n: int) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=chr(65 + n % 26) * 1000))
    return pb.AgentServerMessage(interaction_update=update)


async def runner(live, request) -> None:
    for n in range(DELTAS):
        live.emit(text(n))
        await asyncio.sleep(0)
    live.finish()


async def read_all(registry: RunRegistry, request_id: str) -> list[bytes]:
    """Everything one stream of `request_id` gets, up to its end."""
    sub = registry.subscribe(request_id, owner=OWNER)
    written: list[bytes] = []
    ended = asyncio.Event()

    def write(chunk: bytes) -> None:
        written.append(chunk)
        if connect.decode_envelopes(b"".join(written))[-1].is_end_stream:
            ended.set()

    gone = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(registry.stream_to(sub, write, until=gone))
    try:
        async with asyncio.timeout(10):
            await ended.wait()
    finally:
        gone.set_result(None)
        await task
        registry.unsubscribe(sub)
    return [f.payload for f in connect.decode_envelopes(b"".join(written))]


async def turn(tmp_path, monkeypatch, spill_dir):
    """A run of DELTAS frames of 1000 characters, bound 8 KiB: (registry, frames, writes)."""
    writes: list[int] = []
    real = backlog_spill._pwrite

    def counted(fd, data, offset):
        writes.append(len(data))
        return real(fd, data, offset)

    monkeypatch.setattr(backlog_spill, "_pwrite", counted)
    clock = Clock()
    config = RunConfig(coalesce_window=0, backlog_memory=8 * KiB, linger=60)
    registry = RunRegistry(runner, config=config, clock=clock)
    registry.spill_dir = spill_dir
    registry.start()
    registry.receive("r", 0, run_request(), raw=b"1", owner=OWNER)  # uploaded first: no stream
    first = await read_all(registry, "r")
    assert connect.parse_end_stream(first[-1]).ok
    return registry, clock, first, writes


async def test_a_long_run_spills_in_batches_replays_and_drops_its_file(
    tmp_path, monkeypatch
) -> None:
    folder = tmp_path / "runs"
    registry, clock, first, writes = await turn(tmp_path, monkeypatch, folder)
    [live] = registry.runs.values()
    outbox = live.core.outbox
    assert len(first) == DELTAS + 1
    assert outbox.resident <= 8 * KiB < outbox.size  # most of it is on disk now
    assert 2 <= len(writes) <= DELTAS // 4  # batches of about half the bound, not a frame each
    [path] = folder.iterdir()
    assert path.stat().st_size == sum(writes)
    again = await read_all(registry, "r")  # the same attempt, reopened: from disk
    assert again == first
    clock.now += 61  # past the linger: the run is dropped, and its file with it
    registry.tick()
    assert not registry.runs and list(folder.iterdir()) == []
    await registry.stop()


async def test_without_a_data_dir_the_frames_stay_in_memory(tmp_path, monkeypatch) -> None:
    registry, _clock, first, writes = await turn(tmp_path, monkeypatch, None)
    [live] = registry.runs.values()
    assert writes == [] and live.spill is None and len(first) == DELTAS + 1
    assert live.core.outbox.resident == live.core.outbox.size
    await registry.stop()


async def test_a_run_that_cannot_write_keeps_its_frames_and_ends_well(
    tmp_path, monkeypatch, caplog
) -> None:
    (tmp_path / "data").write_bytes(b"a file where the data dir should be")
    with caplog.at_level(logging.WARNING):
        registry, _clock, first, writes = await turn(
            tmp_path, monkeypatch, tmp_path / "data" / "runs"
        )
    [live] = registry.runs.values()
    assert len(first) == DELTAS + 1
    assert writes == [] and live.core.outbox.resident == live.core.outbox.size
    assert len([r for r in caplog.records if "stays in memory" in r.message]) == 1
    assert await read_all(registry, "r") == first
    await registry.stop()


def test_the_settings_point_runs_at_the_data_dir_and_prune_at_start(tmp_path) -> None:
    registry = RunRegistry(runner)
    settings = RunSettings(registry)
    stale = tmp_path / "runs" / "0123-abcd.backlog"
    stale.parent.mkdir()
    stale.write_bytes(b"left by a killed proxy")
    with taddons.context(settings) as tctx:
        tctx.configure(
            settings, cursor_byok_data_dir=str(tmp_path), cursor_byok_backlog_memory_kb=3072
        )
        assert registry.spill_dir == tmp_path / "runs"
        assert registry.config.backlog_memory == 3 * 1024 * 1024
        settings.running()
    assert not stale.exists()
