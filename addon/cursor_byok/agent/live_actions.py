"""ConversationActions that arrive on a running run's stream instead of starting a run.

While a turn runs, Cursor sends some actions on the same BidiAppend stream: stop one
subagent, or send a running shell or subagent to the background (the user pressed the
button on its card). The session core hands them to `handle` with the run's Turn:

- `cancel_subagent_action`: stop that child run (agent/subagents.py).
- `background_shell_action` / `background_subagent_action`: ask the client to move that
  tool call's shell / subagent to the background (`force_background_*_args` execs). The
  client then ends the pending Shell exec with a "backgrounded" event, or the pending Task
  exec with a `subagent_result` carrying a background reason; the tools already turn those
  into "running in the background" results [inf: the exec pair is in the schema, the
  sequence is our reading].
"""

from __future__ import annotations

import logging

from cursor_byok.agent import subagents
from cursor_byok.pb import agent_v1_pb2 as pb

log = logging.getLogger(__name__)

HANDLED = frozenset(
    {"cancel_subagent_action", "background_shell_action", "background_subagent_action"}
)


def handles(action: pb.ConversationAction) -> bool:
    """Whether `handle` serves this mid-run action (the others are ignored, as today)."""
    return action.WhichOneof("action") in HANDLED


async def handle(turn, action: pb.ConversationAction) -> bool:
    """Serve one mid-run action on the running `turn` (may be None); True if handled."""
    kind = action.WhichOneof("action")
    if kind == "cancel_subagent_action":
        subagent_id = action.cancel_subagent_action.subagent_id
        if not subagents.cancel(subagent_id):
            log.info("cancel_subagent_action: no running subagent %s", subagent_id)
        return True
    if kind == "background_shell_action":
        if turn is None:
            return True
        call_id = action.background_shell_action.tool_call_id
        message = pb.ExecServerMessage(
            force_background_shell_args=pb.ForceBackgroundShellArgs(tool_call_id=call_id)
        )
        reply = await turn.exec(message)
        status = reply.force_background_shell_result.status
        log.info("background shell %s: %s", call_id, pb.ForceBackgroundShellStatus.Name(status))
        return True
    if kind == "background_subagent_action":
        if turn is None:
            return True
        call_id = action.background_subagent_action.tool_call_id
        message = pb.ExecServerMessage(
            force_background_subagent_args=pb.ForceBackgroundSubagentArgs(tool_call_id=call_id)
        )
        reply = await turn.exec(message)
        status = reply.force_background_subagent_result.status
        log.info(
            "background subagent %s: %s", call_id, pb.ForceBackgroundSubagentStatus.Name(status)
        )
        return True
    return False
