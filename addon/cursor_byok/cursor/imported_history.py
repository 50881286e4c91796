"""An imported conversation (`UserMessageAction.conversation_history`, issue 37) as history.

A client can start a run with the past of a conversation held elsewhere (another agent, an
export): provider-neutral messages of user text and images, assistant text, reasoning and tool
calls, and tool results. They become messages of our history format, placed before the run's
user message, so the model reads them and every later turn inherits them from the checkpoint.
Pure: no I/O.

What does not carry over: images (a placeholder says where one was), redacted reasoning (opaque
to any other provider) and reasoning signatures (valid only for the model that wrote them).
`replace_user_info` is not read: what it replaces is not known here [inf].
"""

from __future__ import annotations

import json
from typing import Any

from cursor_byok.conversation.history_format import AssistantPart
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.conversation.history_format import ToolResultPart
from cursor_byok.conversation.history_format import UserPart
from cursor_byok.pb import agent_v1_pb2 as pb

# Images stay out: the model of this conversation may take none (a text-only model refuses the
# whole request), and images.py describes only the current message's.
IMAGE_IN_MESSAGE = "[the user attached an image here; it is not part of the imported history]"
IMAGE_IN_RESULT = "[an image the tool returned is not part of the imported history]"


def messages(history: pb.ConversationHistory) -> list[HistoryMessage]:
    """The imported messages in our history format, in order; empty ones left out."""
    out: list[HistoryMessage] = []
    for item in history.messages:
        kind = item.WhichOneof("message")
        if kind == "user":
            user = _user_parts(item.user.content)
            if user:
                out.append({"role": "user", "content": user})
        elif kind == "assistant":
            parts = _assistant_parts(item.assistant.content)
            if parts:
                out.append({"role": "assistant", "content": parts})
        elif kind == "tool":
            out.append({"role": "tool", "content": [_tool_result(item.tool)]})
    return out


def _user_parts(content) -> list[UserPart]:
    parts: list[UserPart] = []
    for piece in content:
        kind = piece.WhichOneof("content")
        if kind == "text" and piece.text.text:
            parts.append({"type": "text", "text": piece.text.text})
        elif kind == "image":
            parts.append({"type": "text", "text": IMAGE_IN_MESSAGE})
    return parts


def _assistant_parts(content) -> list[AssistantPart]:
    parts: list[AssistantPart] = []
    for piece in content:
        kind = piece.WhichOneof("content")
        if kind == "text" and piece.text.text:
            parts.append({"type": "text", "text": piece.text.text})
        elif kind == "reasoning" and piece.reasoning.text:
            parts.append({"type": "reasoning", "text": piece.reasoning.text})
        elif kind == "tool_call":
            call = piece.tool_call
            parts.append(
                {
                    "type": "tool-call",
                    "toolCallId": call.tool_call_id,
                    "toolName": call.tool_name,
                    "args": _args(call.args_json),
                }
            )
    return parts


def _args(text: str) -> dict[str, Any]:
    """A call's JSON arguments as an object (anything else is kept under "value")."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"value": text}
    return value if isinstance(value, dict) else {"value": value}


def _tool_result(tool: pb.ConversationHistoryToolMessage) -> ToolResultPart:
    texts = []
    for piece in tool.content:
        kind = piece.WhichOneof("content")
        if kind == "text":
            texts.append(piece.text.text)
        elif kind == "image":
            texts.append(IMAGE_IN_RESULT)
    texts += [c.content for c in tool.hook_additional_contexts if c.content]
    return {
        "type": "tool-result",
        "toolCallId": tool.tool_call_id,
        "toolName": tool.tool_name,
        "result": "\n".join(texts),
        "isError": bool(tool.is_error),
    }
