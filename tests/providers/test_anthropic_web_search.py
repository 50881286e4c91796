"""Anthropic's server-side web search: the tool in the request, its blocks in the stream."""

from __future__ import annotations

import pytest
from fakes.anthropic_search import RESULTS
from fakes.anthropic_search import anthropic_search_stream
from fakes.sse_wire import decode_all
from fakes.sse_wire import splits

from cursor_byok.config import ConfigError
from cursor_byok.config import parse_config
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers.anthropic import WEB_SEARCH_TOOL
from cursor_byok.providers.anthropic import AnthropicStreamState
from cursor_byok.providers.anthropic import build_body
from cursor_byok.providers.base import Finish
from cursor_byok.providers.base import ServerToolCall
from cursor_byok.providers.base import ServerToolResult
from cursor_byok.providers.base import ToolCallArgsDelta


def decode(data: bytes):
    return decode_all(AnthropicStreamState(provider="a", model="claude"), [data])


def test_server_search_becomes_call_and_result_events() -> None:
    events, error = decode(anthropic_search_stream("rust 1.90", RESULTS, "Rust 1.90 is out."))
    assert error is None
    assert not any(isinstance(e, ToolCallArgsDelta) for e in events)  # not a client tool
    [call] = [e for e in events if isinstance(e, ServerToolCall)]
    assert call == ServerToolCall("srvtoolu_1", "web_search", {"query": "rust 1.90"})
    [result] = [e for e in events if isinstance(e, ServerToolResult)]
    assert result.references == (
        ("Release notes", "https://ex.test/rel"),
        ("https://ex.test/2", "https://ex.test/2"),
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Rust 1.90 is out."
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    kinds = [p["type"] for p in finish.message["content"]]
    assert kinds == ["text"]  # the search is not replayed: no client tool call to answer


def test_same_events_for_every_split() -> None:
    data = anthropic_search_stream("q", RESULTS, "done")
    reference = decode(data)
    for chunks in splits(data, rounds=60):
        assert decode_all(AnthropicStreamState(provider="a", model="claude"), chunks) == reference


def test_search_error_result() -> None:
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    events, _ = decode(anthropic_search_stream("q", error, "sorry"))
    [result] = [e for e in events if isinstance(e, ServerToolResult)]
    assert result.error == "max_uses_exceeded" and result.references == ()


def test_request_carries_the_server_tool_only_when_asked() -> None:
    settings = ProviderSettings(kind="anthropic", base_url="https://a.test", api_key="k")
    base = ModelRequest(model="claude", system="s", messages=[{"role": "user", "content": "hi"}])
    assert "tools" not in build_body(base, settings)
    base.web_search = True
    assert build_body(base, settings)["tools"] == [WEB_SEARCH_TOOL]


def test_model_web_search_needs_an_anthropic_provider() -> None:
    raw = {
        "providers": {
            "a": {"kind": "anthropic", "base_url": "https://a.test"},
            "o": {"kind": "openai-chat", "base_url": "https://o.test"},
        },
        "models": [{"name": "C", "provider": "a", "model": "claude", "web_search": True}],
    }
    assert parse_config(raw).models[0].web_search
    raw["models"][0]["provider"] = "o"
    with pytest.raises(ConfigError, match="anthropic or openai-responses"):
        parse_config(raw)
    raw["providers"]["o"]["kind"] = "openai-responses"
    assert parse_config(raw).models[0].web_search
