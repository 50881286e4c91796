"""agent/actions.py: every ConversationAction variant → what the model is asked to do."""

from __future__ import annotations

import pytest

from cursor_byok.cursor import actions
from cursor_byok.pb import agent_v1_pb2 as pb

PLAN = """---
name: Demo
todos:
  - id: one
    content: First step
    status: pending
  - id: two
    content: "Second: step"
    status: in_progress
  - content: no id
  - id: bad
    status: pending
---
# Demo plan
"""


def run(state_mode: int = 0, **action) -> pb.AgentRunRequest:
    request = pb.AgentRunRequest(conversation_id="c")
    request.conversation_state.mode = state_mode
    for name, value in action.items():
        getattr(request.action, name).CopyFrom(value)
    return request


def test_every_variant_has_a_kind() -> None:
    """No ConversationAction variant falls through unnoticed: new ones need a decision."""
    variants = [f.name for f in pb.ConversationAction.DESCRIPTOR.oneofs_by_name["action"].fields]
    for name in variants:
        request = pb.AgentRunRequest()
        getattr(request.action, name).SetInParent()
        kind = actions.resolve(request).kind
        assert kind in {
            actions.MESSAGE,
            actions.RESUME,
            actions.SHELL,
            actions.CANCEL_SUBAGENT,
            actions.NOTHING,
            actions.SUMMARIZE,
            actions.UNSUPPORTED,
        }, name
    unsupported = {n for n in variants if actions.resolve(_with(n)).kind == actions.UNSUPPORTED}
    # execute_plan without any plan cannot be served either
    assert unsupported == {
        "subscription_notification_action",
        "inject_context_action",
        "execute_plan_action",
    }


def _with(name: str) -> pb.AgentRunRequest:
    request = pb.AgentRunRequest()
    getattr(request.action, name).SetInParent()
    return request


def test_no_action_is_unsupported_and_named() -> None:
    out = actions.resolve(pb.AgentRunRequest())
    assert out.kind == actions.UNSUPPORTED
    assert "(no action)" in out.error_text()
    request = _with("subscription_notification_action")
    assert "'subscription_notification_action'" in actions.resolve(request).error_text()


def test_user_message_mode_resolution() -> None:
    message = pb.UserMessageAction(user_message=pb.UserMessage(text="hi", mode=pb.AGENT_MODE_ASK))
    out = actions.resolve(run(pb.AGENT_MODE_PLAN, user_message_action=message))
    assert out.kind == actions.MESSAGE and out.user_message.text == "hi"
    assert out.mode == pb.AGENT_MODE_ASK  # UserMessage.mode before the state's
    message.user_message.mode = 0
    out = actions.resolve(run(pb.AGENT_MODE_PLAN, user_message_action=message))
    assert out.mode == pb.AGENT_MODE_PLAN  # then the checkpoint's
    assert out.request_context is None
    message.request_context.env.shell = "zsh"
    assert actions.resolve(run(user_message_action=message)).request_context.env.shell == "zsh"


def test_prepended_messages_come_first() -> None:
    message = pb.UserMessageAction(user_message=pb.UserMessage(text="last"))
    message.prepend_user_messages.add(text="first")
    out = actions.resolve(run(user_message_action=message))
    assert out.user_message.text == "first\n\nlast"


def test_start_plan_is_plan_mode_with_its_message() -> None:
    start = pb.StartPlanAction(
        user_message=pb.UserMessage(text="plan it", mode=pb.AGENT_MODE_AGENT)
    )
    start.request_context.env.shell = "fish"
    out = actions.resolve(run(pb.AGENT_MODE_AGENT, start_plan_action=start))
    assert out.kind == actions.MESSAGE
    assert out.mode == pb.AGENT_MODE_PLAN and out.user_message.mode == pb.AGENT_MODE_PLAN
    assert out.user_message.text == "plan it"
    assert out.request_context.env.shell == "fish"


@pytest.mark.parametrize(
    ("execution", "expected"),
    [
        (pb.AGENT_MODE_AGENT, pb.AGENT_MODE_AGENT),
        (pb.AGENT_MODE_DEBUG, pb.AGENT_MODE_DEBUG),
        (pb.AGENT_MODE_UNSPECIFIED, pb.AGENT_MODE_AGENT),
        (pb.AGENT_MODE_PLAN, pb.AGENT_MODE_AGENT),
    ],
)
def test_execute_plan_builds_in_the_execution_mode(execution, expected) -> None:
    build = pb.ExecutePlanAction(
        plan_file_content=PLAN, plan_file_path="/p/demo.plan.md", execution_mode=execution
    )
    out = actions.resolve(run(pb.AGENT_MODE_PLAN, execute_plan_action=build))
    assert out.kind == actions.MESSAGE and out.mode == expected
    assert "# Demo plan" in out.user_message.text and "/p/demo.plan.md" in out.user_message.text
    assert [t["content"] for t in out.todos] == ["First step", "Second: step", "no id"]
    assert out.todos[1] == {"id": "two", "content": "Second: step", "status": "in_progress"}


def test_execute_plan_sources() -> None:
    inline = pb.ExecutePlanAction(plan=pb.ConversationPlan(plan="inline plan text"))
    assert "inline plan text" in actions.resolve(run(execute_plan_action=inline)).user_message.text
    path_only = pb.ExecutePlanAction(plan_file_uri="file:///p/x.plan.md")
    text = actions.resolve(run(execute_plan_action=path_only)).user_message.text
    assert "file:///p/x.plan.md" in text and "Read the plan file" in text
    stored = run(execute_plan_action=pb.ExecutePlanAction())
    stored.conversation_state.plan = b"plan from the checkpoint"
    assert "plan from the checkpoint" in actions.resolve(stored).user_message.text


def test_plan_todos_tolerates_other_shapes() -> None:
    assert actions.plan_todos("# no front matter") == []
    assert actions.plan_todos("---\nname: x\n---\nbody") == []
    assert actions.plan_todos("") == []


def test_resume_and_shell_and_cancel_subagent() -> None:
    resume = pb.ResumeAction()
    resume.request_context.env.shell = "bash"
    out = actions.resolve(run(pb.AGENT_MODE_DEBUG, resume_action=resume))
    assert out.kind == actions.RESUME and out.mode == pb.AGENT_MODE_DEBUG
    assert out.request_context.env.shell == "bash"
    shell = pb.ShellCommandAction(shell_command=pb.ShellCommand(command="ls -la"), exec_id="e1")
    out = actions.resolve(run(shell_command_action=shell))
    assert (out.kind, out.shell_command, out.exec_id) == (actions.SHELL, "ls -la", "e1")
    blank = pb.ShellCommandAction(shell_command=pb.ShellCommand(command="  "))
    assert actions.resolve(run(shell_command_action=blank)).kind == actions.NOTHING
    cancel = pb.CancelSubagentAction(subagent_id="agent-9")
    out = actions.resolve(run(cancel_subagent_action=cancel))
    assert (out.kind, out.subagent_id) == (actions.CANCEL_SUBAGENT, "agent-9")


def test_background_completions_are_bounded_text() -> None:
    done = pb.BackgroundTaskCompletionAction()
    done.completions.add(
        kind=pb.BACKGROUND_TASK_KIND_SUBAGENT,
        status=pb.BACKGROUND_TASK_STATUS_ERROR,
        title="Refactor",
        detail="y" * 100_000,
        subagent_id="agent-1",
    )
    for i in range(30):
        done.completions.add(kind=pb.BACKGROUND_TASK_KIND_SHELL, task_id=f"s{i}")
    out = actions.resolve(run(background_task_completion_action=done))
    text = out.user_message.text
    assert out.kind == actions.MESSAGE
    assert "subagent Refactor failed" in text and "agent id agent-1" in text
    assert "characters omitted" in text and "and 11 more" in text
    assert len(text) < actions.MAX_COMPLETION_CHARS * 2
    empty = pb.BackgroundTaskCompletionAction()
    assert actions.resolve(run(background_task_completion_action=empty)).kind == actions.NOTHING


def test_async_ask_question_answer_reaches_the_model() -> None:
    late = pb.AsyncAskQuestionCompletionAction(original_tool_call_id="call_q")
    question = late.original_args.questions.add(id="q1", prompt="Which database?")
    question.options.add(id="a", label="Postgres")
    question.options.add(id="b", label="SQLite")
    late.result.success.answers.add(question_id="q1", selected_option_ids=["b"])
    out = actions.resolve(run(async_ask_question_completion_action=late))
    assert out.kind == actions.MESSAGE
    assert "Which database?: SQLite" in out.user_message.text
    assert "call_q" in out.user_message.text
    late.result.Clear()
    late.result.rejected.reason = "not now"
    text = actions.resolve(run(async_ask_question_completion_action=late)).user_message.text
    assert "skipped" in text and "not now" in text


def test_background_requests_do_not_supersede_the_running_turn() -> None:
    assert not actions.supersedes(run(background_shell_action=pb.BackgroundShellAction()))
    assert not actions.supersedes(run(cancel_subagent_action=pb.CancelSubagentAction()))
    assert actions.supersedes(run(user_message_action=pb.UserMessageAction()))
    assert actions.supersedes(run(resume_action=pb.ResumeAction()))
    assert actions.resolve(run(summarize_action=pb.SummarizeAction())).kind == actions.SUMMARIZE


def test_background_subagent_completion_ends_its_task_card() -> None:
    state = pb.ConversationStateStructure()
    running = state.subagent_runs_by_parent_tool_call_id["call_t"]
    running.parent_tool_call_id = "call_t"
    running.subagent_id = "agent-5"
    running.status = pb.SUBAGENT_RUN_STATUS_BACKGROUNDED
    running.title = "Refactor"
    done = pb.BackgroundTaskCompletionAction()
    done.completions.add(  # found by agent id
        kind=pb.BACKGROUND_TASK_KIND_SUBAGENT,
        status=pb.BACKGROUND_TASK_STATUS_ERROR,
        subagent_id="agent-5",
        output_path="/tmp/out.md",
    )
    done.completions.add(kind=pb.BACKGROUND_TASK_KIND_SHELL, tool_call_id="call_sh")
    done.completions.add(
        kind=pb.BACKGROUND_TASK_KIND_SUBAGENT,
        tool_call_id="call_p",
        reason=pb.BACKGROUND_TASK_COMPLETION_REASON_TASK_PROGRESS,
    )
    runs = actions.finished_subagent_runs(state, done.completions, now_ms=1_700_000_000_000)
    assert list(runs) == ["call_t"]
    run = runs["call_t"]
    assert run.status == pb.SUBAGENT_RUN_STATUS_ERROR and run.title == "Refactor"
    assert run.output_path == "/tmp/out.md" and run.completed_timestamp_ms == 1_700_000_000_000
    out = actions.resolve(run_with(state, done))
    assert out.completions and len(out.completions) == 3


def run_with(state, done) -> pb.AgentRunRequest:
    request = pb.AgentRunRequest()
    request.conversation_state.CopyFrom(state)
    request.action.background_task_completion_action.CopyFrom(done)
    return request


def test_goal_continuation_goes_on_only_with_an_active_goal() -> None:
    request = _with("goal_continuation_action")
    assert actions.resolve(request).kind == actions.NOTHING
    request.conversation_state.goal_state.objective = "Ship v2"
    request.conversation_state.goal_state.status = pb.GOAL_STATUS_PAUSED
    assert actions.resolve(request).kind == actions.NOTHING
    request.conversation_state.goal_state.status = pb.GOAL_STATUS_ACTIVE
    out = actions.resolve(request)
    assert out.kind == actions.MESSAGE and "Ship v2" in out.user_message.text
    assert out.user_message.simulated_msg_reason == pb.SIMULATED_MSG_REASON_GOAL_CONTINUATION


def test_goal_continuations_stop_when_idle_or_too_many() -> None:
    request = _with("goal_continuation_action")
    goal = request.conversation_state.goal_state
    goal.objective, goal.status = "Ship v2", pb.GOAL_STATUS_ACTIVE
    goal.idle_continuations_without_tool_calls = actions.MAX_IDLE_GOAL_CONTINUATIONS - 1
    assert actions.resolve(request).kind == actions.MESSAGE
    goal.idle_continuations_without_tool_calls += 1
    assert actions.resolve(request).kind == actions.NOTHING
    goal.idle_continuations_without_tool_calls = 0
    goal.continuation_count = actions.MAX_GOAL_CONTINUATIONS
    assert actions.resolve(request).kind == actions.NOTHING
