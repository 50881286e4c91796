"""What the in-memory hop saves per frame and per stream (issue 38 item 1).

    uv run python bench/bench_loopback_hop.py [--streams 20] [--frames 200] [--rounds 5]

mitmproxy's upstream connection to the loopback server, its two ends in one process and one
event loop: over loopback TCP, and made in memory (proxy/loopback/memory_hop.py). The server
side writes `--frames` frames of 100 bytes to each of `--streams` connections, one frame per
loop pass per stream (as a run's frames come); the client side reads as mitmproxy does
(`reader.read(65535)` until EOF). Process CPU time per frame, and per connection made and
closed (1,000 connect/close cycles, no data); medians of `--rounds` interleaved rounds.
Only the transport differs: mitmproxy's HTTP layers, which each frame also crosses, are not in
it (bench_streaming.py's A15t/R15t against A15/R15 measure the whole proxy).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator

from cursor_byok.proxy.loopback.memory_hop import MemoryHop

FRAME = b"f" * 100


class Server:
    def __init__(self, frames: int) -> None:
        self.frames = frames

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(self.frames):
            writer.write(FRAME)
            await asyncio.sleep(0)
        writer.close()

    def accept(self) -> asyncio.StreamReaderProtocol:
        return asyncio.StreamReaderProtocol(asyncio.StreamReader(), self.serve)


async def _read_all(port: int) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = 0
    while data := await reader.read(65535):
        got += len(data)
    writer.close()
    return got


@contextlib.asynccontextmanager
async def hop_to(server: Server, mode: str) -> AsyncIterator[int]:
    """A listener serving `server`, reached over TCP or (mode "memory") in memory; its port."""
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    hop = MemoryHop(server.accept, [port])
    if mode == "memory":
        assert hop.install(asyncio.get_running_loop())
    try:
        yield port
    finally:
        hop.uninstall()
        listener.close()


async def frames_round(mode: str, streams: int, frames: int) -> float:
    """CPU µs per frame for `streams` connections of `frames` frames each."""
    async with hop_to(Server(frames), mode) as port:
        t0 = time.process_time()
        got = await asyncio.gather(*(_read_all(port) for _ in range(streams)))
        cpu = time.process_time() - t0
    assert sum(got) == streams * frames * len(FRAME), got
    return cpu / (streams * frames) * 1e6


async def connect_round(mode: str, cycles: int) -> float:
    """CPU µs per connection made, served and closed with no data."""
    async with hop_to(Server(0), mode) as port:
        t0 = time.process_time()
        for _ in range(cycles):
            await _read_all(port)
        cpu = time.process_time() - t0
    return cpu / cycles * 1e6


async def main(args: argparse.Namespace) -> None:
    results: dict[tuple[str, str], list[float]] = {}
    modes = ["tcp", "memory"]
    for round_ in range(args.rounds):
        for mode in modes if round_ % 2 == 0 else modes[::-1]:
            per_frame = await frames_round(mode, args.streams, args.frames)
            per_conn = await connect_round(mode, 1000)
            results.setdefault((mode, "frame"), []).append(per_frame)
            results.setdefault((mode, "conn"), []).append(per_conn)
    print(
        f"{args.streams} streams x {args.frames} frames of {len(FRAME)} bytes, {args.rounds} rounds"
    )
    print(f"{'hop':8} {'CPU µs/frame':>14} {'CPU µs/connection':>18}")
    for mode in modes:
        frame = results[(mode, "frame")]
        conn = results[(mode, "conn")]
        print(
            f"{mode:8} {statistics.median(frame):8.1f} [{min(frame):.1f}–{max(frame):.1f}]"
            f" {statistics.median(conn):8.0f} [{min(conn):.0f}–{max(conn):.0f}]"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
