"""OpenAI Responses adapter: stream decoding, encrypted reasoning replay, errors."""

from __future__ import annotations

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
from cursor_byok.providers.openai_responses import ResponsesStreamState

KEY = "sk-" + "proj-abcdefghijklmnopqrstuvwxyz012345"
MODEL = "gpt-5"
TOOLS = [
    ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
]


def settings(**kw: Any) -> ProviderSettings:
    base = {
        "kind": "openai-responses",
        "base_url": "https://api.openai.test/v1",
        "api_key": KEY,
        "name": "openai",
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


def ev(name: str, **fields: Any) -> bytes:
    return sse({"type": name, **fields}, event=name)


REASONING_ITEM = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [
        {"type": "summary_text", "text": "**Plan** read the file ✓"},
        {"type": "summary_text", "text": "Then answer."},
    ],
    "encrypted_content": "gAAAAenc1",
}
MESSAGE_ITEM = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
}
CALL_1 = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "Read",
    "arguments": '{"path":"a.txt"}',
    "status": "completed",
}
CALL_2 = {
    "type": "function_call",
    "id": "fc_2",
    "call_id": "call_2",
    "name": "Read",
    "arguments": '{"path":"b.txt"}',
    "status": "completed",
}
USAGE = {
    "input_tokens": 500,
    "input_tokens_details": {"cached_tokens": 128},
    "output_tokens": 90,
    "output_tokens_details": {"reasoning_tokens": 64},
    "total_tokens": 590,
}


def completed(output: list[dict[str, Any]], usage: dict[str, Any] | None = USAGE) -> bytes:
    return ev(
        "response.completed",
        response={"id": "resp_1", "status": "completed", "output": output, "usage": usage},
    )


THINK_CALLS = b"".join(
    [
        ev("response.created", response={"id": "resp_1", "status": "in_progress", "output": []}),
        ev("response.in_progress", response={"id": "resp_1", "status": "in_progress"}),
        ev(
            "response.output_item.added",
            output_index=0,
            item={"type": "reasoning", "id": "rs_1", "summary": []},
        ),
        ev(
            "response.reasoning_summary_part.added",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        ),
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            delta="**Plan** read ",
        ),
        b": keep-alive\n\n",
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            delta="the file ✓",
        ),
        ev(
            "response.reasoning_summary_text.done",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            text="**Plan** read the file ✓",
        ),
        ev("response.reasoning_summary_part.done", item_id="rs_1", output_index=0, summary_index=0),
        ev(
            "response.reasoning_summary_part.added",
            item_id="rs_1",
            output_index=0,
            summary_index=1,
            part={"type": "summary_text", "text": ""},
        ),
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=1,
            delta="Then answer.",
        ),
        ev("response.output_item.done", output_index=0, item=REASONING_ITEM),
        ev(
            "response.output_item.added",
            output_index=1,
            item={**MESSAGE_ITEM, "status": "in_progress", "content": []},
        ),
        ev(
            "response.content_part.added",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            part={"type": "output_text", "text": ""},
        ),
        ev(
            "response.output_text.delta",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            delta="Let me look.",
        ),
        ev(
            "response.output_text.done",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            text="Let me look.",
        ),
        ev("response.output_item.done", output_index=1, item=MESSAGE_ITEM),
        ev(
            "response.output_item.added",
            output_index=2,
            item={**CALL_1, "arguments": "", "status": "in_progress"},
        ),
        ev(
            "response.function_call_arguments.delta",
            item_id="fc_1",
            output_index=2,
            delta='{"path":',
        ),
        ev(
            "response.function_call_arguments.delta",
            item_id="fc_1",
            output_index=2,
            delta='"a.txt"}',
        ),
        ev(
            "response.function_call_arguments.done",
            item_id="fc_1",
            output_index=2,
            arguments='{"path":"a.txt"}',
        ),
        ev("response.output_item.done", output_index=2, item=CALL_1),
        ev(
            "response.output_item.added",
            output_index=3,
            item={**CALL_2, "arguments": "", "status": "in_progress"},
        ),
        ev(
            "response.function_call_arguments.delta",
            item_id="fc_2",
            output_index=3,
            delta='{"path":"b.txt"}',
        ),
        ev("response.output_item.done", output_index=3, item=CALL_2),
        completed([REASONING_ITEM, MESSAGE_ITEM, CALL_1, CALL_2]),
    ]
)

COMPLETED_ONLY = b"".join(
    [
        ev("response.created", response={"id": "resp_2"}),
        ev("response.queued", response={"id": "resp_2"}),
        completed([REASONING_ITEM, MESSAGE_ITEM, CALL_1]),
    ]
)
INCOMPLETE = b"".join(
    [
        ev(
            "response.output_item.added",
            output_index=0,
            item={"type": "message", "id": "msg_9", "content": []},
        ),
        ev("response.output_text.delta", item_id="msg_9", output_index=0, delta="Long answ"),
        ev(
            "response.incomplete",
            response={
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "output": [],
                "usage": None,
            },
        ),
    ]
)
FAILED = b"".join(
    [
        ev("response.created", response={"id": "resp_3"}),
        ev(
            "response.failed",
            response={
                "status": "failed",
                "error": {"code": "server_error", "message": "The model failed"},
            },
        ),
    ]
)
ERROR_EVENT = ev("error", code="rate_limit_exceeded", message="Rate limit reached", param=None)
CONTEXT_ERROR = ev(
    "error", code="context_length_exceeded", message="Your input exceeds the context window"
)
EOF_CUT = b"".join(
    [
        ev(
            "response.output_item.added",
            output_index=0,
            item={"type": "message", "id": "m", "content": []},
        ),
        ev("response.output_text.delta", item_id="m", output_index=0, delta="cut"),
    ]
)
ALL = [THINK_CALLS, COMPLETED_ONLY, INCOMPLETE, FAILED, ERROR_EVENT, EOF_CUT]


def decode(fixture: bytes):
    return decode_all(ResponsesStreamState(provider="openai", model=MODEL), [fixture])


@pytest.mark.parametrize("fixture", ALL)
def test_sans_io_same_events_for_every_split(fixture: bytes) -> None:
    def run(chunks):
        events, error = decode_all(ResponsesStreamState(provider="o", model=MODEL), chunks)
        return events, error_key(error)

    reference = run([fixture])
    for chunks in splits(fixture, rounds=120):
        assert run(chunks) == reference


@pytest.mark.parametrize("fixture", [THINK_CALLS, FAILED, EOF_CUT])
async def test_through_http_same_events_for_random_splits(fixture: bytes) -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    up.add(fixture.replace(b"\n", b"\r\n"))
    ref_events, ref_error = await collect(provider, request())
    for chunks in splits(fixture.replace(b"\n", b"\r\n"), seed=3, rounds=40):
        up.add(chunks)
        events, error = await collect(provider, request())
        assert canon(events) == canon(ref_events)
        assert error_key(error) == error_key(ref_error)


def test_reasoning_text_and_function_calls() -> None:
    events, error = decode(THINK_CALLS)
    assert error is None
    assert events[:-1] == [
        ReasoningDelta("**Plan** read "),
        ReasoningDelta("the file ✓"),
        ReasoningDelta("\n\n"),
        ReasoningDelta("Then answer."),
        TextDelta("Let me look."),
        ToolCallStart("call_1", "Read"),
        ToolCallArgsDelta("call_1", '{"path":'),
        ToolCallArgsDelta("call_1", '"a.txt"}'),
        ToolCallEnd("call_1", "Read", {"path": "a.txt"}, '{"path":"a.txt"}', None),
        ToolCallStart("call_2", "Read"),
        ToolCallArgsDelta("call_2", '{"path":"b.txt"}'),
        ToolCallEnd("call_2", "Read", {"path": "b.txt"}, '{"path":"b.txt"}', None),
        Usage(500, 90, 128, None, 64),
    ]
    finish = events[-1]
    assert finish.reason == "tool_calls"
    assert finish.message == {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "**Plan** read the file ✓\n\nThen answer."},
            {"type": "text", "text": "Let me look."},
            {
                "type": "tool-call",
                "toolCallId": "call_1",
                "toolName": "Read",
                "args": {"path": "a.txt"},
            },
            {
                "type": "tool-call",
                "toolCallId": "call_2",
                "toolName": "Read",
                "args": {"path": "b.txt"},
            },
        ],
        "providerOptions": {
            "cursorByok": {
                "kind": "openai-responses",
                "provider": "openai",
                "model": MODEL,
                "reasoning": [REASONING_ITEM],
            }
        },
    }


def test_completed_only_stream_still_yields_everything() -> None:
    events, error = decode(COMPLETED_ONLY)
    assert error is None
    assert events[:4] == [
        ReasoningDelta("**Plan** read the file ✓\n\nThen answer."),
        TextDelta("Let me look."),
        ToolCallStart("call_1", "Read"),
        ToolCallArgsDelta("call_1", '{"path":"a.txt"}'),
    ]
    assert events[4].call_id == "call_1" and events[4].args == {"path": "a.txt"}
    assert events[-1].reason == "tool_calls"


def test_incomplete_is_length() -> None:
    events, error = decode(INCOMPLETE)
    assert error is None
    assert events[0] == TextDelta("Long answ")
    assert events[-1].reason == "length"
    assert events[-1].message["content"] == [{"type": "text", "text": "Long answ"}]


def test_failed_and_error_events() -> None:
    _, error = decode(FAILED)
    assert (error.kind, error.retryable, error.message) == ("server", True, "The model failed")
    _, error = decode(ERROR_EVENT)
    assert (error.kind, error.retryable) == ("rate_limit", True)
    _, error = decode(CONTEXT_ERROR)
    assert error.kind == "context_length"


def test_eof_without_terminal_event() -> None:
    events, error = decode(EOF_CUT)
    assert events == [TextDelta("cut")] and error.kind == "protocol"


async def test_request_shape() -> None:
    up = MockUpstream()

    def check(body: dict[str, Any], http) -> None:
        assert str(http.url) == "https://api.openai.test/v1/responses"
        assert http.headers["authorization"] == f"Bearer {KEY}"
        assert body["store"] is False and body["stream"] is True
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["instructions"] == "You are a coding agent."
        assert body["tools"] == [
            {
                "type": "function",
                "name": "Read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                "strict": False,
            }
        ]
        assert body["reasoning"] == {"effort": "high", "summary": "auto"}
        assert body["max_output_tokens"] == 2000
        assert body["prompt_cache_key"] == "conv-9"
        assert "reasoning_effort" not in body
        assert body["input"] == [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "see"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
                ],
            }
        ]

    up.add(COMPLETED_ONLY, check=check)
    req = request(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image", "mediaType": "image/png", "data": "AAAA"},
                ],
            }
        ],
        reasoning=True,
        max_output_tokens=2000,
        cache_key="conv-9",
        params={"reasoning_effort": "high", "store": True},
    )
    _, error = await collect(up.provider(settings()), req)
    assert error is None


async def test_round_trip_replays_items_in_order() -> None:
    up = MockUpstream()
    provider = up.provider(settings())
    up.add(THINK_CALLS)
    events, _ = await collect(provider, request(reasoning=True))
    history = [
        {"role": "user", "content": "hi"},
        events[-1].message,
        {
            "role": "tool",
            "content": [
                {"type": "tool-result", "toolCallId": "call_1", "toolName": "Read", "result": "A"}
            ],
        },
        {"role": "user", "content": "thanks"},
    ]

    def check(body: dict[str, Any], _http) -> None:
        assert body["input"] == [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            REASONING_ITEM,
            {"role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "Read",
                "arguments": '{"path":"a.txt"}',
            },
            {
                "type": "function_call",
                "call_id": "call_2",
                "name": "Read",
                "arguments": '{"path":"b.txt"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "A"},
            {"type": "function_call_output", "call_id": "call_2", "output": INTERRUPTED},
            {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
        ]

    up.add(COMPLETED_ONLY, check=check)
    _, error = await collect(provider, request(history, reasoning=True))
    assert error is None


def test_reasoning_not_replayed_to_other_model_or_without_encrypted_content() -> None:
    from cursor_byok.providers.openai_responses import project_input

    message = {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "a"},
            {"type": "reasoning", "text": "b"},
            {"type": "text", "text": "done"},
        ],
        "providerOptions": {
            "cursorByok": {
                "kind": "openai-responses",
                "provider": "openai",
                "model": MODEL,
                "reasoning": [
                    None,
                    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "E"},
                ],
            }
        },
    }
    items = project_input(request([{"role": "user", "content": "q"}, message]), settings())
    assert [i.get("type", i.get("role")) for i in items] == ["user", "reasoning", "assistant"]
    assert items[1]["id"] == "rs_2"
    other_model = ModelRequest(
        model="gpt-5-mini", system="", messages=[{"role": "user", "content": "q"}, message]
    )
    assert [i.get("type", i.get("role")) for i in project_input(other_model, settings())] == [
        "user",
        "assistant",
    ]
