"""Task (subagents): subagent_args exec → subagent_result, card, run states, model choice."""

from __future__ import annotations

import pytest
from fake_context import thrown

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import tools_for
from cursor_byok.tools.task import TaskTool
from cursor_byok.tools.task import child_model
from cursor_byok.tools.task import ui_subagent_type


def parent_request() -> pb.AgentRunRequest:
    request = pb.AgentRunRequest(conversation_id="parent-conv")
    request.requested_model.model_id = "Parent Model"
    request.selected_subagent_models.add(model_id="Fast Model")
    return request


def success(agent_id: str = "child-1", final: str = "found it", **kw):
    def answer(request: pb.ExecServerMessage) -> pb.ExecClientMessage:
        reply = pb.ExecClientMessage()
        done = reply.subagent_result.success
        done.agent_id, done.final_message, done.tool_call_count = agent_id, final, 3
        for key, value in kw.items():
            setattr(done, key, value)
        return reply

    return answer


def with_run(ctx, request: pb.AgentRunRequest | None = None):
    ctx.run_request = request or parent_request()
    ctx.subagent_runs = {}
    ctx.published = []

    async def publish() -> None:
        ctx.published.append(
            {k: pb.SubagentRunState(**_fields(v)) for k, v in ctx.subagent_runs.items()}
        )

    ctx.publish_checkpoint = publish
    return ctx


def _fields(state: pb.SubagentRunState) -> dict:
    return {f.name: v for f, v in state.ListFields()}


async def test_task_runs_the_child_through_subagent_args(make_ctx) -> None:
    ctx = with_run(make_ctx(overrides={"subagent_args": success()}))
    outcome = await TaskTool().run(
        {"description": "Find it", "prompt": "Find the bug.", "subagent_type": "explore"}, ctx
    )
    assert not outcome.is_error
    assert "found it" in outcome.text and "child-1" in outcome.text
    [request] = ctx.execs
    sub = request.subagent_args
    assert sub.tool_call_id == "call-1" and sub.prompt == "Find the bug."
    assert sub.subagent_type == "explore" and sub.model_id == "Parent Model"
    assert sub.parent_conversation_id == "parent-conv" and not sub.readonly
    assert sub.mode == pb.TASK_MODE_AGENT
    assert sub.environment == pb.SUBAGENT_EXECUTION_ENVIRONMENT_LOCAL
    assert not sub.HasField("api_key_credentials")
    card = outcome.tool_call.task_tool_call
    assert card.args.description == "Find it" and card.args.subagent_type.HasField("explore")
    assert card.result.success.agent_id == "child-1"
    # RUNNING published before the exec, SUCCESS after
    assert [p["call-1"].status for p in ctx.published] == [
        pb.SUBAGENT_RUN_STATUS_RUNNING,
        pb.SUBAGENT_RUN_STATUS_SUCCESS,
    ]
    final = ctx.subagent_runs["call-1"]
    assert final.subagent_id == "child-1" and final.title == "Find it"
    assert final.completed_timestamp_ms > 0


async def test_task_error_result_is_a_tool_error(make_ctx) -> None:
    def failed(request):
        reply = pb.ExecClientMessage()
        reply.subagent_result.error.agent_id = "child-2"
        reply.subagent_result.error.error = "aborted by the user"
        return reply

    ctx = with_run(make_ctx(overrides={"subagent_args": failed}))
    outcome = await TaskTool().run({"description": "x", "prompt": "y"}, ctx)
    assert outcome.is_error and "aborted by the user" in outcome.text
    assert outcome.tool_call.task_tool_call.result.error.error == "aborted by the user"
    assert ctx.subagent_runs["call-1"].status == pb.SUBAGENT_RUN_STATUS_ERROR
    assert ctx.subagent_runs["call-1"].subagent_id == "child-2"


async def test_task_client_threw(make_ctx) -> None:
    ctx = with_run(make_ctx(overrides={"subagent_args": thrown}))
    outcome = await TaskTool().run({"description": "x", "prompt": "y"}, ctx)
    assert outcome.is_error and outcome.tool_call.task_tool_call.result.HasField("error")


async def test_task_background(make_ctx) -> None:
    answer = success(background_reason=pb.SUBAGENT_BACKGROUND_REASON_AGENT_REQUEST, final="")
    ctx = with_run(make_ctx(overrides={"subagent_args": answer}))
    outcome = await TaskTool().run(
        {"description": "x", "prompt": "y", "run_in_background": True}, ctx
    )
    assert not outcome.is_error and "background" in outcome.text
    assert ctx.execs[0].subagent_args.run_in_background
    assert outcome.tool_call.task_tool_call.result.success.is_background
    assert ctx.subagent_runs["call-1"].status == pb.SUBAGENT_RUN_STATUS_BACKGROUNDED


async def test_task_readonly_in_plan_mode_and_missing_prompt(make_ctx) -> None:
    ctx = with_run(make_ctx(mode=pb.AGENT_MODE_PLAN, overrides={"subagent_args": success()}))
    outcome = await TaskTool(force_readonly=True).run({"description": "x", "prompt": "y"}, ctx)
    assert not outcome.is_error
    assert ctx.execs[0].subagent_args.readonly
    assert ctx.execs[0].subagent_args.mode == pb.TASK_MODE_PLAN
    bad = await TaskTool().run({"description": "x"}, ctx)
    assert bad.is_error and "prompt" in bad.text and len(ctx.execs) == 1


def test_child_model_choice() -> None:
    request = parent_request()
    assert child_model(request, "explore", "") == "Parent Model"
    assert child_model(request, "explore", "inherit") == "Parent Model"
    assert child_model(request, "explore", "fast model") == "Fast Model"  # offered by Cursor
    assert child_model(request, "explore", "unknown") == "Parent Model"
    override = request.subagent_model_overrides.add(subagent_type="explore")
    override.model.model_id = "Override Model"
    assert child_model(request, "explore", "Fast Model") == "Override Model"
    request.subagent_model_overrides.add(subagent_type="shell", disabled=True)
    from cursor_byok.tools.base import ToolError

    with pytest.raises(ToolError):
        child_model(request, "shell", "")


def test_ui_subagent_types() -> None:
    assert ui_subagent_type("generalPurpose").HasField("unspecified")
    assert ui_subagent_type("explore").HasField("explore")
    assert ui_subagent_type("my-reviewer").custom.name == "my-reviewer"


def test_task_offered_except_in_subagent_runs() -> None:
    request = parent_request()
    request.action.user_message_action.user_message.text = "hi"
    for mode in (pb.AGENT_MODE_AGENT, pb.AGENT_MODE_PLAN, pb.AGENT_MODE_ASK, pb.AGENT_MODE_DEBUG):
        assert "Task" in tools_for(mode, request).names()
    ask = tools_for(pb.AGENT_MODE_ASK, request).get("Task")
    assert ask is not None and ask.force_readonly  # type: ignore[attr-defined]
    request.subagent_type_name = "explore"
    assert "Task" not in tools_for(pb.AGENT_MODE_AGENT, request).names()


def test_ui_call_never_raises() -> None:
    tool = TaskTool()
    assert tool.ui_call({"description": 5, "subagent_type": None}).HasField("task_tool_call")
    assert tool.ui_call("garbage").HasField("task_tool_call")  # type: ignore[arg-type]


async def test_multitask_mode_runs_subagents_in_the_background(make_ctx) -> None:
    answer = success(background_reason=pb.SUBAGENT_BACKGROUND_REASON_AGENT_REQUEST)
    ctx = with_run(make_ctx(mode=pb.AGENT_MODE_MULTITASK, overrides={"subagent_args": answer}))
    outcome = await TaskTool().run({"description": "x", "prompt": "y"}, ctx)
    assert not outcome.is_error and ctx.execs[0].subagent_args.run_in_background


async def test_a_new_task_leaves_resume_agent_id_unset(make_ctx) -> None:
    """Cursor's SDK takes a present resume_agent_id as the child's id, even an empty one."""
    ctx = with_run(make_ctx(overrides={"subagent_args": success()}))
    await TaskTool().run({"description": "Find it", "prompt": "Find the bug."}, ctx)
    [request] = ctx.execs
    assert not request.subagent_args.HasField("resume_agent_id")


async def test_resume_sets_resume_agent_id(make_ctx) -> None:
    ctx = with_run(make_ctx(overrides={"subagent_args": success()}))
    await TaskTool().run({"description": "Go on", "prompt": "Continue.", "resume": "child-1"}, ctx)
    [request] = ctx.execs
    assert request.subagent_args.resume_agent_id == "child-1"


async def test_a_result_without_agent_id_is_not_offered_for_resume(make_ctx) -> None:
    ctx = with_run(make_ctx(overrides={"subagent_args": success(agent_id="")}))
    outcome = await TaskTool().run({"description": "Find it", "prompt": "Find the bug."}, ctx)
    assert "agent id: ;" not in outcome.text
    assert "pass it as `resume`" not in outcome.text
    assert "no agent id" in outcome.text and "found it" in outcome.text


def test_custom_subagent_types_are_offered_by_name() -> None:
    custom = [
        pb.CustomSubagent(name="reviewer", description="Reviews changes"),
        pb.CustomSubagent(name="", description="nameless: not offered"),
    ]
    tool = TaskTool.offering(custom, force_readonly=True)
    assert isinstance(tool, TaskTool) and tool.force_readonly
    assert "`reviewer`: Reviews changes" in tool.description
    assert "nameless" not in tool.description
    assert TaskTool.description not in ("", tool.description)  # the class keeps its own
    assert TaskTool.offering([]).description == TaskTool.description
