"""A client connection's task cancelled when the proxy stops ends without asyncio's "Exception in
callback" traceback (Python 3.12.1 calls `task.exception()` on the cancelled task)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mitmproxy.proxy.server import ConnectionHandler

from cursor_byok.proxy.cancelled_streams import quiet_cancelled_streams


async def _serve_and_cancel() -> list[dict[str, Any]]:
    """A client connects to an `asyncio.start_server` whose callback awaits
    `ConnectionHandler.handle_client` last, as mitmproxy's `handle_stream` does; its task is
    cancelled, as mitmproxy does at shutdown. What reached the loop's exception handler."""
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    tasks: list[asyncio.Task[Any]] = []
    theirs: list[asyncio.StreamWriter] = []

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks.append(asyncio.current_task())  # type: ignore[arg-type]
        theirs.append(writer)
        await ConnectionHandler.handle_client(None)  # type: ignore[arg-type]

    server = await asyncio.start_server(connected, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    while not tasks:
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # the handler now waits
    tasks[0].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(3):
        await asyncio.sleep(0)
    writer.close()
    for their in theirs:
        their.close()  # the unpatched callback failed before closing it
    server.close()
    await server.wait_closed()
    return reported


@pytest.fixture
def waiting_body(monkeypatch) -> None:
    """mitmproxy's handler replaced by one that waits until cancelled (before the wrapper)."""

    async def handle_client(self) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(ConnectionHandler, "handle_client", handle_client)


def test_a_cancelled_connection_reports_nothing(waiting_body) -> None:
    undo = quiet_cancelled_streams()
    assert undo is not None
    try:
        assert asyncio.run(_serve_and_cancel()) == []
    finally:
        undo()


def test_installed_once_and_undone(monkeypatch) -> None:
    current = ConnectionHandler.handle_client  # wrapped already if a proxy of this worker loaded
    original = getattr(current, "__wrapped__", current)
    monkeypatch.setattr(ConnectionHandler, "handle_client", original)
    undo = quiet_cancelled_streams()
    assert undo is not None
    assert quiet_cancelled_streams() is None
    undo()
    assert ConnectionHandler.handle_client is original


def test_without_it_this_python_reports_the_cancelled_task(waiting_body) -> None:
    """The check above can fail: on Pythons whose callback asks `task.cancelled()` first
    (after 3.12.1) nothing is reported either way."""
    reported = asyncio.run(_serve_and_cancel())
    if reported:
        assert isinstance(reported[0].get("exception"), asyncio.CancelledError)
        assert "Exception in callback" in reported[0]["message"]
