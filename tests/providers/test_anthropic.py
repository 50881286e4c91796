"""Anthropic Messages adapter: stream decoding, thinking replay, caching, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes.mock_upstream import MockUpstream
from fakes.mock_upstream import canon
from fakes.mock_upstream import collect
from fakes.mock_upstream import error_key
from fakes.sse_wire import decode_all
from fakes.sse_wire import splits
from fakes.sse_wire import sse

from cursor_byok.providers import INTERRUPTED
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import TextDelta
from cursor_byok.providers import ToolCallArgsDelta
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers import ToolSpec
from cursor_byok.providers import Usage
from cursor_byok.providers.anthropic import AnthropicStreamState

KEY = "sk-" + "ant-api03-abcdefghijklmnopqrstuvwxyz"
MODEL = "claude-sonnet-4-5"
TOOLS = [
    ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("Glob", "Find files", {"type": "object", "properties": {"glob": {"type": "string"}}}),
]


def settings(**kw: Any) -> ProviderSettings:
    base = {"kind": "anthropic", "base_url": "https://api.anthropic.test", "api_key": KEY}
    return ProviderSettings(**{**base, **kw})


def request(messages: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest(
        model=MODEL,
        system="You are a coding agent.",
        messages=messages if messages is not None else [{"role": "user", "content": "hi"}],
        tools=TOOLS,
        **kw,
    )


def ev(name: str, **fields: Any) -> bytes:
    return sse({"type": name, **fields}, event=name)


def start(usage: dict[str, Any] | None = None) -> bytes:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 1},
    }
    return ev("message_start", message=message)


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return ev("content_block_start", index=index, content_block=block)


def delta(index: int, **d: Any) -> bytes:
    return ev("content_block_delta", index=index, delta=d)


def stop(index: int) -> bytes:
    return ev("content_block_stop", index=index)


def end(reason: str, output_tokens: int = 87) -> bytes:
    return ev(
        "message_delta",
        delta={"stop_reason": reason, "stop_sequence": None},
        usage={"output_tokens": output_tokens},
    ) + ev("message_stop")


THINK_TOOLS = b"".join(
    [
        start(
            {
                "input_tokens": 10,
                "cache_creation_input_tokens": 200,
                "cache_read_input_tokens": 3000,
                "output_tokens": 1,
            }
        ),
        ev("ping"),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="Need to "),
        delta(0, type="thinking_delta", thinking="read ✓"),
        delta(0, type="signature_delta", signature="EqQBCgIYAhIM"),
        stop(0),
        block_start(1, {"type": "redacted_thinking", "data": "REDACTED=="}),
        stop(1),
        b": keep-alive\r\n\r\n",
        block_start(2, {"type": "text", "text": ""}),
        delta(2, type="text_delta", text="Reading…"),
        stop(2),
        block_start(3, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}),
        delta(3, type="input_json_delta", partial_json=""),
        delta(3, type="input_json_delta", partial_json='{"path": '),
        ev("ping"),
        delta(3, type="input_json_delta", partial_json='"/x/ä.py"}'),
        stop(3),
        block_start(4, {"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {}}),
        stop(4),
        end("tool_use"),
    ]
)

TEXT = b"".join(
    [
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Hello "),
        delta(0, type="text_delta", text="wörld"),
        delta(0, type="citations_delta", citation={"type": "char_location"}),
        stop(0),
        ev("some_future_event", x=1),
        end("end_turn", 5),
    ]
).replace(b"\n", b"\r\n")

OVERLOADED = b"".join(
    [
        start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Hi"),
        sse(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            event="error",
        ),
    ]
)
EOF_CUT = b"".join(
    [start(), block_start(0, {"type": "text", "text": ""}), delta(0, type="text_delta", text="Hi")]
)
TRUNCATED_TOOL = b"".join(
    [
        start(),
        block_start(0, {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"path": "/x'),
        stop(0),
        end("max_tokens"),
    ]
)
CONTEXT_FULL = b"".join(
    [
        start(),
        block_start(0, {"type": "text", "text": "Hm"}),
        stop(0),
        end("model_context_window_exceeded"),
    ]
)
ALL = [THINK_TOOLS, TEXT, OVERLOADED, EOF_CUT, TRUNCATED_TOOL, CONTEXT_FULL]


def decode(fixture: bytes):
    return decode_all(AnthropicStreamState(provider="anthropic", model=MODEL), [fixture])


@pytest.mark.parametrize("fixture", ALL)
def test_sans_io_same_events_for_every_split(fixture: bytes) -> None:
    def run(chunks):
        events, error = decode_all(AnthropicStreamState(provider="a", model=MODEL), chunks)
        return events, error_key(error)

    reference = run([fixture])
    for chunks in splits(fixture, rounds=150):
        assert run(chunks) == reference


@pytest.mark.parametrize("fixture", [THINK_TOOLS, TEXT, OVERLOADED])
async def test_through_http_same_events_for_random_splits(fixture: bytes) -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    up.add(fixture)
    ref_events, ref_error = await collect(provider, request())
    for chunks in splits(fixture, seed=5, rounds=40):
        up.add(chunks)
        events, error = await collect(provider, request())
        assert canon(events) == canon(ref_events)
        assert error_key(error) == error_key(ref_error)


def test_thinking_redacted_text_parallel_tools_usage() -> None:
    events, error = decode(THINK_TOOLS)
    assert error is None
    assert events == [
        ReasoningDelta("Need to "),
        ReasoningDelta("read ✓"),
        TextDelta("Reading…"),
        ToolCallStart("toolu_1", "Read"),
        ToolCallArgsDelta("toolu_1", '{"path": '),
        ToolCallArgsDelta("toolu_1", '"/x/ä.py"}'),
        ToolCallEnd("toolu_1", "Read", {"path": "/x/ä.py"}, '{"path": "/x/ä.py"}', None),
        ToolCallStart("toolu_2", "Glob"),
        ToolCallEnd("toolu_2", "Glob", {}, "", None),
        Usage(
            input_tokens=3210,
            output_tokens=87,
            cache_read_tokens=3000,
            cache_write_tokens=200,
            reasoning_tokens=None,
        ),
        events[-1],
    ]
    finish = events[-1]
    assert finish.reason == "tool_calls"
    assert finish.message == {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "Need to read ✓", "signature": "EqQBCgIYAhIM"},
            {"type": "reasoning", "text": ""},
            {"type": "text", "text": "Reading…"},
            {
                "type": "tool-call",
                "toolCallId": "toolu_1",
                "toolName": "Read",
                "args": {"path": "/x/ä.py"},
            },
            {"type": "tool-call", "toolCallId": "toolu_2", "toolName": "Glob", "args": {}},
        ],
        "providerOptions": {
            "cursorByok": {
                "kind": "anthropic",
                "provider": "anthropic",
                "model": MODEL,
                "reasoning": [
                    {"type": "thinking", "thinking": "Need to read ✓", "signature": "EqQBCgIYAhIM"},
                    {"type": "redacted_thinking", "data": "REDACTED=="},
                ],
            }
        },
    }


def test_text_crlf_unknown_events_and_citations_ignored() -> None:
    events, error = decode(TEXT)
    assert error is None
    assert events[:2] == [TextDelta("Hello "), TextDelta("wörld")]
    assert events[2] == Usage(10, 5, None, None, None)
    assert events[3].reason == "stop"
    assert events[3].message["content"] == [{"type": "text", "text": "Hello wörld"}]


def test_error_event_mid_stream() -> None:
    events, error = decode(OVERLOADED)
    assert events == [TextDelta("Hi")]
    assert (error.kind, error.retryable, error.message) == ("server", True, "Overloaded")


def test_eof_before_message_stop() -> None:
    events, error = decode(EOF_CUT)
    assert events == [TextDelta("Hi")] and error.kind == "protocol"


def test_truncated_tool_json_is_an_invalid_call() -> None:
    events, error = decode(TRUNCATED_TOOL)
    assert error is None
    end_event = next(e for e in events if isinstance(e, ToolCallEnd))
    assert end_event.args is None and end_event.raw_args == '{"path": "/x'
    assert "invalid JSON" in end_event.error
    assert events[-1].reason == "length"


def test_context_window_stop_reason() -> None:
    events, _ = decode(CONTEXT_FULL)
    assert events[0] == TextDelta("Hm")
    assert events[-1].reason == "context_length"


@pytest.mark.parametrize(
    ("status", "body", "kind", "retryable"),
    [
        (
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
            "auth",
            False,
        ),
        (
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            "rate_limit",
            True,
        ),
        (
            429,
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "spend",
                    "details": {"error_code": "enforced_spend_limit_reached"},
                },
            },
            "quota",
            False,
        ),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "server",
            True,
        ),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
            "context_length",
            False,
        ),
        (
            413,
            {"type": "error", "error": {"type": "request_too_large", "message": "big"}},
            "context_length",
            False,
        ),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "Your credit balance is too low",
                },
            },
            "quota",
            False,
        ),
    ],
)
async def test_http_errors(status: int, body: dict[str, Any], kind: str, retryable: bool) -> None:
    up = MockUpstream()
    up.add(
        [json.dumps(body).encode()],
        status=status,
        headers={"content-type": "application/json", "retry-after": "3"},
    )
    _, error = await collect(up.provider(settings()), request())
    assert (error.kind, error.status, error.retryable, error.retry_after) == (
        kind,
        status,
        retryable,
        3.0,
    )


# --------------------------------------------------------------------------- requests


async def test_request_shape_and_cache_breakpoints() -> None:
    up = MockUpstream()

    def check(body: dict[str, Any], http) -> None:
        assert str(http.url) == "https://api.anthropic.test/v1/messages"
        assert http.headers["x-api-key"] == KEY
        assert http.headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in http.headers
        assert body["model"] == MODEL and body["stream"] is True
        assert body["max_tokens"] == 16384
        assert body["system"] == [
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            }
        ]
        assert body["tools"][0] == {
            "name": "Read",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
        assert body["tool_choice"] == {"type": "auto"}
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        msgs = body["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
        marked = [
            (i, j)
            for i, m in enumerate(msgs)
            for j, b in enumerate(m["content"])
            if "cache_control" in b
        ]
        assert marked == [(2, len(msgs[2]["content"]) - 1), (4, len(msgs[4]["content"]) - 1)]

    up.add(TEXT, check=check)
    history = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
        {"role": "user", "content": "three"},
        {"role": "assistant", "content": [{"type": "text", "text": "four"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "five"},
                {"type": "image", "mediaType": "image/jpeg", "data": "QUJD"},
            ],
        },
    ]
    _, error = await collect(
        up.provider(settings()), request(history, reasoning=True, params={"thinking_budget": 2048})
    )
    assert error is None
    image = up.requests[0].json["messages"][4]["content"][1]
    assert image["source"] == {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}


def test_url_when_base_ends_in_v1() -> None:
    from cursor_byok.providers.anthropic import messages_url

    assert messages_url("https://gw.test/anthropic/v1/") == "https://gw.test/anthropic/v1/messages"
    assert messages_url("https://api.anthropic.com") == "https://api.anthropic.com/v1/messages"


async def test_round_trip_replays_thinking_and_groups_results() -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    up.add(THINK_TOOLS)
    events, _ = await collect(provider, request(reasoning=True))
    message = events[-1].message
    history = [
        {"role": "user", "content": "hi"},
        message,
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "toolu_1",
                    "toolName": "Read",
                    "result": "A",
                    "isError": False,
                }
            ],
        },
    ]

    def check(body: dict[str, Any], _http) -> None:
        assert "thinking" in body
        assistant, results = body["messages"][1], body["messages"][2]
        assert assistant["content"] == [
            {"type": "thinking", "thinking": "Need to read ✓", "signature": "EqQBCgIYAhIM"},
            {"type": "redacted_thinking", "data": "REDACTED=="},
            {"type": "text", "text": "Reading…"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "/x/ä.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {}},
        ]
        assert results["role"] == "user"
        assert results["content"][0] == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "A",
        }
        second = dict(results["content"][1])
        second.pop("cache_control")
        assert second == {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": INTERRUPTED,
            "is_error": True,
        }

    up.add(TEXT, check=check)
    _, error = await collect(provider, request(history, reasoning=True))
    assert error is None
    # the stored message was not mutated by cache breakpoints
    assert all(
        "cache_control" not in b for b in message["providerOptions"]["cursorByok"]["reasoning"]
    )


def test_foreign_history_drops_reasoning_and_disables_thinking_in_open_tool_loop() -> None:
    from cursor_byok.providers.anthropic import build_body

    foreign = {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "chat thoughts"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "Read", "args": {"path": "a"}},
            {"type": "text", "text": "after the call"},
        ],
        "providerOptions": {"cursorByok": {"kind": "openai-chat", "provider": "x", "model": "y"}},
    }
    body = build_body(
        request(
            [
                {"role": "user", "content": "go"},
                foreign,
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "c1",
                            "toolName": "Read",
                            "result": "r",
                        }
                    ],
                },
                {"role": "user", "content": "and then?"},
            ],
            reasoning=True,
        ),
        settings(anthropic_cache=False),
    )
    assert "thinking" not in body
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use"]  # text moved before tool_use
    user = body["messages"][2]
    assert [b["type"] for b in user["content"]] == ["tool_result", "text"]  # one user message
    assert len(body["messages"]) == 3


def test_thinking_budget_respects_max_tokens() -> None:
    from cursor_byok.providers.anthropic import build_body

    body = build_body(
        request(reasoning=True, max_output_tokens=4096), settings(anthropic_thinking_budget=10000)
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3072}
    body = build_body(request(reasoning=True, max_output_tokens=1500), settings())
    assert "thinking" not in body
    body = build_body(request(reasoning=True), settings(anthropic_thinking="adaptive"))
    assert body["thinking"] == {"type": "adaptive"}


def test_replay_survives_reasoning_parts_lost_in_storage() -> None:
    """If the stored message lost its (empty) reasoning parts, thinking still goes first."""
    from cursor_byok.providers.anthropic import project_messages

    events, _ = decode(THINK_TOOLS)
    message = events[-1].message
    message = {**message, "content": [p for p in message["content"] if p["type"] != "reasoning"]}
    history = [{"role": "user", "content": "hi"}, message]
    out = project_messages(request(history), settings(name="anthropic"))
    assert [b["type"] for b in out[1]["content"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "tool_use",
    ]
