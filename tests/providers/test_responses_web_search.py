"""OpenAI Responses' hosted web search: the tool in the request, the call item in the stream."""

from __future__ import annotations

from typing import Any

from fakes.sse_wire import decode_all
from fakes.sse_wire import splits
from fakes.sse_wire import sse

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers.base import Finish
from cursor_byok.providers.base import ServerToolCall
from cursor_byok.providers.base import ServerToolResult
from cursor_byok.providers.openai_responses import ResponsesStreamState
from cursor_byok.providers.openai_responses import build_body


def ev(name: str, **fields: Any) -> bytes:
    return sse({"type": name, **fields}, event=name)


SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {
        "type": "search",
        "query": "python 3.14 release",
        "sources": [{"type": "url", "url": "https://python.test/314"}],
    },
}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "It is out.", "annotations": []}],
}
STREAM = b"".join(
    [
        ev("response.created", response={"id": "r", "status": "in_progress", "output": []}),
        ev("response.output_item.added", output_index=0, item={**SEARCH, "status": "in_progress"}),
        ev("response.output_item.done", output_index=0, item=SEARCH),
        ev("response.output_item.added", output_index=1, item={**MESSAGE, "content": []}),
        ev("response.output_text.delta", item_id="msg_1", output_index=1, delta="It is out."),
        ev("response.output_item.done", output_index=1, item=MESSAGE),
        ev("response.completed", response={"id": "r", "status": "completed",
                                            "output": [SEARCH, MESSAGE]}),
    ]
)  # fmt: skip


def decode(chunks: list[bytes]):
    return decode_all(ResponsesStreamState(provider="o", model="gpt"), chunks)


def test_search_item_becomes_call_and_result() -> None:
    events, error = decode([STREAM])
    assert error is None
    assert ServerToolCall("ws_1", "web_search", {"query": "python 3.14 release"}) in events
    [result] = [e for e in events if isinstance(e, ServerToolResult)]
    assert result.references == (("https://python.test/314", "https://python.test/314"),)
    assert result.error is None
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is out."
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert [p["type"] for p in finish.message["content"]] == ["text"]
    assert len([e for e in events if isinstance(e, ServerToolCall)]) == 1  # once, not per event


def test_same_events_for_every_split() -> None:
    reference = decode([STREAM])
    for chunks in splits(STREAM, rounds=60):
        assert decode(chunks) == reference


def test_request_asks_for_hosted_search_and_sources() -> None:
    settings = ProviderSettings(kind="openai-responses", base_url="https://o.test/v1", api_key="k")
    plain = ModelRequest(model="gpt", system="s", messages=[{"role": "user", "content": "hi"}])
    assert "tools" not in build_body(plain, settings)
    plain.web_search = True
    body = build_body(plain, settings)
    assert {"type": "web_search"} in body["tools"]
    assert "web_search_call.action.sources" in body["include"]
