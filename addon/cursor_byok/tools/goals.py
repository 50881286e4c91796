"""The goal tools (issue 37): CreateGoal and UpdateGoal, completed by the proxy itself.

A goal is one objective the agent keeps working toward across turns (`GoalState` in the
conversation's checkpoint, `ConversationStateStructure.goal_state`). Like TodoWrite there is no
exec: the card is `create_goal_tool_call` / `update_goal_tool_call` (ToolCall 70 / 71) with its
result, and the state lives in the checkpoint, so every later turn (and Cursor) sees it. While a
goal is active, a `GoalContinuationAction` run asks the model to go on with it
(cursor/actions.py).

The model-facing names and descriptions are ours: Cursor's server-side tool text is not known
here [inf]. Offered in the modes that act (not in Ask, Plan or subagents); UpdateGoal only while
the conversation has a goal.
"""

from __future__ import annotations

import uuid
from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import loose_str

STATUSES: dict[str, pb.GoalStatus] = {
    "active": pb.GOAL_STATUS_ACTIVE,
    "paused": pb.GOAL_STATUS_PAUSED,
    "complete": pb.GOAL_STATUS_COMPLETE,
    "cleared": pb.GOAL_STATUS_CLEARED,
}
_ALIASES = {"completed": "complete", "done": "complete", "clear": "cleared", "pause": "paused",
            "resume": "active", "resumed": "active"}  # fmt: skip
NAMES = {value: name for name, value in STATUSES.items()}
MAX_OBJECTIVE_CHARS = 4_000


def has_goal(state: pb.ConversationStateStructure) -> bool:
    """A goal the model may still update: set and not cleared."""
    return state.HasField("goal_state") and state.goal_state.status not in (
        pb.GOAL_STATUS_UNSPECIFIED,
        pb.GOAL_STATUS_CLEARED,
    )


def note_continuation(state: pb.ConversationStateStructure) -> None:
    """A continuation run starts: counted, and idle until a tool call says otherwise (the
    limits are in cursor/actions.py `_goal_continuation`)."""
    if state.HasField("goal_state"):
        state.goal_state.continuation_count += 1
        state.goal_state.idle_continuations_without_tool_calls += 1


def note_tool_call(state: pb.ConversationStateStructure) -> None:
    """The model called a tool: the goal is being worked on."""
    if state.HasField("goal_state"):
        state.goal_state.idle_continuations_without_tool_calls = 0


def _state(ctx: ToolContext) -> pb.ConversationStateStructure:
    """The checkpoint this turn writes (the loop's `CallContext.conversation_state`)."""
    state = getattr(ctx, "conversation_state", None)
    if not isinstance(state, pb.ConversationStateStructure):
        raise ToolError("Goals are not available in this run.")
    return state


class CreateGoalTool(Tool):
    name = "CreateGoal"
    identifier = "CREATE_GOAL"
    read_only = True
    description = (
        "Set the objective you will keep working toward across turns, for long tasks the user "
        "wants finished without checking in at every step. It is shown to the user and kept with "
        "the conversation; you are asked to continue while it is active. One goal at a time: "
        "mark the current one complete or cleared (UpdateGoal) before setting another."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "objective": {
                "type": "string",
                "description": "What done looks like, concretely (one or two sentences).",
            }
        },
        "required": ["objective"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.CreateGoalArgs(objective=loose_str(args, "objective"))
        return pb.ToolCall(create_goal_tool_call=pb.CreateGoalToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.create_goal_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        objective = loose_str(args, "objective").strip()
        if not objective:
            raise ToolError("Pass the `objective`.")
        if len(objective) > MAX_OBJECTIVE_CHARS:
            raise ToolError(f"The objective is too long (at most {MAX_OBJECTIVE_CHARS} chars).")
        state = _state(ctx)
        if has_goal(state) and state.goal_state.status != pb.GOAL_STATUS_COMPLETE:
            current = state.goal_state
            raise ToolError(
                f"A goal is already {NAMES[current.status]}: {current.objective!r}. Mark it "
                "complete or cleared with UpdateGoal before setting another."
            )
        run_request = getattr(ctx, "run_request", None)
        state.goal_state.CopyFrom(
            pb.GoalState(
                conversation_id=run_request.conversation_id if run_request is not None else "",
                goal_id=str(uuid.uuid4()),
                objective=objective,
                status=pb.GOAL_STATUS_ACTIVE,
            )
        )
        call = self._ui_call(args)
        call.create_goal_tool_call.result.success.SetInParent()
        return ToolOutcome(f"Goal set (active): {objective}", False, call)


class UpdateGoalTool(Tool):
    name = "UpdateGoal"
    identifier = "UPDATE_GOAL"
    read_only = True
    description = (
        "Change the status of the conversation's goal: complete when its objective is met, "
        "paused when you need the user before going on, active to resume it, cleared to drop it."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"status": {"type": "string", "enum": list(STATUSES)}},
        "required": ["status"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.UpdateGoalArgs(status=STATUSES.get(_status_name(args), pb.GOAL_STATUS_UNSPECIFIED))
        return pb.ToolCall(update_goal_tool_call=pb.UpdateGoalToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.update_goal_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        name = _status_name(args)
        if name not in STATUSES:
            raise ToolError(f"Unknown goal status; use one of: {', '.join(STATUSES)}.")
        state = _state(ctx)
        if not has_goal(state):
            raise ToolError("The conversation has no goal to update; set one with CreateGoal.")
        state.goal_state.status = STATUSES[name]
        state.goal_state.idle_continuations_without_tool_calls = 0
        call = self._ui_call(args)
        call.update_goal_tool_call.result.success.status = STATUSES[name]
        return ToolOutcome(f"Goal {name}: {state.goal_state.objective}", False, call)


def _status_name(args: dict[str, Any]) -> str:
    text = loose_str(args, "status").strip().lower().removeprefix("goal_status_")
    return _ALIASES.get(text, text)
