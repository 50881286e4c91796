"""A fake fill-in-the-middle provider on 127.0.0.1 (aiohttp): `/v1/completions` (OpenAI legacy
completions with `suffix`, as Ollama, vLLM, llama.cpp and DeepSeek serve it),
`/v1/fim/completions` (Mistral's), and `/v1/chat/completions` (a chat model, for the FIM prompt
over chat).

    async with FakeFim(answer="return a + b") as fim:
        fim.base_url   # http://127.0.0.1:<port>/v1
        fim.requests   # each request's JSON body, in order

- `answer`: the text streamed back (a string, or a function of the request body), in
  `chunks` pieces, one SSE event each, then a finish reason, usage and `[DONE]`.
- `gate`: when set to an `asyncio.Event`, each answer waits for it before its first byte (a slow
  model; lets a test abandon requests without sleeping).
- `hold`: when set to an `asyncio.Event`, each answer waits for it after its first piece (a model
  mid-answer: lets a test see what reached the editor before the model finished).
- `burst`: the whole answer in one write (an instant model: bench/bench_tab.py).
- `fail`: an HTTP status to answer every request with (an OpenAI-shaped error body).
- Counters and events: `arrived` (set at every request), `active` / `max_active` (calls being
  answered at once), `cancelled` (calls whose client went away before the end), `finished`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web


class FakeFim:
    def __init__(
        self,
        answer: str | Callable[[dict[str, Any]], str] = "",
        *,
        chunks: int = 3,
        gate: asyncio.Event | None = None,
        fail: int = 0,
        burst: bool = False,
        hold: asyncio.Event | None = None,
    ) -> None:
        self.burst = burst
        self.hold = hold
        self.answer = answer
        self.chunks = chunks
        self.gate = gate
        self.fail = fail
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.arrived = asyncio.Event()
        self.active = 0
        self.max_active = 0
        self.cancelled = 0
        self.finished = 0
        self.idle = asyncio.Event()  # set whenever no call is being answered
        self.idle.set()
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeFim:
        app = web.Application()
        for path in ("/v1/completions", "/v1/fim/completions", "/v1/chat/completions"):
            app.router.add_post(path, self._handle)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def _text(self, body: dict[str, Any]) -> str:
        return self.answer(body) if callable(self.answer) else self.answer

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.paths.append(request.path)
        self.arrived.set()
        if self.fail:
            error = {"error": {"message": "the model is overloaded", "type": "server_error"}}
            return web.json_response(error, status=self.fail)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        self.idle.clear()
        try:
            return await self._stream(request, body)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.active -= 1
            if not self.active:
                self.idle.set()

    async def _stream(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        if self.gate is not None:
            await self.gate.wait()
        events: list[bytes] = []
        text = self._text(body)
        size = max(1, -(-len(text) // self.chunks))
        chat = request.path.endswith("/chat/completions")
        mistral = request.path.endswith("/fim/completions")
        for start in range(0, len(text), size):
            piece = text[start : start + size]
            if chat or mistral:
                choice: dict[str, Any] = {"index": 0, "delta": {"content": piece}}
            else:
                choice = {"index": 0, "text": piece}
            events.append(_event({"choices": [choice]}))
        last: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        if chat or mistral:
            last["delta"] = {}
        else:
            last["text"] = ""
        usage = {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(text) // 4}
        events.append(_event({"choices": [last], "usage": usage}))
        events.append(b"data: [DONE]\n\n")
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        if self.burst:
            response.content_length = sum(map(len, events))
        await response.prepare(request)
        for i, event in enumerate([b"".join(events)] if self.burst else events):
            await response.write(event)
            if i == 0 and self.hold is not None:
                await self.hold.wait()
        await response.write_eof()
        self.finished += 1
        return response


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"
