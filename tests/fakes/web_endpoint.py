"""A JSON endpoint on 127.0.0.1 (port 0) for the tools that call one (web search, images):
aiohttp's server, each request recorded, answered by a handler the test gives."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Endpoint:
    url: str  # http://127.0.0.1:<port>
    requests: list[web.Request] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)


@contextlib.asynccontextmanager
async def endpoint(handler: Handler) -> AsyncIterator[Endpoint]:
    box: list[Endpoint] = []

    async def record(request: web.Request) -> web.StreamResponse:
        box[0].requests.append(request)
        box[0].bodies.append(await request.read())
        return await handler(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    box.append(Endpoint(f"http://127.0.0.1:{port}"))
    try:
        yield box[0]
    finally:
        await runner.cleanup()
