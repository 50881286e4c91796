"""A loopback server that writes HTTP/1.1 by hand, byte for byte, so client tests can send
exactly the answers (and the misbehaviour) they need: split chunks, cut bodies, closes."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable
from collections.abc import Callable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One request (head and content-length body) as bytes; None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return head + await reader.readexactly(length)


def answer_each(body: bytes) -> Handler:
    """A handler answering every request on its connection with `body`, chunked."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(HEAD + chunk(body) + b"0\r\n\r\n")
            await writer.drain()

    return handler


def answer_once(body: bytes) -> Handler:
    """As answer_each, for one request; then the server closes the connection."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(body) + b"0\r\n\r\n")
        await writer.drain()

    return handler


class Server:
    """A 127.0.0.1 server running `handler` per connection; counts connections."""

    def __init__(self, handler: Handler, ssl_context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.ssl_context = ssl_context
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    async def _run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # stopped by __aexit__: nothing to report
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._run, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
