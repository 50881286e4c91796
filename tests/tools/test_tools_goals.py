"""CreateGoal and UpdateGoal: the conversation's goal kept in the checkpoint, no exec."""

from __future__ import annotations

from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.goals import CreateGoalTool
from cursor_byok.tools.goals import UpdateGoalTool
from cursor_byok.tools.registry import tools_for


async def test_one_goal_at_a_time_and_updates_need_one(ctx: FakeToolContext) -> None:
    state = pb.ConversationStateStructure()
    ctx.conversation_state = state  # type: ignore[attr-defined]
    update = await UpdateGoalTool().run({"status": "complete"}, ctx)
    assert update.is_error and "no goal" in update.text
    assert update.tool_call.update_goal_tool_call.result.HasField("error")
    made = await CreateGoalTool().run({"objective": "Ship v2"}, ctx)
    assert not made.is_error and not ctx.execs
    assert state.goal_state.status == pb.GOAL_STATUS_ACTIVE and state.goal_state.goal_id
    again = await CreateGoalTool().run({"objective": "Something else"}, ctx)
    assert again.is_error and "already active" in again.text
    assert state.goal_state.objective == "Ship v2"
    bad = await UpdateGoalTool().run({"status": "finished-ish"}, ctx)
    assert bad.is_error and state.goal_state.status == pb.GOAL_STATUS_ACTIVE
    done = await UpdateGoalTool().run({"status": "done"}, ctx)  # an alias of complete
    assert done.tool_call.update_goal_tool_call.result.success.status == pb.GOAL_STATUS_COMPLETE
    # a completed goal may be followed by a new one
    assert not (await CreateGoalTool().run({"objective": "Ship v3"}, ctx)).is_error


async def test_without_a_checkpoint_to_write_the_tool_says_so(ctx: FakeToolContext) -> None:
    out = await CreateGoalTool().run({"objective": "x"}, ctx)
    assert out.is_error and "not available" in out.text


def test_offered_where_the_agent_acts_and_update_only_with_a_goal() -> None:
    request = pb.AgentRunRequest()
    names = tools_for(pb.AGENT_MODE_AGENT, request).names()
    assert "CreateGoal" in names and "UpdateGoal" not in names
    request.conversation_state.goal_state.status = pb.GOAL_STATUS_PAUSED
    assert "UpdateGoal" in tools_for(pb.AGENT_MODE_AGENT, request).names()
    assert "CreateGoal" not in tools_for(pb.AGENT_MODE_ASK, request).names()
    request.subagent_type_name = "explore"
    assert not {"CreateGoal", "UpdateGoal"} & set(tools_for(pb.AGENT_MODE_AGENT, request).names())


def test_continuations_are_counted_and_a_tool_call_ends_idleness() -> None:
    from cursor_byok.tools import goals

    state = pb.ConversationStateStructure()
    goals.note_continuation(state)  # no goal: nothing to count
    assert not state.HasField("goal_state")
    state.goal_state.status = pb.GOAL_STATUS_ACTIVE
    goals.note_continuation(state)
    goals.note_continuation(state)
    assert state.goal_state.continuation_count == 2
    assert state.goal_state.idle_continuations_without_tool_calls == 2
    goals.note_tool_call(state)
    assert state.goal_state.idle_continuations_without_tool_calls == 0
