"""imported_history: an imported conversation becomes messages of our history format."""

from __future__ import annotations

from cursor_byok.cursor import imported_history
from cursor_byok.pb import agent_v1_pb2 as pb


def test_every_kind_of_message_is_converted_and_opaque_parts_left_out() -> None:
    history = pb.ConversationHistory()
    user = history.messages.add().user
    user.content.add().text.text = "hello"
    user.content.add().image.data = "aGk="
    assistant = history.messages.add().assistant
    assistant.content.add().reasoning.text = "thinking"
    assistant.content.add().reasoning.signature = "sig"  # no text: left out
    assistant.content.add().redacted_reasoning.data = "opaque"
    call = assistant.content.add().tool_call
    call.tool_call_id, call.tool_name, call.args_json = "c1", "read", '["not", "an object"]'
    tool = history.messages.add().tool
    tool.tool_call_id, tool.tool_name, tool.is_error = "c1", "read", True
    tool.content.add().text.text = "no such file"
    tool.content.add().image.data = "aGk="
    history.messages.add().assistant.SetInParent()  # empty: left out
    out = imported_history.messages(history)
    assert [m["role"] for m in out] == ["user", "assistant", "tool"]
    assert out[0]["content"][0] == {"type": "text", "text": "hello"}
    assert out[0]["content"][1]["text"] == imported_history.IMAGE_IN_MESSAGE
    assert out[1]["content"] == [
        {"type": "reasoning", "text": "thinking"},
        {
            "type": "tool-call",
            "toolCallId": "c1",
            "toolName": "read",
            "args": {"value": ["not", "an object"]},
        },
    ]
    [result] = out[2]["content"]
    assert result["isError"] is True
    assert result["result"] == "no such file\n" + imported_history.IMAGE_IN_RESULT
