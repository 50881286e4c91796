"""Provider side of the per-delta path (issue 15): CPU per delta, stage by stage, in-process.

    uv run python bench/bench_provider_stream.py [--deltas 2000] [--repeats 5]
                                                 [--formats chat,anthropic,responses]
                                                 [--modes burst,paced] [--stages ...]

A feeder in its own process (a raw asyncio HTTP/1.1 server on 127.0.0.1, so its work is not
counted) streams N small text deltas in one of the three wire formats (rendered like a real
provider by tests/fakes/wire.py), as `transfer-encoding: chunked`:

- burst: the whole body at once, 16 KiB HTTP chunks (a few TCP reads on our side);
- paced: one HTTP chunk per SSE event, 1 ms apart (one wake-up per delta, as in real use).

The consumer is this process; each stage adds one layer of the path the agent loop runs:

    raw       asyncio StreamReader.read() of the socket until the end of the chunked body
              (the floor: the event loop's wake-up and one socket read per delta)
    httpx     bench only, not in the package: httpx.AsyncClient (on anyio) streaming the same
              POST, for comparison (httpx is a dev dependency; skipped without it)
    http      + HTTP/1.1 decoding: our HttpClient as the addon runs it (providers/http.py on
              aiohttp since issue 23; our own providers/h1.py on netstream.py before, from
              issue 15; httpx before that)
    sse       + SseParser.feed on every chunk
    json      + JSON decode of every event's data (the adapters' `loads`; stdlib json)
    adapter   the provider adapter as the loop uses it: stream_with_retries(provider) with the
              loop's `match` on the events (SSE parse, JSON, state machine, event objects)
    lean      `adapter` with HttpClient replaced by a bench-only minimal HTTP/1.1 reader on
              asyncio streams (no TLS, pool or timeouts): a floor for any HTTP client

The figure is time.process_time() of this process per delta (µs), median over the repeats
with [min–max]; the difference between two rows is what that layer costs. The machine is
usually shared: compare rows within one run. 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cursor_byok.providers import make_provider
from cursor_byok.providers.base import ModelRequest
from cursor_byok.providers.base import Provider
from cursor_byok.providers.base import ProviderSettings
from cursor_byok.providers.base import ReasoningDelta
from cursor_byok.providers.base import TextDelta
from cursor_byok.providers.http import HttpClient
from cursor_byok.providers.retries import stream_with_retries
from cursor_byok.providers.sse import SseParser

try:
    from cursor_byok.providers.adapter import loads  # what the adapters decode events with
except ImportError:  # before that helper existed: stdlib json
    loads = json.loads

KINDS = {"chat": "openai-chat", "anthropic": "anthropic", "responses": "openai-responses"}
PATHS = {"chat": "/chat/completions", "anthropic": "/messages", "responses": "/responses"}
BURST_CHUNK = 16 * 1024
PACE = 0.001
END = b"0\r\n\r\n"

# --- feeder (its own process) -----------------------------------------------------------------


def render(fmt: str, deltas: int) -> list[bytes]:
    """The SSE events of one answer of `deltas` 4-character text deltas."""
    from fakes.script import Step
    from fakes.wire import Renderer

    words = "the quick brown fox jumps over the lazy dog, "
    text = (words * (deltas * 4 // len(words) + 1))[: deltas * 4]
    return Renderer(fmt, 1, "bench-model").reply(Step("reply", text=text))  # type: ignore[arg-type]


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def _serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    line = await reader.readline()
    if not line:
        return False
    _method, target, _ = line.decode("latin-1").split(" ", 2)
    length = 0
    while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    # target: /<mode>/<deltas>/v1/<format path>
    _, mode, deltas, _v1, *rest = target.split("/")
    fmt = next(f for f, p in PATHS.items() if ("/" + "/".join(rest)) == p)
    events = render(fmt, int(deltas))
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"transfer-encoding: chunked\r\n\r\n"
    )
    if mode == "burst":
        body = b"".join(events)
        writer.write(
            b"".join(_chunk(body[i : i + BURST_CHUNK]) for i in range(0, len(body), BURST_CHUNK))
        )
        writer.write(END)
        await writer.drain()
        return True
    loop = asyncio.get_running_loop()
    due = loop.time()
    for event in events:
        writer.write(_chunk(event))
        due += PACE
        await asyncio.sleep(max(0.0, due - loop.time()))
    writer.write(END)
    await writer.drain()
    return True


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while await _serve_one(reader, writer):
            pass
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def serve() -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the parent closes our stdin
    server.close()
    os._exit(0)  # not asyncio.run's teardown: it would cancel the idle keep-alive handlers loudly


class Feeder:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def base_url(self, mode: str, deltas: int) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/{deltas}/v1"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(5)


# --- a lean HTTP/1.1 reader, bench only ---------------------------------------------------------


class _LeanResponse:
    """Just enough HTTP/1.1 for the feeder: status line, headers, a chunked body."""

    def __init__(self, reader: asyncio.StreamReader, status: int, headers: dict[str, str]):
        self._reader = reader
        self.status = status
        self.headers = headers
        self.finished = False

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        reader = self._reader
        buf = b""
        need = -1  # bytes left in the current chunk, -1 = expecting a size line
        while True:
            data = await reader.read(65536)
            if not data:
                return
            buf = buf + data if buf else data
            out = []
            while True:
                if need < 0:
                    end = buf.find(b"\r\n")
                    if end < 0:
                        break
                    need = int(buf[:end].split(b";", 1)[0], 16)
                    buf = buf[end + 2 :]
                    if need == 0:  # last chunk; no trailers from the feeder
                        if len(buf) < 2:
                            await reader.readexactly(2 - len(buf))
                        self.finished = True
                        if out:
                            yield b"".join(out)
                        return
                if len(buf) < need + 2:
                    break
                out.append(buf[:need])
                buf = buf[need + 2 :]
                need = -1
            if out:
                yield b"".join(out) if len(out) > 1 else out[0]


class LeanHttp:
    """A stand-in for HttpClient (one kept-alive plain-HTTP connection, no TLS, no pool, no
    timeouts): sizes what a hand-written HTTP/1.1 streaming reader could save over httpx."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    @contextlib.asynccontextmanager
    async def post_stream(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> AsyncIterator[_LeanResponse]:
        if self._conn is None:
            self._conn = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._conn
        content = json.dumps(body).encode()
        path = url.split(str(self.port), 1)[1]
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write(
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}"
            f"content-length: {len(content)}\r\n\r\n".encode()
            + content
        )
        status = int((await reader.readline()).split()[1])
        response_headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            response_headers[name.strip().lower()] = value.strip()
        response = _LeanResponse(reader, status, response_headers)
        yield response
        if not response.finished:  # stopped at the format's terminator: as httpx, close
            writer.close()
            self._conn = None

    async def aclose(self) -> None:
        if self._conn is not None:
            self._conn[1].close()


# --- consumer stages --------------------------------------------------------------------------


class Bench:
    def __init__(self, feeder: Feeder, fmt: str, mode: str, deltas: int) -> None:
        self.fmt, self.mode, self.deltas = fmt, mode, deltas
        base = feeder.base_url(mode, deltas)
        self.port = feeder.port
        self.settings = ProviderSettings(kind=KINDS[fmt], base_url=base, api_key="bench")
        self.provider = make_provider(self.settings)
        self.request = ModelRequest(
            model="bench-model", system="s", messages=[{"role": "user", "content": "hi"}]
        )
        self.url, self.headers, self.body = self.provider.build(self.request)  # type: ignore[attr-defined]
        self.http = HttpClient(provider="bench", connect_timeout=10, read_timeout=60)
        self.httpx: Any = None  # made in the loop, on first use
        self.reads = 0  # socket reads (raw) or body chunks (http) of the last run
        self.lean_provider = make_provider(self.settings)
        self.lean_provider._http = LeanHttp(self.port)  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        await self.provider.aclose()
        await self.http.aclose()
        if self.httpx is not None:
            await self.httpx.aclose()
        await self.lean_provider.aclose()

    async def raw(self) -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        content = json.dumps(self.body).encode()
        path = self.url.split(str(self.port), 1)[1]
        writer.write(
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"content-length: {len(content)}\r\n\r\n".encode()
            + content
        )
        tail = b""
        size = 0
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            self.reads += 1
            size += len(chunk)
            tail = (tail + chunk[-5:])[-5:]
            if tail == END:
                break
        writer.close()
        return size

    async def http_(self, client: HttpClient | None = None) -> int:
        size = 0
        client = client or self.http
        async with client.post_stream(self.url, self.headers, self.body) as response:
            async for chunk in response.iter_bytes():
                self.reads += 1
                size += len(chunk)
        return size

    async def httpx_(self) -> int:
        import httpx  # dev dependency: bench and tests only

        if self.httpx is None:
            self.httpx = httpx.AsyncClient(trust_env=False, timeout=60)
        size = 0
        async with self.httpx.stream(
            "POST",
            self.url,
            json=self.body,
            headers={"accept": "text/event-stream", **self.headers},
        ) as response:
            async for chunk in response.aiter_raw():
                self.reads += 1
                size += len(chunk)
        return size

    async def sse(self) -> int:
        parser = SseParser()
        n = 0
        async with self.http.post_stream(self.url, self.headers, self.body) as response:
            async for chunk in response.iter_bytes():
                n += len(parser.feed(chunk))
        return n + len(parser.close())

    async def json_(self) -> int:
        parser = SseParser()
        n = 0
        async with self.http.post_stream(self.url, self.headers, self.body) as response:
            async for chunk in response.iter_bytes():
                for event in parser.feed(chunk):
                    if event.data != "[DONE]":
                        loads(event.data)
                    n += 1
        return n

    async def adapter_lean(self) -> int:
        return await self.adapter(self.lean_provider)

    async def adapter(self, provider: Provider | None = None) -> int:
        texts = 0
        provider = provider or self.provider
        async for event in stream_with_retries(provider, self.request, max_retries=0):
            match event:
                case ReasoningDelta(text):
                    texts += 1
                case TextDelta(text):
                    texts += len(text) > 0
                case _:
                    pass
        if texts != self.deltas:
            raise AssertionError(f"{self.fmt}: {texts} text deltas, expected {self.deltas}")
        return texts

    def stage(self, name: str) -> Callable[[], Awaitable[int]]:
        return {
            "raw": self.raw,
            "httpx": self.httpx_,
            "http": self.http_,
            "sse": self.sse,
            "json": self.json_,
            "adapter": self.adapter,
            "lean": self.adapter_lean,
        }[name]


async def measure(
    bench: Bench, stages: list[str], repeats: int
) -> dict[str, tuple[list[float], list[int]]]:
    """Interleaved rounds (every stage once per round), so load changes hit all stages alike."""
    runs = {stage: bench.stage(stage) for stage in stages}
    for run in runs.values():
        await run()  # warm-up: connection, imports, caches
    out: dict[str, tuple[list[float], list[int]]] = {stage: ([], []) for stage in stages}
    for _ in range(repeats):
        for stage, run in runs.items():
            bench.reads = 0
            cpu = time.process_time()
            await run()
            out[stage][0].append((time.process_time() - cpu) / bench.deltas * 1e6)
            out[stage][1].append(bench.reads)
    return out


def fmt_row(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}–{max(values):.2f}]"


async def main_async(args: argparse.Namespace) -> None:
    stages = args.stages.split(",")
    if "httpx" in stages and importlib.util.find_spec("httpx") is None:
        stages.remove("httpx")
        print("httpx is not installed (a dev dependency): its stage is skipped")
    feeder = Feeder()
    try:
        print(
            f"provider stream: {args.deltas} deltas, {args.repeats} repeats, "
            f"loop {type(asyncio.get_running_loop()).__module__}, "
            f"load {os.getloadavg()[0]:.2f}"
        )
        print(
            "CPU µs per delta of this process, median [min–max]; Δ = this stage − previous "
            "(for httpx and http: − raw)"
        )
        for mode in args.modes.split(","):
            for fmt in args.formats.split(","):
                bench = Bench(feeder, fmt, mode, args.deltas)
                previous = None
                results = await measure(bench, stages, args.repeats)
                for stage in stages:
                    values, reads = results[stage]
                    med = statistics.median(values)
                    if stage in ("httpx", "http") and "raw" in results:
                        previous = statistics.median(results["raw"][0])  # both add HTTP to raw
                    delta = "" if previous is None else f"  Δ {med - previous:+7.2f}"
                    per = f"  reads/delta {statistics.median(reads) / args.deltas:.2f}"
                    per = per if any(reads) else ""
                    print(f"  {mode:<6} {fmt:<10} {stage:<10} {fmt_row(values)}{delta}{per}")
                    if stage != "httpx":  # http's Δ is against raw, sse's against http
                        previous = med
                await bench.aclose()
    finally:
        feeder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--formats", default="chat,anthropic,responses")
    parser.add_argument("--modes", default="burst,paced")
    parser.add_argument("--stages", default="raw,httpx,http,sse,json,adapter,lean")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop (if installed)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    if args.uvloop:
        import uvloop  # not a dependency: `uv run --with uvloop ...`

        uvloop.run(main_async(args))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
