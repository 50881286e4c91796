"""Task: subagents (tools.md §4.18).

The parent asks the client to start a child run with `subagent_args`; the client opens a new
run for it (its run request names `subagent_type_name`, carries the parent headers and the
model from `SubagentArgs.model_id`), which cursor-byok serves like any run but with the
subagent tool set, and answers the parent's exec with `subagent_result` when the child ends.
The Task card's state lives in the checkpoint's `subagent_runs_by_parent_tool_call_id`:
RUNNING while the child works (else the card shows "Stopped"), then SUCCESS / ERROR /
BACKGROUNDED. Depth is bounded: child runs are not offered Task (registry.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any
from typing import ClassVar
from typing import NoReturn

from cursor_byok.pb import agent_v1_pb2 as pb

from . import hooks
from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import arg_bool
from .base import arg_opt_str
from .base import arg_str
from .base import exec_message
from .base import loose_str
from .base import no_result_text
from .base import result_of
from .base import truncate_text

MAX_FINAL_MESSAGE_CHARS = 30_000
# SubagentType oneof names for the model's subagent_type strings (generalPurpose → unspecified).
_UI_TYPES = {
    "explore": "explore",
    "shell": "shell",
    "bash": "bash",
    "debug": "debug",
    "computeruse": "computer_use",
    "browseruse": "browser_use",
    "mediareview": "media_review",
    "cursorguide": "cursor_guide",
    "generalpurpose": "unspecified",
    "": "unspecified",
}


def ui_subagent_type(name: str) -> pb.SubagentType:
    key = name.replace("_", "").replace("-", "").lower()
    variant = _UI_TYPES.get(key)
    out = pb.SubagentType()
    if variant is None:
        out.custom.name = name
    else:
        getattr(out, variant).SetInParent()
    return out


def child_model(
    run_request: pb.AgentRunRequest | None, subagent_type: str, asked: str, defined: str = ""
) -> str:
    """The model id for the child run: a per-type override, else the model the user's definition
    of the type names (`defined`: one the config routes), else the model the parent's model
    asked for when Cursor offers it, else the parent's own model ("inherit")."""
    if run_request is None:
        return defined or (asked if asked and asked != "inherit" else "")
    parent = run_request.requested_model.model_id or run_request.model_details.model_id
    for override in run_request.subagent_model_overrides:
        if override.subagent_type.lower() == subagent_type.lower():
            if override.disabled:
                raise ToolError(f"Subagents of type {subagent_type!r} are disabled by the user.")
            if override.HasField("model") and override.model.model_id:
                return override.model.model_id
            return parent
    if defined:
        return defined
    if asked and asked.lower() != "inherit":
        offered = [m.model_id for m in run_request.selected_subagent_models if m.model_id]
        offered += [m.model_id for m in run_request.selected_subagent_model_details if m.model_id]
        for model_id in offered:
            if model_id.lower() == asked.lower():
                return model_id
    return parent


def running_state(call_id: str, args: dict[str, Any]) -> pb.SubagentRunState:
    """The Task card's RUNNING entry (the card shows "Stopped" without one)."""
    state = pb.SubagentRunState(
        parent_tool_call_id=call_id,
        status=pb.SUBAGENT_RUN_STATUS_RUNNING,
        title=loose_str(args, "description") or "Subagent",
        environment=pb.SUBAGENT_EXECUTION_ENVIRONMENT_LOCAL,
    )
    resume = loose_str(args, "resume")
    if resume:
        state.subagent_id = resume
    return state


class TaskTool(Tool):
    name = "Task"
    identifier = "TASK"
    read_only = True  # several subagents of one batch run side by side
    description = (
        "Start a subagent: an independent agent with its own context that works on a "
        "self-contained task (research, a focused change, running and fixing tests) and "
        "returns one final message. Give it a complete `prompt`: it does not see this "
        "conversation. Use subagent_type `explore` for read-only codebase research, "
        "`generalPurpose` for anything else. Pass `resume` (an agent id from an earlier Task "
        "result) to continue that subagent."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) title."},
            "prompt": {"type": "string", "description": "The full task for the subagent."},
            "subagent_type": {
                "type": "string",
                "description": "generalPurpose (default), explore, shell, debug…",
            },
            "model": {
                "type": "string",
                "description": "Model for the subagent; 'inherit' (default) uses yours.",
            },
            "resume": {"type": "string", "description": "Agent id of a subagent to continue."},
            "readonly": {
                "type": "boolean",
                "description": "The subagent must not modify files.",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Return at once; the result arrives later as a notification.",
            },
        },
        "required": ["description", "prompt"],
    }

    def __init__(
        self, *, force_readonly: bool = False, models: dict[str, str] | None = None
    ) -> None:
        self.force_readonly = force_readonly  # Ask / Plan: read-only subagents only
        self.models = models or {}  # definition name (lowercase) -> the model it names

    @classmethod
    def offering(cls, custom: Iterable[pb.CustomSubagent], **kwargs: Any) -> TaskTool:
        """The tool with the client's own subagent definitions named in its description
        (`RequestContext.custom_subagents`: the SDK's `AgentOptions.agents`, the IDE's
        `.cursor/agents/*.md`); the model picks one by name as `subagent_type`, and the client
        runs it with its prompt."""
        lines = [f"- `{c.name}`: {c.description or '(no description)'}" for c in custom if c.name]
        if not lines:
            return cls(**kwargs)
        description = (
            f"{cls.description} Besides those, the user defined these subagent types (pass the "
            "name as subagent_type):\n" + "\n".join(lines)
        )
        return type(cls.__name__, (cls,), {"description": description})(**kwargs)

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        task = pb.TaskArgs(
            description=loose_str(args, "description"),
            prompt=loose_str(args, "prompt"),
            model=loose_str(args, "model"),
            resume=loose_str(args, "resume"),
            environment=pb.SUBAGENT_EXECUTION_ENVIRONMENT_LOCAL,
        )
        task.subagent_type.CopyFrom(ui_subagent_type(loose_str(args, "subagent_type")))
        if task.resume:
            task.agent_id = task.resume
        return pb.ToolCall(task_tool_call=pb.TaskToolCall(args=task))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.task_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        prompt = arg_str(args, "prompt", required=True)
        arg_str(args, "description")  # a string if given (the card shows it)
        sub = self._subagent_args(args, ctx, prompt)
        await hooks.subagent_start(ctx, sub)  # the user's subagentStart hooks (hooks.py)
        runs: dict[str, pb.SubagentRunState] | None = getattr(ctx, "subagent_runs", None)
        state = running_state(ctx.call_id, args)
        if runs is not None:
            runs[ctx.call_id] = state
            await _publish(ctx)
        started = time.monotonic()
        watcher = _watcher(ctx, prompt)  # the child's progress on this card, resumed ones too
        reply = await _run_child(ctx, sub, watcher, state)
        result = result_of(reply, "subagent_result")
        stopped = await hooks.subagent_stop(ctx, sub, result, started, watcher)
        result = stopped.result  # the last one, when a subagentStop hook resumed the child
        state.completed_timestamp_ms = int(time.time() * 1000)
        call = self._ui_call(args)
        if result is None or result.WhichOneof("result") != "success":
            await _failed(ctx, reply, result, state, call)
        assert result is not None
        success = result.success
        state.subagent_id = success.agent_id or state.subagent_id
        is_background = sub.run_in_background or bool(success.background_reason)
        state.status = (
            pb.SUBAGENT_RUN_STATUS_BACKGROUNDED if is_background else pb.SUBAGENT_RUN_STATUS_SUCCESS
        )
        if success.transcript_path:
            state.transcript_path = success.transcript_path
        await _publish(ctx)
        done = call.task_tool_call.result.success
        done.agent_id = success.agent_id
        done.is_background = is_background
        done.duration_ms = int((time.monotonic() - started) * 1000)
        done.background_reason = success.background_reason
        if success.transcript_path:
            done.transcript_path = success.transcript_path
        text = _result_text(success, is_background)
        if stopped.additional_context:
            text += f"\n\n<hook_context>\n{stopped.additional_context}\n</hook_context>"
        return ToolOutcome(text=text, is_error=False, tool_call=call)

    def _subagent_args(
        self, args: dict[str, Any], ctx: ToolContext, prompt: str
    ) -> pb.SubagentArgs:
        """What the client needs to start the child run (its model, mode, readonly, background)."""
        kind = arg_str(args, "subagent_type", default="generalPurpose") or "generalPurpose"
        run_request: pb.AgentRunRequest | None = getattr(ctx, "run_request", None)
        # Multitask mode: subagents always run in the background (tools.md §2).
        background = arg_bool(args, "run_in_background") or ctx.mode == pb.AGENT_MODE_MULTITASK
        readonly = self.force_readonly or arg_bool(args, "readonly")
        sub = pb.SubagentArgs(
            tool_call_id=ctx.call_id,
            subagent_type=kind,
            model_id=child_model(
                run_request,
                kind,
                arg_opt_str(args, "model") or "",
                self.models.get(kind.lower(), ""),
            ),
            prompt=prompt,
            readonly=readonly,
            run_in_background=background,
            mode=pb.TASK_MODE_PLAN if ctx.mode == pb.AGENT_MODE_PLAN else pb.TASK_MODE_AGENT,
            environment=pb.SUBAGENT_EXECUTION_ENVIRONMENT_LOCAL,
        )
        resume = arg_opt_str(args, "resume")
        if resume:
            # Only when resuming: the field is optional, and Cursor's SDK takes a present
            # empty id as the child's id (`resume_agent_id ?? uuid()`), so the child would run
            # as conversation "" and report no id.
            sub.resume_agent_id = resume
        if run_request is not None and run_request.conversation_id:
            sub.parent_conversation_id = run_request.conversation_id
            sub.root_parent_conversation_id = run_request.conversation_id
        return sub


def _watcher(ctx: ToolContext, prompt: str) -> Callable[[], AbstractContextManager[Any]] | None:
    """What links a child run to this call while it runs (`follow_subagent`: the agent relays
    the child's progress to this call's card); None when the context offers no link."""

    def relay(update: pb.InteractionUpdate) -> None:
        ctx.delta(
            pb.ToolCallDelta(task_tool_call_delta=pb.TaskToolCallDelta(interaction_update=update))
        )

    follow = getattr(ctx, "follow_subagent", None)
    return (lambda: follow(prompt, relay)) if follow is not None else None


async def _run_child(
    ctx: ToolContext,
    sub: pb.SubagentArgs,
    watcher: Callable[[], AbstractContextManager[Any]] | None,
    state: pb.SubagentRunState,
) -> pb.ExecClientMessage:
    """Ask the client for the child run and wait for its result, linked to this call."""
    watch = watcher() if watcher is not None else contextlib.nullcontext()
    try:
        with watch:
            return await ctx.exec(exec_message(subagent_args=sub))
    except BaseException:
        state.status = pb.SUBAGENT_RUN_STATUS_ABORTED
        state.completed_timestamp_ms = int(time.time() * 1000)
        raise


async def _failed(
    ctx: ToolContext,
    reply: pb.ExecClientMessage,
    result: pb.SubagentResult | None,
    state: pb.SubagentRunState,
    call: pb.ToolCall,
) -> NoReturn:
    """The child run failed (or the client gave no result): its card and the model say why."""
    if result is None:
        message = no_result_text(reply, "run the subagent")
    else:
        message = result.error.error or "the subagent failed"
        if result.error.agent_id:
            state.subagent_id = result.error.agent_id
    state.status = pb.SUBAGENT_RUN_STATUS_ERROR
    state.detail = message[:500]
    await _publish(ctx)
    call.task_tool_call.result.error.error = message
    raise ToolError(f"The subagent failed: {message}", call)


def _result_text(success: pb.SubagentSuccess, is_background: bool) -> str:
    """What the model reads of a finished (or backgrounded) child run."""
    if is_background:
        who = f" (agent id {success.agent_id})" if success.agent_id else ""
        return (
            f"The subagent{who} is running in the background; "
            "its result will arrive as a notification when it finishes."
        )
    final = truncate_text(success.final_message, max_chars=MAX_FINAL_MESSAGE_CHARS)
    if success.agent_id:
        how = f"subagent agent id: {success.agent_id}; pass it as `resume` to continue it"
    else:  # the client reported none: a `resume` could name nothing
        how = "the client reported no agent id for this subagent, so it cannot be resumed"
    return (final or "(the subagent ended without a final message)") + (
        f"\n\n[{how}; {success.tool_call_count} tool calls]"
    )


async def _publish(ctx: ToolContext) -> None:
    publish = getattr(ctx, "publish_checkpoint", None)
    if publish is not None:
        await publish()
