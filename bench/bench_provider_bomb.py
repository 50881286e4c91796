"""Peak RSS of one provider call whose answer is a compression bomb (issue 23), in-process.

    uv run python bench/bench_provider_bomb.py [--expanded-mib 1024] [--encodings gzip,zstd]
                                               [--shapes zeros,comments]

A feeder process on 127.0.0.1 answers every POST with HTTP 200, `text/event-stream` and a body
compressed with `content-encoding: <encoding>` that expands to `--expanded-mib` MiB:

- zeros: NUL bytes, no line end at all (the SSE line bound has to stop it): ~1 MB of gzip for
  1 GiB, as concatenated gzip members of 64 MiB each;
- comments: `: k` keep-alive comments, which never grow a line or an event: the stream is read
  to its end (1 GiB of SSE), then fails as a stream without a terminator;
- datalines: empty `data:` lines and no blank line, one event that only grows (the SSE event
  bound has to stop it, counting what each held line costs).

Each call runs in a fresh consumer process (so its peak is its own), through the adapter as the
agent loop runs it (`stream_with_retries`, no retries). Its peak RSS (`VmHWM`) is reset through
`/proc/self/clear_refs` after a warm-up call to the same feeder, so the figure is the growth the
bomb caused. Linux only; 127.0.0.1 only. Prints one line per (encoding, shape): the error the
call ended with, RSS growth, CPU seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

MiB = 1 << 20


def body(encoding: str, shape: str, expanded: int) -> bytes:
    unit = {
        "zeros": lambda: b"\0" * (64 * MiB),
        "comments": lambda: b": k\n\n" * (64 * MiB // 5),
        "datalines": lambda: b"data:\n" * (64 * MiB // 6),
    }[shape]()
    members = max(1, expanded // (64 * MiB))
    if encoding == "gzip":
        return gzip.compress(unit, compresslevel=9) * members
    from cursor_byok.wire.inflate import zstd_compress

    return zstd_compress(unit * members, level=19)


# --- feeder (its own process) -----------------------------------------------------------------


async def serve(encoding: str, shape: str, expanded: int) -> None:
    bomb = body(encoding, shape, expanded)
    small = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                length = 0
                while (raw := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = raw.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                warm = b"/warm/" in line
                payload = small if warm else bomb
                coding = b"" if warm else b"content-encoding: %s\r\n" % encoding.encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n%s"
                    b"content-length: %d\r\n\r\n" % (coding, len(payload))
                )
                for i in range(0, len(payload), 64 * 1024):
                    writer.write(payload[i : i + 64 * 1024])
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], len(bomb), flush=True)
    await asyncio.to_thread(sys.stdin.read)
    os._exit(0)


# --- consumer (its own process) ---------------------------------------------------------------


def vm(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


async def consume(port: int) -> None:
    from cursor_byok.providers import ModelRequest
    from cursor_byok.providers import ProviderError
    from cursor_byok.providers import ProviderSettings
    from cursor_byok.providers import make_provider
    from cursor_byok.providers import stream_with_retries

    request = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])

    async def call(base: str) -> str:
        provider = make_provider(
            ProviderSettings(kind="openai-chat", base_url=base, api_key="bench", read_timeout=60)
        )
        try:
            async for _ in stream_with_retries(provider, request, max_retries=0):
                pass
        except ProviderError as error:
            return str(error)
        finally:
            await provider.aclose()
        return "ended without an error"

    await call(f"http://127.0.0.1:{port}/warm/v1")  # imports, first connection
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := current RSS
    before = vm("VmHWM")
    cpu = time.process_time()
    outcome = await call(f"http://127.0.0.1:{port}/v1")
    cpu = time.process_time() - cpu
    print(f"{vm('VmHWM') - before:.0f}\t{cpu:.2f}\t{outcome[:150]}", flush=True)


def run(encoding: str, shape: str, expanded: int) -> str:
    feeder = subprocess.Popen(
        [sys.executable, __file__, "--serve", encoding, shape, str(expanded)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert feeder.stdout is not None and feeder.stdin is not None
    port, size = feeder.stdout.readline().split()
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--consume", port],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        feeder.stdin.close()
        feeder.wait(10)
    if out.returncode != 0:
        return f"consumer failed: {out.stderr.strip().splitlines()[-1:]}"
    growth, cpu, outcome = out.stdout.strip().split("\t", 2)
    return (
        f"  {encoding:<5} {shape:<9} {int(size) / MiB:6.2f} MiB on the wire → {expanded // MiB} MiB"
        f"   RSS growth {growth:>4} MiB   CPU {cpu} s   {outcome}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        asyncio.run(serve(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--consume":
        asyncio.run(consume(int(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--expanded-mib", type=int, default=1024)
    parser.add_argument("--encodings", default="gzip,zstd")
    parser.add_argument("--shapes", default="zeros,comments,datalines")
    args = parser.parse_args()
    print(f"provider compression bombs, load {os.getloadavg()[0]:.2f}")
    for encoding in args.encodings.split(","):
        for shape in args.shapes.split(","):
            print(run(encoding, shape, args.expanded_mib * MiB), flush=True)


if __name__ == "__main__":
    main()
