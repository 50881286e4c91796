"""The history format's types say what the writers really write (keys, and part types by tag).

TypedDicts are not checked at run time; these tests hold the writers to them, so the types cannot
drift from the bytes the checkpoint blobs store.
"""

from __future__ import annotations

import asyncio
from typing import Any

from cursor_byok.agent.compaction import summary_message
from cursor_byok.agent.context import user_content
from cursor_byok.agent.tool_batch import PendingCall
from cursor_byok.agent.tool_batch import run_batch
from cursor_byok.conversation import history_format as hf
from cursor_byok.cursor.checkpoint import decode_message
from cursor_byok.cursor.checkpoint import encode_message
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.history_projection import MessageBuilder
from cursor_byok.providers.history_projection import normalise

PARTS = {
    "text": hf.TextPart,
    "image": hf.ImagePart,
    "reasoning": hf.ReasoningPart,
    "tool-call": hf.ToolCallPart,
    "tool-result": hf.ToolResultPart,
}
MESSAGES = {
    "user": hf.UserHistoryMessage,
    "assistant": hf.AssistantHistoryMessage,
    "tool": hf.ToolHistoryMessage,
}


def _keys_fit(value: dict[str, Any], typed: Any) -> None:
    keys = set(value)
    assert typed.__required_keys__ <= keys, (typed.__name__, value)
    assert keys <= typed.__required_keys__ | typed.__optional_keys__, (typed.__name__, value)


def assert_message(message: dict[str, Any]) -> None:
    _keys_fit(message, MESSAGES[message["role"]])
    content = message["content"]
    for part in [] if isinstance(content, str) else content:
        _keys_fit(part, PARTS[part["type"]])
    state = message.get("providerOptions", {}).get(hf.REPLAY_KEY)
    if state is not None:
        assert set(state) <= hf.ProviderState.__optional_keys__, state


def test_the_adapters_assistant_message_fits_the_type() -> None:
    builder = MessageBuilder("anthropic", "p", "m")
    builder.append_reasoning("think")
    builder.add_reasoning("signed", signature="sig")
    builder.append_text("answer")
    builder.add_tool_call("call_1", "Read", {"path": "/a"})
    builder.replay["reasoning"] = [{"type": "thinking"}]
    message = builder.build()
    assert_message(message)
    kinds = [p["type"] for p in message["content"]]
    assert kinds == ["reasoning", "reasoning", "text", "tool-call"]


def test_the_agents_user_and_summary_messages_fit_the_type() -> None:
    user = pb.UserMessage(text="hi")
    user.selected_context.extra_context.append("more")
    user.selected_context.selected_images.add(data=b"\x89PNG", mime_type="image/png")
    assert_message({"role": "user", "content": user_content(user, images=True)})
    assert_message(dict(summary_message("all so far")))


def test_tool_batch_results_fit_the_type() -> None:
    turn: Any = None  # calls that fail before running need no turn
    calls = [PendingCall("c1", "Nope", None, error="Tool 'Nope' is not available")]
    results, switched = asyncio.run(run_batch(turn, calls, "m1", 1, pb.RequestContext()))
    assert switched is None
    assert_message({"role": "tool", "content": results})
    assert results[0]["result"].startswith("Error")


def test_normalised_turns_are_built_afresh_from_any_stored_shape() -> None:
    """A message written elsewhere (OpenAI-style tool message, `input` for `args`) still reads;
    what normalise returns fits the types, and the blob round trip keeps the bytes."""
    stored = [
        {"role": "user", "content": "hi", "extra": 1},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "Read", "input": {}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    turns = normalise(stored)
    for turn in turns:
        for part in turn.parts:
            _keys_fit(dict(part), PARTS[part["type"]])
    for message in stored:
        data = encode_message(message)  # a foreign shape, on purpose
        assert encode_message(decode_message(data)) == data
