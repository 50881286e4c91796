"""A shell command the user ran from the chat (`shell_command_action`, protocol.md §11.10).

The command runs in the user's terminal like the model's Shell tool (same exec, same card, same
streaming), but no model is called: the run records the command and its output as a shell turn
and as a user message in the history, so the model sees both on the next turn.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from cursor_byok.agent.turn import Turn
from cursor_byok.conversation.history_format import UserHistoryMessage
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.base import truncate_text
from cursor_byok.tools.shell import ShellTool

log = logging.getLogger(__name__)

# What the model gets of the output (the card gets the shell tool's own, larger, cap).
MAX_HISTORY_CHARS = 20_000
MAX_HISTORY_LINES = 400


def history_text(command: str, output: str, *, failed: bool) -> str:
    """The record of the user's command the model reads on later turns."""
    body = truncate_text(output, max_chars=MAX_HISTORY_CHARS, max_lines=MAX_HISTORY_LINES)
    state = " (it failed)" if failed else ""
    return (
        f"<user_shell_command>\nThe user ran this command in the terminal{state}:\n"
        f"$ {command}\n{body.rstrip()}\n</user_shell_command>"
    )


async def run(turn: Turn, command: str, make_ctx: Callable[[str, str], Any]) -> None:
    """Run `command` with the Shell tool's machinery and record it. `make_ctx(call_id,
    model_call_id)` builds the tool context of the agent loop."""
    call_id = f"user-shell-{uuid.uuid4()}"
    model_call_id = str(uuid.uuid4())
    tool = ShellTool()
    args = {"command": command, "description": "Your command"}
    ui = tool.ui_call(args)
    ui.tool_call_id = call_id
    ui.started_at_ms = int(time.time() * 1000)
    turn.step_started()
    turn.update(
        tool_call_started=pb.ToolCallStartedUpdate(
            call_id=call_id, tool_call=ui, model_call_id=model_call_id
        )
    )
    outcome = await tool.run(args, make_ctx(call_id, model_call_id))
    outcome.tool_call.tool_call_id = call_id
    outcome.tool_call.started_at_ms = ui.started_at_ms
    outcome.tool_call.completed_at_ms = int(time.time() * 1000)
    turn.update(
        tool_call_completed=pb.ToolCallCompletedUpdate(
            call_id=call_id, tool_call=outcome.tool_call, model_call_id=model_call_id
        )
    )
    turn.step_completed()
    turn.transcript.shell_turn = (command, outcome.text)
    message: UserHistoryMessage = {
        "role": "user",
        "content": history_text(command, outcome.text, failed=outcome.is_error),
    }
    turn.transcript.append(message)
    log.info("turn %s: user shell command recorded (%d chars)", turn.request_id, len(outcome.text))
