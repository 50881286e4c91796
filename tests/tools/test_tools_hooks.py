"""tools/hooks.py: server-side hook steps fire only when configured and their answers count."""

from __future__ import annotations

import time

import pytest
from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import hooks
from cursor_byok.tools.base import ToolError


def _answer(**response) -> pb.ExecClientMessage:
    return pb.ExecClientMessage(
        execute_hook_result=pb.ExecuteHookResult(response=pb.ExecuteHookResponse(**response))
    )


async def test_no_configured_step_no_round_trip(ctx: FakeToolContext) -> None:
    sub = pb.SubagentArgs(prompt="p")
    await hooks.subagent_start(ctx, sub)
    stopped = await hooks.subagent_stop(ctx, sub, None, time.monotonic())
    assert stopped.result is None and not ctx.execs


async def test_start_ask_refuses_and_context_joins_the_prompt(ctx: FakeToolContext) -> None:
    ctx.request_context.hooks_config.configured_steps.append(hooks.SUBAGENT_START)
    answers = [
        _answer(subagent_start=pb.SubagentStartRequestResponse(permission="ask")),
        _answer(subagent_start=pb.SubagentStartRequestResponse(additional_context="use rg")),
    ]
    ctx.overrides["execute_hook_args"] = lambda _request: answers.pop(0)
    with pytest.raises(ToolError, match="ask"):
        await hooks.subagent_start(ctx, pb.SubagentArgs(prompt="p"))
    sub = pb.SubagentArgs(prompt="p", subagent_type="explore")
    await hooks.subagent_start(ctx, sub)
    assert "use rg" in sub.prompt
    query = ctx.execs[-1].execute_hook_args.request.subagent_start
    assert query.subagent_type == "explore" and query.tool_call_id == ctx.call_id


async def test_follow_ups_are_bounded(ctx: FakeToolContext) -> None:
    ctx.request_context.hooks_config.configured_steps.append(hooks.SUBAGENT_STOP)
    again = pb.SubagentStopRequestResponse(followup_message="more", additional_context="c")
    ctx.overrides["execute_hook_args"] = lambda _request: _answer(subagent_stop=again)
    ok = pb.SubagentResult()
    ok.success.agent_id = "agent-1"
    ok.success.final_message = "done"
    ctx.overrides["subagent_args"] = lambda _request: pb.ExecClientMessage(subagent_result=ok)
    stopped = await hooks.subagent_stop(ctx, pb.SubagentArgs(prompt="p"), ok, time.monotonic())
    resumed = [e.subagent_args for e in ctx.execs if e.WhichOneof("message") == "subagent_args"]
    assert len(resumed) == hooks.MAX_FOLLOWUPS
    assert all(r.resume_agent_id == "agent-1" and r.prompt == "more" for r in resumed)
    assert stopped.result is not None and stopped.additional_context.count("c") == 4
