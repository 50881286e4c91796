"""Issue 33 item 5: the loopback server's bound on connections still sending their request
leaves room for the streams the addon has pointed at it (mitmproxy opens a burst's connections
before it writes their heads), and still bounds connections from elsewhere."""

from __future__ import annotations

import asyncio

import pytest

from cursor_byok.proxy.loopback import server
from cursor_byok.proxy.loopback.ports import PortPicker
from cursor_byok.proxy.loopback.server import Streamer
from cursor_byok.proxy.run_registry import RunRegistry

PENDING = 4


async def _never(live) -> None:  # a runner no test here reaches
    raise AssertionError("no run is started")


async def _open_quiet(
    port: int, count: int
) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """`count` connections that send nothing, each accepted by the server before the next."""
    return [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]


async def _until(condition) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.005)


@pytest.mark.parametrize("expected", [0, 3])
async def test_the_oldest_quiet_connection_past_the_bound_is_closed(monkeypatch, expected) -> None:
    monkeypatch.setattr(server, "MAX_PENDING", PENDING)
    registry = RunRegistry(_never)
    streamer = Streamer(registry, expected=lambda: expected)
    port = await streamer.start(listeners=1)
    bound = PENDING + expected
    try:
        conns = await _open_quiet(port, bound)
        await _until(lambda: streamer.open_streams == bound)
        assert streamer.dropped == 0  # the proxy's own burst fits
        conns += await _open_quiet(port, 1)
        assert await asyncio.wait_for(conns[0][0].read(), 5) == b""  # the oldest: closed
        await _until(lambda: streamer.open_streams == bound)
        assert streamer.dropped == 1
    finally:
        for _, writer in conns:
            writer.close()
        await streamer.stop()
        await registry.stop()


def test_the_picker_counts_every_open_stream() -> None:
    ports = PortPicker([1000, 1001])
    taken = [ports.take("a") for _ in range(3)] + [ports.take("b")]
    assert ports.total == 4
    ports.give("a", taken[0])
    ports.give("a", 9999)  # not one of its streams: no change
    assert ports.total == 3
    ports.forget("a")
    assert ports.total == 1
    ports.give("a", taken[1])  # a late end of a forgotten stream
    assert ports.total == 1


async def test_a_hop_failing_in_the_os_ends_quietly(monkeypatch, caplog) -> None:
    """A hop the client reset can fail below the socket layer's resets (asyncio's selector
    raised FileNotFoundError for a descriptor already gone, under load): the connection ends
    with a debug line, never an unhandled traceback in the proxy's log."""

    async def gone(self, conn, request, reader, writer) -> None:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(Streamer, "_respond", gone)
    registry = RunRegistry(_never)
    streamer = Streamer(registry)
    port = await streamer.start(listeners=1)
    try:
        with caplog.at_level("DEBUG"):
            await _one_hop_closed_unanswered(streamer, port)
        assert "loopback connection ended" in caplog.text
        assert not [r for r in caplog.records if r.levelno >= 30 or r.exc_info]
    finally:
        await streamer.stop()


async def test_an_unexpected_failure_of_a_hop_is_one_line(monkeypatch, caplog) -> None:
    """Whatever else ends a hop is said in one warning line naming it, never a traceback."""

    async def broken(self, conn, request, reader, writer) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Streamer, "_respond", broken)
    streamer = Streamer(RunRegistry(_never))
    port = await streamer.start(listeners=1)
    try:
        with caplog.at_level("DEBUG"):
            await _one_hop_closed_unanswered(streamer, port)
        assert "loopback connection failed: RuntimeError: boom" in caplog.text
        assert not [r for r in caplog.records if r.exc_info]
    finally:
        await streamer.stop()


async def _one_hop_closed_unanswered(streamer: Streamer, port: int) -> None:
    """One request to the loopback whose hop fails: the connection closes with no answer and
    the streamer counts no open stream afterwards."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, no answer
    await _until(lambda: streamer.open_streams == 0)
    writer.close()
