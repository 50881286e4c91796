"""Issue 33 item 6: the providers' TLS context (100-350 ms of CPU, once per process) is built in
a thread when the proxy starts, not on the event loop by the first model call, where it stalled
every client's streams that long."""

from __future__ import annotations

import asyncio
import threading

from cursor_byok import outbound
from cursor_byok.proxy.loopback.addon import Loopback
from cursor_byok.proxy.routing import Routes
from cursor_byok.proxy.run_registry import RunRegistry


async def _never(live) -> None:  # no run is started here
    raise AssertionError("no run is started")


async def test_the_tls_context_is_built_off_the_loop_at_start(monkeypatch) -> None:
    built = asyncio.Event()
    threads: list[int] = []
    loop = asyncio.get_running_loop()

    def tls_context(ca_file: str | None = None):
        threads.append(threading.get_ident())
        loop.call_soon_threadsafe(built.set)

    monkeypatch.setattr(outbound, "tls_context", tls_context)
    registry = RunRegistry(_never)
    loopback = Loopback(registry, Routes())
    loopback.running()
    try:
        await asyncio.wait_for(built.wait(), 10)
        assert await loopback.wait_ready() is None
    finally:
        await loopback.stop()
    assert threads and threads[0] != threading.get_ident()
