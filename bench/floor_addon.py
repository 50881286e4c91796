"""F of bench_streaming.py: the floor under any addon that answers a stream with a provider's text.

Plain mitmdump runs this script alone (as B runs passthrough.py). Each RunSSE-shaped request is
pointed, as the addon points its streams, at a server in this process reached in memory
(cursor_byok's memory_hop.py), which asks the feeder's OpenAI-Chat endpoint with aiohttp, parses
its stream with our SSE parser and `json`, and writes a text-delta envelope per provider delta,
coalesced as the addon does by default (15 ms), then the end-stream envelope. No run, no turn, no
checkpoint, no KV: only what a stream made from a provider's answer cannot do without. Its cost
over B is what serving such a stream costs at the least; the addon's configurations cost that and
a whole Agent turn more.
"""

from __future__ import annotations

import asyncio
import json
import os

import aiohttp
from mitmproxy import http

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.sse import SseParser
from cursor_byok.proxy.loopback.memory_hop import MemoryHop
from cursor_byok.wire import connect

FEEDER = int(os.environ["BENCH_UPSTREAM_PORT"])
WINDOW = 0.015  # seconds: the addon's default coalescing window
_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/connect+proto\r\n"
    b"connect-protocol-version: 1\r\ntransfer-encoding: chunked\r\n\r\n"
)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Floor:
    def __init__(self) -> None:
        self.port = 0
        self.session: aiohttp.ClientSession | None = None
        self.hop: MemoryHop | None = None

    async def running(self) -> None:
        server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self.hop = MemoryHop(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(), self.serve), [self.port]
        )
        self.hop.install(asyncio.get_running_loop())
        self.session = aiohttp.ClientSession()

    def request(self, flow: http.HTTPFlow) -> None:
        flow.request.scheme = "http"
        flow.request.host = "127.0.0.1"
        flow.request.port = self.port
        flow.request.content = b""  # x-bench-deltas, a header, goes with it

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:
            flow.response.stream = True

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        deltas = "0"
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"x-bench-deltas":
                deltas = value.strip().decode()
        writer.write(_HEAD)
        window = Window(writer)
        assert self.session is not None
        async with self.session.post(
            f"http://127.0.0.1:{FEEDER}/v1/chat/completions",
            data=b'{"stream":true}',
            headers={"content-type": "application/json", "x-bench-deltas": deltas},
        ) as response:
            parser = SseParser()
            async for data in response.content.iter_any():
                for event in parser.feed(data):
                    if event.data == "[DONE]":
                        break
                    for choice in json.loads(event.data)["choices"]:
                        text = choice["delta"].get("content")
                        if text:
                            message = pb.AgentServerMessage(
                                interaction_update=pb.InteractionUpdate(
                                    text_delta=pb.TextDeltaUpdate(text=text)
                                )
                            )
                            window.add(connect.encode_frame(message.SerializeToString()))
        window.flush()
        writer.write(_chunk(connect.encode_end_stream(None)) + b"0\r\n\r\n")
        await writer.drain()
        writer.close()


class Window:
    """The addon's coalescing rule at its default (cursor_byok_coalesce_ms=15): the first
    envelope after a quiet spell goes at once; those within the window of the last one sent are
    held and go together when it has passed."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.loop = asyncio.get_running_loop()
        self.held: list[bytes] = []
        self.sent_at = -WINDOW
        self.timer: asyncio.TimerHandle | None = None

    def add(self, frame: bytes) -> None:
        if self.timer is None and self.loop.time() - self.sent_at >= WINDOW:
            self.writer.write(_chunk(frame))
            self.sent_at = self.loop.time()
            return
        self.held.append(frame)
        if self.timer is None:
            self.timer = self.loop.call_at(self.sent_at + WINDOW, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.held:
            self.writer.write(_chunk(b"".join(self.held)))
            self.held.clear()
            self.sent_at = self.loop.time()


addons = [Floor()]
