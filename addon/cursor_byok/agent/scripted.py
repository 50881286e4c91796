"""A scripted stand-in for the agent loop: no model, but every channel of the protocol.

It streams thinking and text, asks the client to read a file through an exec request, answers
with what it read, and records a proper transcript so checkpoints and the next turn's history work.
Useful to check a Cursor setup end to end without a provider key, and as the transport tests'
agent. The file it reads is the first word of the user's message that looks like a path
(contains a dot or a slash), else `README.md`.
"""

from __future__ import annotations

import re

from cursor_byok.agent.turn import Turn
from cursor_byok.conversation.history_format import ToolCallPart
from cursor_byok.conversation.history_format import ToolResultPart
from cursor_byok.pb import agent_v1_pb2 as pb

_PATH = re.compile(r"[\w./\\-]*[./\\][\w./\\-]+")


def pick_path(text: str) -> str:
    match = _PATH.search(text)
    return match.group(0) if match else "README.md"


class ScriptedAgent:
    name = "scripted"

    async def run(self, turn: Turn) -> None:
        user_text = turn.instruction.user_message.text
        path = pick_path(user_text)
        turn.transcript.append({"role": "user", "content": [{"type": "text", "text": user_text}]})
        earlier = sum(1 for m in turn.transcript.history if m.get("role") == "user")

        turn.step_started()
        turn.thinking(f"The user wants {path}; this is message {earlier + 1} of the chat.")
        turn.update(thinking_completed=pb.ThinkingCompletedUpdate(thinking_duration_ms=1))
        turn.text(f"Reading `{path}`.")
        content, ok = await _read(turn, path)
        turn.step_completed()

        turn.step_started()
        lines = content.splitlines()
        answer = (
            f"`{path}` has {len(lines)} lines. It starts with: {lines[0] if lines else ''}"
            if ok
            else f"I could not read `{path}`: {content}"
        )
        for piece in _chunks(answer, 16):
            turn.text(piece)
        turn.update(token_delta=pb.TokenDeltaUpdate(tokens=len(answer) // 4 + 1))
        turn.step_completed()
        turn.transcript.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
        turn.usage.add(input_tokens=100 * (earlier + 1), output_tokens=len(answer) // 4 + 1)


async def _read(turn: Turn, path: str) -> tuple[str, bool]:
    """The one Read call: its card, the exec on the client, the call and result in the history."""
    call_id = f"call-{turn.request_id}-1"
    model_call_id = f"model-{turn.request_id}-1"
    args = pb.ReadToolArgs(path=path)
    turn.update(
        tool_call_started=pb.ToolCallStartedUpdate(
            call_id=call_id,
            tool_call=pb.ToolCall(read_tool_call=pb.ReadToolCall(args=args)),
            model_call_id=model_call_id,
        )
    )
    exec_message = pb.ExecServerMessage(read_args=pb.ReadArgs(path=path, tool_call_id=call_id))
    content, ok = _read_outcome(await turn.exec(exec_message))
    tool_result = pb.ReadToolResult()
    if ok:
        tool_result.success.content = content
    else:
        tool_result.error.error_message = content
    turn.update(
        tool_call_completed=pb.ToolCallCompletedUpdate(
            call_id=call_id,
            tool_call=pb.ToolCall(read_tool_call=pb.ReadToolCall(args=args, result=tool_result)),
            model_call_id=model_call_id,
        )
    )
    call: ToolCallPart = {"type": "tool-call", "toolCallId": call_id, "toolName": "Read",
                          "args": {"path": path}}  # fmt: skip
    turn.transcript.append({"role": "assistant", "content": [call]})
    result: ToolResultPart = {"type": "tool-result", "toolCallId": call_id, "toolName": "Read",
                              "result": content, "isError": not ok}  # fmt: skip
    turn.transcript.append({"role": "tool", "content": [result]})
    if ok:
        turn.transcript.note_read(path)
    return content, ok


def _read_outcome(result: pb.ExecClientMessage) -> tuple[str, bool]:
    read = result.read_result
    kind = read.WhichOneof("result")
    if kind == "success":
        return read.success.content, True
    if kind is None:
        return "the client returned no result", False
    detail = getattr(read, kind)
    for name in ("error", "error_message", "reason", "path"):
        value = getattr(detail, name, "")
        if isinstance(value, str) and value:
            return f"{kind}: {value}", False
    return kind, False


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
