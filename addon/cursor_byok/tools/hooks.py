"""The hooks only the server can fire (issue 37): `execute_hook_args` (exec 27).

Cursor's client runs the user's hooks (`hooks.json`) itself for what it sees happen (a tool
about to run, a tool result, the end of a turn): those work on BYOK turns unchanged. Three steps
happen where only the server sees them: a compaction about to start (`preCompact`), a subagent
about to start (`subagentStart`) and a subagent that ended (`subagentStop`). For those the server
asks the client with exec 27 to run the hooks configured for that step and answers with what they
said. The client lists the steps that have hooks in `RequestContext.hooks_config.configured_steps`
(step names as in hooks.json: read in `@cursor/sdk` 1.1.0's hook executor); a step not listed
costs no round trip.

What the answers do here (the SDK's validators name the fields; their effect is [inf], from the
hooks' documented meaning):
- preCompact `user_message`: shown to the user before the summary.
- subagentStart `permission` "deny" (or "ask": there is no one to ask in a Task call) refuses the
  subagent, with `user_message` as the reason; `additional_context` is added to its prompt.
- subagentStop `followup_message`: the subagent is resumed with it (at most
  `MAX_FOLLOWUPS` times; the hook sees the count as `loop_count`); `additional_context` is added
  to what the parent model reads of the result.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import ToolContext
from .base import ToolError

log = logging.getLogger(__name__)

PRE_COMPACT = "preCompact"
SUBAGENT_START = "subagentStart"
SUBAGENT_STOP = "subagentStop"
MAX_FOLLOWUPS = 3
MAX_HOOK_TEXT = 8_000

Exec = Callable[[pb.ExecServerMessage], Awaitable[pb.ExecClientMessage]]


def configured_steps(context: pb.RequestContext | None) -> frozenset[str]:
    if context is None or not context.HasField("hooks_config"):
        return frozenset()
    return frozenset(context.hooks_config.configured_steps)


async def run_hook(exec_: Exec, request: pb.ExecuteHookRequest) -> pb.ExecuteHookResponse | None:
    """Ask the client to run the hooks of one step; their answer, or None when it gave none
    (an error, an older client): the step then goes on as if no hook were configured."""
    message = pb.ExecServerMessage(execute_hook_args=pb.ExecuteHookArgs(request=request))
    reply = await exec_(message)
    kind = reply.WhichOneof("message")
    if kind != "execute_hook_result":
        log.info("hook %s: the client answered %s", request.WhichOneof("request"), kind)
        return None
    return reply.execute_hook_result.response


def _text(value: str) -> str:
    return value[:MAX_HOOK_TEXT]


# --------------------------------------------------------------------------- preCompact


async def pre_compact(
    turn: Any,
    steps: frozenset[str],
    *,
    manual: bool,
    tokens: int,
    window: int,
    messages: int,
    to_compact: int,
    first: bool,
) -> str | None:
    """Fire preCompact when the request context configures it (`steps`: `configured_steps`;
    `manual`: the user's /summarize); the message its hooks want shown to the user."""
    if PRE_COMPACT not in steps:
        return None
    query = pb.PreCompactRequestQuery(
        trigger="manual" if manual else "auto",
        context_usage_percent=round(100.0 * tokens / window, 1) if window else 0.0,
        context_tokens=tokens,
        context_window_size=window,
        message_count=messages,
        messages_to_compact=to_compact,
        is_first_compaction=first,
        conversation_id=turn.run_request.conversation_id,
        generation_id=turn.request_id,
        model=turn.status.model,
    )
    response = await run_hook(turn.exec, pb.ExecuteHookRequest(pre_compact=query))
    if response is None or response.WhichOneof("response") != "pre_compact":
        return None
    return _text(response.pre_compact.user_message) or None


# --------------------------------------------------------------------------- subagents


def _parent(ctx: ToolContext) -> tuple[str, str]:
    run_request: pb.AgentRunRequest | None = getattr(ctx, "run_request", None)
    conversation = run_request.conversation_id if run_request is not None else ""
    return conversation, str(getattr(ctx, "model_name", "") or "")


async def subagent_start(ctx: ToolContext, sub: pb.SubagentArgs) -> None:
    """Fire subagentStart when configured: raise ToolError when its hooks refuse the subagent,
    else add their context to its prompt (in place)."""
    if SUBAGENT_START not in configured_steps(ctx.request_context):
        return
    conversation, model = _parent(ctx)
    query = pb.SubagentStartRequestQuery(
        subagent_id=sub.resume_agent_id,
        subagent_type=sub.subagent_type,
        task=sub.prompt,
        parent_conversation_id=conversation,
        tool_call_id=ctx.call_id,
        subagent_model=sub.model_id,
        conversation_id=conversation,
        model=model,
    )
    response = await run_hook(ctx.exec, pb.ExecuteHookRequest(subagent_start=query))
    if response is None or response.WhichOneof("response") != "subagent_start":
        return
    answer = response.subagent_start
    permission = answer.permission.strip().lower()
    if permission in ("deny", "ask"):
        why = _text(answer.user_message) or "no reason given"
        raise ToolError(f"A subagentStart hook refused this subagent ({permission}): {why}")
    if answer.additional_context:
        sub.prompt += f"\n\n<hook_context>\n{_text(answer.additional_context)}\n</hook_context>"


@dataclass
class Stopped:
    """A subagent's result after its subagentStop hooks: the (last) result and the context they
    add for the parent."""

    result: pb.SubagentResult | None
    additional_context: str = ""


async def subagent_stop(
    ctx: ToolContext,
    sub: pb.SubagentArgs,
    result: pb.SubagentResult | None,
    started: float,
    relay: Callable[[], contextlib.AbstractContextManager[None]] | None = None,
) -> Stopped:
    """Fire subagentStop when configured (`started`: time.monotonic() at the start); resume
    the subagent with each follow-up its hooks ask for (bounded), then return its last result.
    `relay`: a context manager factory that shows a resumed child's progress on the card."""
    if SUBAGENT_STOP not in configured_steps(ctx.request_context):
        return Stopped(result)
    conversation, model = _parent(ctx)
    context: list[str] = []
    for loop in range(MAX_FOLLOWUPS + 1):
        answer = await _stop_hook(ctx, sub, result, started, loop, conversation, model)
        if answer is None:
            break
        if answer.additional_context:
            context.append(_text(answer.additional_context))
        agent_id = _agent_id(result)
        if not answer.followup_message or not agent_id or loop == MAX_FOLLOWUPS:
            break
        again = pb.SubagentArgs()
        again.CopyFrom(sub)
        again.resume_agent_id = agent_id
        again.prompt = _text(answer.followup_message)
        with relay() if relay is not None else contextlib.nullcontext():
            reply = await ctx.exec(pb.ExecServerMessage(subagent_args=again))
        result = reply.subagent_result if reply.WhichOneof("message") == "subagent_result" else None
    return Stopped(result, "\n\n".join(context))


def _agent_id(result: pb.SubagentResult | None) -> str:
    if result is None:
        return ""
    kind = result.WhichOneof("result")
    if kind == "success":
        return "" if result.success.background_reason else result.success.agent_id
    return ""


async def _stop_hook(
    ctx: ToolContext,
    sub: pb.SubagentArgs,
    result: pb.SubagentResult | None,
    started: float,
    loop: int,
    conversation: str,
    model: str,
) -> pb.SubagentStopRequestResponse | None:
    kind = result.WhichOneof("result") if result is not None else None
    query = pb.SubagentStopRequestQuery(
        subagent_type=sub.subagent_type,
        status="completed" if kind == "success" else "error",
        duration_ms=int((time.monotonic() - started) * 1000),
        parent_conversation_id=conversation,
        conversation_id=conversation,
        model=model,
        loop_count=loop,
        task=sub.prompt,
    )
    if result is not None and kind == "success":
        success = result.success
        query.subagent_id = success.agent_id
        query.summary = success.final_message[:MAX_HOOK_TEXT]
        query.tool_call_count = success.tool_call_count
        if success.agent_id:
            query.child_conversation_id = success.agent_id
    elif result is not None and kind == "error":
        query.error_message = result.error.error
        query.subagent_id = result.error.agent_id
    response = await run_hook(ctx.exec, pb.ExecuteHookRequest(subagent_stop=query))
    if response is None or response.WhichOneof("response") != "subagent_stop":
        return None
    return response.subagent_stop
