"""OpenAI Chat Completions adapter: stream decoding, quirks, errors, request projection."""

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
from cursor_byok.providers import Finish
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import ReasoningDelta
from cursor_byok.providers import TextDelta
from cursor_byok.providers import ToolCallArgsDelta
from cursor_byok.providers import ToolCallEnd
from cursor_byok.providers import ToolCallStart
from cursor_byok.providers import ToolSpec
from cursor_byok.providers import Usage
from cursor_byok.providers.openai_chat import ChatStreamState
from cursor_byok.providers.sse import SseEvent

KEY = "sk-" + "test-abcdefghijklmnopqrstuvwxyz0123"
MODEL = "deepseek-chat"
TOOLS = [
    ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("Glob", "Find files", {"properties": {"glob": {"type": "string"}}}),
]


def settings(**kw: Any) -> ProviderSettings:
    base = {
        "kind": "openai-chat",
        "base_url": "https://api.example.test/v1/",
        "api_key": KEY,
        "name": "deepseek",
        "chat_reasoning_passback": "reasoning_content",
    }
    return ProviderSettings(**{**base, **kw})


def request(messages: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest(
        model=MODEL,
        system="You are a coding agent.",
        messages=messages if messages is not None else [{"role": "user", "content": "hi"}],
        tools=TOOLS,
        **kw,
    )


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }
    return sse(body, eol="\r\n")


USAGE = sse(
    {
        "choices": [],
        "usage": {
            "prompt_tokens": 1234,
            "completion_tokens": 56,
            "prompt_tokens_details": {"cached_tokens": 1024},
            "completion_tokens_details": {"reasoning_tokens": 20},
        },
    }
)
DONE = b"data: [DONE]\n\n"

TEXT_REASONING = b"".join(
    [
        b": keep-alive\r\n\r\n",
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"reasoning_content": "Let me "}),
        b": keep-alive\n\n",
        chunk({"reasoning_content": "think… 🤔"}),
        chunk({"content": "Héllo"}),
        chunk({"content": ", wörld ✓"}),
        chunk({}, "stop", usage=None),
        USAGE,
        DONE,
    ]
)

PARALLEL = b"".join(
    [
        chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "Read", "arguments": ""},
                    }
                ],
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":'}}]}),
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "call_b", "type": "function", "function": {"name": "Glob"}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"/x/ä.py"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"glob":"*.py"}'}}]}),
        chunk({}, "tool_calls"),
        USAGE,
        DONE,
    ]
)

# integer id and no index; name repeated; a call without id; truncated JSON; Gemini's
# extra_content; finish_reason but no [DONE] (allowed)
QUIRKS = b"".join(
    [
        chunk(
            {
                "tool_calls": [
                    {
                        "id": 7,
                        "type": "function",
                        "function": {"name": "Read", "arguments": ""},
                        "extra_content": {"google": {"thought_signature": "c2ln"}},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": '{"pa'}}]}),
        chunk(
            {"tool_calls": [{"index": 0, "function": {"name": "Read", "arguments": 'th":"a"}'}}]}
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "Glob", "arguments": "{}"}}]}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 2,
                        "id": "call_c",
                        "function": {"name": "Read", "arguments": '{"p": '},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
)

# Ollama: every call of the batch at index 0, told apart only by id; finish_reason "stop"
OLLAMA = b"".join(
    [
        chunk(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_x1",
                        "index": 0,
                        "type": "function",
                        "function": {"name": "Read", "arguments": '{"path":"a"}'},
                    }
                ],
            }
        ),
        chunk(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_x2",
                        "index": 0,
                        "type": "function",
                        "function": {"name": "Read", "arguments": '{"path":"b"}'},
                    }
                ],
            }
        ),
        chunk({"role": "assistant", "content": ""}, "stop"),
        DONE,
    ]
)

THINK_TAGS = b"".join(
    [
        chunk({"content": "  <thi"}),
        chunk({"content": "nk>I should"}),
        chunk({"content": " answer.</th"}),
        chunk({"content": "ink>\n\nThe answer"}),
        chunk({"content": " is 4."}),
        chunk({}, "stop"),
        DONE,
    ]
)

MIDSTREAM_ERROR = b"".join(
    [
        chunk({"content": "Hel"}),
        chunk(
            {"content": ""},
            "error",
            error={
                "code": 502,
                "message": "Provider returned error",
                "metadata": {"raw": "upstream overloaded"},
            },
        ),
        DONE,
    ]
)
VLLM_ERROR = sse(
    {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. You requested 5000",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
)
OPENAI_INBAND = sse({"error": {"message": "The server had an error", "type": "server_error"}})
EOF_CUT = chunk({"content": "partial"})
OPENROUTER = b"".join(
    [
        b": OPENROUTER PROCESSING\n\n",
        chunk(
            {
                "reasoning": "Plan",
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "Plan",
                        "index": 0,
                        "format": "anthropic-claude-v1",
                    }
                ],
            }
        ),
        chunk(
            {
                "reasoning": " it.",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": " it.", "index": 0, "signature": "SIG"}
                ],
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "toolu_1",
                        "type": "function",
                        "function": {"name": "Read", "arguments": '{"path":"x"}'},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
        DONE,
    ]
)


def counter_ids():
    n = iter(range(1000))
    return lambda: f"call_gen{next(n)}"


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize(
    "fixture",
    [TEXT_REASONING, PARALLEL, QUIRKS, OLLAMA, THINK_TAGS, MIDSTREAM_ERROR, VLLM_ERROR, OPENROUTER],
)
def test_sans_io_same_events_for_every_split(fixture: bytes) -> None:
    def run(chunks: list[bytes]):
        state = ChatStreamState(provider="p", model=MODEL, new_id=counter_ids())
        events, error = decode_all(state, chunks)
        return events, error_key(error)

    reference = run([fixture])
    for chunks in splits(fixture, rounds=150):
        assert run(chunks) == reference


@pytest.mark.parametrize("fixture", [TEXT_REASONING, PARALLEL, QUIRKS, MIDSTREAM_ERROR, EOF_CUT])
async def test_through_http_same_events_for_random_splits(fixture: bytes) -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    up.add(fixture)
    ref_events, ref_error = await collect(provider, request())
    for i, chunks in enumerate(splits(fixture, seed=99, rounds=40)):
        up.add(chunks)
        events, error = await collect(provider, request())
        assert canon(events) == canon(ref_events), i
        assert error_key(error) == error_key(ref_error)
    await provider.aclose()


async def test_text_with_reasoning_and_usage() -> None:
    up = MockUpstream()
    up.add(TEXT_REASONING)
    events, error = await collect(up.provider(settings()), request())
    assert error is None
    assert events[:4] == [
        ReasoningDelta("Let me "),
        ReasoningDelta("think… 🤔"),
        TextDelta("Héllo"),
        TextDelta(", wörld ✓"),
    ]
    assert events[4] == Usage(1234, 56, 1024, None, 20)
    finish = events[5]
    assert isinstance(finish, Finish) and finish.reason == "stop"
    assert finish.message == {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "Let me think… 🤔"},
            {"type": "text", "text": "Héllo, wörld ✓"},
        ],
        "providerOptions": {
            "cursorByok": {
                "kind": "openai-chat",
                "provider": "deepseek",
                "model": MODEL,
                "reasoningContent": "Let me think… 🤔",
            }
        },
    }


def decode(fixture: bytes):
    state = ChatStreamState(provider="p", model=MODEL, new_id=counter_ids())
    return decode_all(state, [fixture])


def test_parallel_tool_calls() -> None:
    events, error = decode(PARALLEL)
    assert error is None
    assert events[:7] == [
        ToolCallStart("call_a", "Read"),
        ToolCallArgsDelta("call_a", '{"path":'),
        ToolCallStart("call_b", "Glob"),
        ToolCallArgsDelta("call_a", '"/x/ä.py"}'),
        ToolCallArgsDelta("call_b", '{"glob":"*.py"}'),
        ToolCallEnd("call_a", "Read", {"path": "/x/ä.py"}, '{"path":"/x/ä.py"}', None),
        ToolCallEnd("call_b", "Glob", {"glob": "*.py"}, '{"glob":"*.py"}', None),
    ]
    finish = events[-1]
    assert finish.reason == "tool_calls"
    assert [p["toolCallId"] for p in finish.message["content"]] == ["call_a", "call_b"]


def test_quirks_integer_id_missing_index_repeated_name_generated_id_invalid_json() -> None:
    events, error = decode(QUIRKS)
    assert error is None
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.call_id, e.name, e.args) for e in ends] == [
        ("7", "Read", {"path": "a"}),
        ("call_gen0", "Glob", {}),
        ("call_c", "Read", None),
    ]
    assert ends[2].raw_args == '{"p": ' and ends[2].error.startswith("invalid JSON arguments")
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [
        ToolCallStart("7", "Read"),
        ToolCallStart("call_gen0", "Glob"),
        ToolCallStart("call_c", "Read"),
    ]
    finish = events[-1]
    assert finish.reason == "tool_calls"
    calls = finish.message["content"]
    assert calls[2] == {"type": "tool-call", "toolCallId": "call_c", "toolName": "Read", "args": {}}
    replay = finish.message["providerOptions"]["cursorByok"]
    assert replay["toolCalls"] == {
        "7": {"extra_content": {"google": {"thought_signature": "c2ln"}}}
    }


def test_ollama_index_reuse_and_stop_with_calls() -> None:
    events, error = decode(OLLAMA)
    assert error is None
    ends = [(e.call_id, e.args) for e in events if isinstance(e, ToolCallEnd)]
    assert ends == [("call_x1", {"path": "a"}), ("call_x2", {"path": "b"})]
    assert events[-1].reason == "tool_calls"


def test_think_tags_split_across_chunks() -> None:
    events, error = decode(THINK_TAGS)
    assert error is None
    assert events[:-1] == [
        ReasoningDelta("I should"),
        ReasoningDelta(" answer."),
        TextDelta("The answer"),
        TextDelta(" is 4."),
    ]
    message = events[-1].message
    assert message["content"] == [
        {"type": "reasoning", "text": "I should answer."},
        {"type": "text", "text": "The answer is 4."},
    ]
    assert "reasoningContent" not in message["providerOptions"]["cursorByok"]


def test_think_tags_off_leaves_content_alone() -> None:
    state = ChatStreamState(provider="p", model=MODEL, think_tags=False)
    events, _ = decode_all(state, [THINK_TAGS])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("  <think>")


def test_mid_stream_error_after_text() -> None:
    events, error = decode(MIDSTREAM_ERROR)
    assert events == [TextDelta("Hel")]
    assert error.kind == "server" and error.status == 502 and error.retryable
    assert "upstream overloaded" in error.message


def test_vllm_error_first_chunk_is_context_length() -> None:
    events, error = decode(VLLM_ERROR)
    assert events == []
    assert error.kind == "context_length" and not error.retryable


def test_openai_inband_error() -> None:
    events, error = decode(OPENAI_INBAND)
    assert events == [] and error.kind == "server" and error.retryable


def test_eof_without_done_or_finish_reason_is_protocol_error() -> None:
    events, error = decode(EOF_CUT)
    assert events == [TextDelta("partial")]
    assert error.kind == "protocol"
    assert not any(isinstance(e, Finish) for e in events)


def test_comments_only_then_eof_is_error() -> None:
    _, error = decode(b": keep-alive\n\n: keep-alive\n\n")
    assert error.kind == "protocol"


async def test_empty_200_body_is_error() -> None:
    up = MockUpstream()
    up.add([])
    events, error = await collect(up.provider(settings()), request())
    assert events == [] and error.kind == "protocol" and not error.retryable


def test_openrouter_reasoning_details_merged() -> None:
    events, error = decode(OPENROUTER)
    assert error is None
    assert [e for e in events if isinstance(e, ReasoningDelta)] == [
        ReasoningDelta("Plan"),
        ReasoningDelta(" it."),
    ]
    replay = events[-1].message["providerOptions"]["cursorByok"]
    assert replay["reasoningDetails"] == [
        {
            "type": "reasoning.text",
            "text": "Plan it.",
            "index": 0,
            "format": "anthropic-claude-v1",
            "signature": "SIG",
        }
    ]


def test_malformed_json_is_protocol_error() -> None:
    _, error = decode(b"data: {not json\n\n")
    assert error.kind == "protocol" and not error.retryable


# --------------------------------------------------------------------------- HTTP errors


@pytest.mark.parametrize(
    ("status", "body", "headers", "kind", "retryable", "retry_after"),
    [
        (
            401,
            {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}},
            {},
            "auth",
            False,
            None,
        ),
        (
            429,
            {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}},
            {"retry-after": "1"},
            "quota",
            False,
            1.0,
        ),
        (
            429,
            {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
            {"retry-after-ms": "250", "retry-after": "9"},
            "rate_limit",
            True,
            0.25,
        ),
        (
            400,
            {"error": {"message": "too long", "code": "context_length_exceeded"}},
            {},
            "context_length",
            False,
            None,
        ),
        (402, {"error": {"message": "Insufficient Balance"}}, {}, "quota", False, None),
        (
            429,
            {"error": {"message": "quota", "code": "insufficient_quota"}},
            {"x-should-retry": "true"},
            "quota",
            False,
            None,
        ),
        (503, {"error": {"message": "busy"}}, {"x-should-retry": "false"}, "server", False, None),
        (
            400,
            {"error": {"message": "bad"}},
            {"x-should-retry": "true"},
            "invalid_request",
            True,
            None,
        ),
        (500, "<html>oops</html>", {}, "server", True, None),
    ],
)
async def test_http_errors_are_classified(
    status, body, headers, kind, retryable, retry_after
) -> None:
    up = MockUpstream()
    raw = body if isinstance(body, str) else json.dumps(body)
    up.add([raw.encode()], status=status, headers={"content-type": "application/json", **headers})
    events, error = await collect(up.provider(settings()), request())
    assert events == []
    assert (error.kind, error.status, error.retryable, error.retry_after) == (
        kind,
        status,
        retryable,
        retry_after,
    )
    assert KEY not in error.message and KEY not in str(error) and KEY not in repr(error)
    assert error.provider == "deepseek"


async def test_json_error_body_with_200() -> None:
    up = MockUpstream()
    up.add(
        [b'{"error":{"message":"model not found","type":"invalid_request_error"}}'],
        headers={"content-type": "application/json"},
    )
    _, error = await collect(up.provider(settings()), request())
    assert error.kind == "invalid_request" and error.message == "model not found"


def test_settings_repr_hides_key() -> None:
    s = settings(extra_headers={"X-Api-Token": "tok-secret-123456"})
    assert KEY not in repr(s) and "tok-secret" not in repr(s)
    assert "tok-secret-123456" in s.secrets()


# --------------------------------------------------------------------------- requests


async def test_request_shape() -> None:
    up = MockUpstream()

    def check(body: dict[str, Any], http) -> None:
        assert str(http.url) == "https://api.example.test/v1/chat/completions"
        assert http.headers["authorization"] == f"Bearer {KEY}"
        assert body["model"] == MODEL and body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}
        assert body["tools"][0] == {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
        assert body["tools"][1]["function"]["parameters"]["type"] == "object"  # added
        assert body["tool_choice"] == "auto"
        assert body["prompt_cache_key"] == "conv-1"
        assert body["max_completion_tokens"] == 1000
        assert body["temperature"] == 0.2
        assert body["thinking"] == {"type": "enabled"}
        assert body["messages"][0] == {"role": "system", "content": "You are a coding agent."}
        assert body["messages"][1] == {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        }

    up.add(TEXT_REASONING, check=check)
    s = settings(chat_reasoning_body={"thinking": {"type": "enabled"}})
    req = request(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "mediaType": "image/png", "data": "AAAA"},
                ],
            }
        ],
        max_output_tokens=1000,
        cache_key="conv-1",
        params={"temperature": 0.2},
        reasoning=True,
    )
    _, error = await collect(up.provider(s), req)
    assert error is None and len(up.requests) == 1


def tool_turn(ids: list[str], replay: dict[str, Any] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "reasoning", "text": "neutral thoughts"}]
    content += [
        {"type": "tool-call", "toolCallId": i, "toolName": "Read", "args": {"path": i}} for i in ids
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if replay is not None:
        message["providerOptions"] = {"cursorByok": replay}
    return message


def result(call_id: str, text: str = "ok", **kw: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "content": [
            {"type": "tool-result", "toolCallId": call_id, "toolName": "Read", "result": text, **kw}
        ],
    }


def project(messages: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    from cursor_byok.providers.openai_chat import project_messages

    return project_messages(request(messages), settings(**kw))[1:]


def test_history_results_ordered_interrupted_orphans_dropped() -> None:
    messages = [
        {"role": "user", "content": "go"},
        tool_turn(["c1", "c2", "c3"]),
        result("c3", "three"),
        result("zz", "orphan"),
        {
            "role": "tool",
            "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "Read", "result": "one"}
            ],
        },
        {"role": "user", "content": "stop"},
    ]
    out = project(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "tool", "user"]
    assert [(m["tool_call_id"], m["content"]) for m in out[2:5]] == [
        ("c1", "one"),
        ("c2", INTERRUPTED),
        ("c3", "three"),
    ]


def test_history_trailing_calls_without_results_get_interrupted() -> None:
    out = project([{"role": "user", "content": "go"}, tool_turn(["c1"])])
    assert out[-1] == {"role": "tool", "tool_call_id": "c1", "content": INTERRUPTED}


def test_history_empty_ids_are_generated_and_stable() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "", "toolName": "Read", "args": {}}],
        },
        {"role": "tool", "content": [{"type": "tool-result", "toolName": "Read", "result": "r"}]},
    ]
    first, second = project(messages), project(messages)
    assert first == second
    call_id = first[1]["tool_calls"][0]["id"]
    assert call_id and first[2] == {"role": "tool", "tool_call_id": call_id, "content": "r"}


def test_reasoning_content_passback_only_on_tool_turns() -> None:
    same = {"kind": "openai-chat", "provider": "deepseek", "model": MODEL, "reasoningContent": "R"}
    messages = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "plain"}],
            "providerOptions": {"cursorByok": same},
        },
        {"role": "user", "content": "b"},
        tool_turn(["c1"], same),
        result("c1"),
    ]
    out = project(messages)
    assert "reasoning_content" not in out[1]
    assert out[3]["reasoning_content"] == "R"  # replayed verbatim, not the neutral text
    assert out[3]["content"] is None
    scoped_all = project(messages, chat_reasoning_passback_scope="all")
    assert scoped_all[1]["reasoning_content"] == "R"
    assert "reasoning_content" not in project(messages, chat_reasoning_passback=None)[3]


def test_reasoning_from_another_provider_is_projected_from_neutral_parts() -> None:
    other = {"kind": "anthropic", "provider": "anthropic", "model": "claude", "reasoning": []}
    out = project([{"role": "user", "content": "a"}, tool_turn(["c1"], other), result("c1")])
    assert out[1]["reasoning_content"] == "neutral thoughts"


def test_extra_content_replayed_only_to_same_provider() -> None:
    replay = {
        "kind": "openai-chat",
        "provider": "deepseek",
        "model": MODEL,
        "toolCalls": {"c1": {"extra_content": {"google": {"thought_signature": "S"}}}},
    }
    messages = [{"role": "user", "content": "a"}, tool_turn(["c1"], replay), result("c1")]
    assert project(messages)[1]["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": "S"}
    }
    moved = project(messages, name="gemini")
    assert "extra_content" not in moved[1]["tool_calls"][0]


async def test_round_trip_replays_reasoning_details_for_openrouter() -> None:
    up = MockUpstream()
    s = settings(name="openrouter", chat_reasoning_passback="reasoning_details")
    provider = up.provider(s)
    up.add(OPENROUTER)
    events, error = await collect(provider, request())
    assert error is None
    message = events[-1].message
    history = [{"role": "user", "content": "hi"}, message, result("toolu_1", "file text")]

    def check(body: dict[str, Any], _http) -> None:
        assistant = body["messages"][2]
        assert assistant["reasoning_details"][0]["text"] == "Plan it."
        assert assistant["reasoning_details"][0]["signature"] == "SIG"
        assert assistant["tool_calls"][0]["id"] == "toolu_1"
        assert body["messages"][3] == {
            "role": "tool",
            "tool_call_id": "toolu_1",
            "content": "file text",
        }

    up.add(TEXT_REASONING, check=check)
    _, error = await collect(provider, request(history))
    assert error is None


async def test_round_trip_deepseek_reasoning_content() -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    fixture = b"".join(
        [
            chunk({"reasoning_content": "need file"}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "Read", "arguments": '{"path":"a.txt"}'},
                        }
                    ]
                }
            ),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    up.add(fixture)
    events, _ = await collect(provider, request())
    history = [{"role": "user", "content": "hi"}, events[-1].message, result("call_1", "A")]

    def check(body: dict[str, Any], _http) -> None:
        assert body["messages"][2] == {
            "role": "assistant",
            "content": None,
            "reasoning_content": "need file",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": '{"path":"a.txt"}'},
                }
            ],
        }

    up.add(TEXT_REASONING, check=check)
    _, error = await collect(provider, request(history))
    assert error is None


# --------------------------------------------------------------------------- linear merges


class _Piece(str):
    """A fragment that counts the times it is concatenated onto the text so far: a merge
    doing `so_far + piece` calls `__radd__` first (str's subclass on the right)."""

    concatenations = 0

    def __radd__(self, other: str) -> str:
        _Piece.concatenations += 1
        return str.__add__(other, self)


def test_100k_reasoning_details_fragments_are_appended_not_reconcatenated(monkeypatch) -> None:
    """Issue 33 item 7: 100k OpenRouter fragments took 58 s (each one concatenated onto the
    merged text so far: quadratic). The merge appends pieces and joins them once."""
    from cursor_byok.providers import openai_chat

    n = 100_000
    chunks = iter(
        [
            {"choices": [{"index": 0, "delta": {"reasoning_details": [
                {"type": "reasoning.text", "index": 0, "text": _Piece(f"{i % 10}")}
            ]}}]}
            for i in range(n)
        ]
        + [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    )  # fmt: skip
    monkeypatch.setattr(openai_chat, "parse_json_event", lambda event, provider: next(chunks))
    state = ChatStreamState(provider="openrouter", model="m")
    _Piece.concatenations = 0
    events = []
    for _ in range(n + 1):
        events += state.on_event(SseEvent("{}"))
    events += state.on_eof()
    assert _Piece.concatenations == 0
    replay = events[-1].message["providerOptions"]["cursorByok"]
    assert replay["reasoningDetails"] == [
        {"type": "reasoning.text", "index": 0, "text": "0123456789" * (n // 10)}
    ]


def test_100k_blank_deltas_before_the_answer_keep_their_whitespace() -> None:
    """The `<think>` splitter used to strip its whole growing buffer at each blank delta before
    the answer (quadratic); the whitespace is kept apart and the text is still exact."""
    body = b"".join(chunk({"content": "\n"}) for _ in range(100_000))
    body += chunk({"content": "hi"}, finish="stop")
    events, error = decode(body)
    assert error is None
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "\n" * 100_000 + "hi"
