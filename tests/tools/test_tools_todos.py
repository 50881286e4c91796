"""TodoWrite and UpdateCurrentStep: local tools, no exec."""

from __future__ import annotations

from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.todos import TodoWriteTool
from cursor_byok.tools.todos import UpdateCurrentStepTool


async def test_replace_then_merge(ctx: FakeToolContext):
    tool = TodoWriteTool()
    out = await tool.run(
        {
            "merge": False,
            "todos": [
                {"id": "a", "content": "write code", "status": "in_progress"},
                {"id": "b", "content": "test it"},
            ],
        },
        ctx,
    )
    assert not out.is_error and not ctx.execs
    assert [(t["id"], t["status"]) for t in ctx.todos] == [("a", "in_progress"), ("b", "pending")]
    assert "(0/2 completed)" in out.text and "[~] write code" in out.text
    ok = out.tool_call.update_todos_tool_call.result.success
    assert ok.total_count == 2 and not ok.was_merge
    assert ok.todos[0].status == pb.TODO_STATUS_IN_PROGRESS

    out = await tool.run(
        {
            "merge": True,
            "todos": [{"id": "a", "status": "completed"}, {"id": "c", "content": "ship"}],
        },
        ctx,
    )
    assert [(t["id"], t["content"], t["status"]) for t in ctx.todos] == [
        ("a", "write code", "completed"),
        ("b", "test it", "pending"),
        ("c", "ship", "pending"),
    ]
    assert out.tool_call.update_todos_tool_call.result.success.was_merge
    assert out.tool_call.update_todos_tool_call.args.merge


async def test_todo_errors_leave_state_untouched(ctx):
    ctx.todos.append({"id": "a", "content": "x", "status": "pending"})
    out = await TodoWriteTool().run(
        {"merge": True, "todos": [{"id": "a", "status": "finished-ish"}]}, ctx
    )
    assert out.is_error and "Unknown todo status" in out.text
    assert ctx.todos == [{"id": "a", "content": "x", "status": "pending"}]
    out = await TodoWriteTool().run({"merge": True, "todos": [{"id": "new"}]}, ctx)
    assert out.is_error and "needs `content`" in out.text
    out = await TodoWriteTool().run({"merge": False, "todos": "a, b"}, ctx)
    assert out.is_error and out.tool_call.update_todos_tool_call.result.error.error


async def test_status_aliases(ctx):
    await TodoWriteTool().run(
        {"merge": False, "todos": [{"id": "1", "content": "x", "status": "In Progress"}]}, ctx
    )
    assert ctx.todos[0]["status"] == "in_progress"


async def test_update_current_step_counts(ctx):
    tool = UpdateCurrentStepTool()
    first = await tool.run({"current_step": "Reading code"}, ctx)
    second = await tool.run({"current_step": "Writing", "final_summary": "done"}, ctx)
    assert not first.is_error and not ctx.execs
    assert first.tool_call.communicate_update_tool_call.result.success.message_index == 1
    assert second.tool_call.communicate_update_tool_call.result.success.message_index == 2
    assert second.tool_call.communicate_update_tool_call.args.final_summary == "done"
    out = await tool.run({}, ctx)
    assert out.is_error


async def test_merge_into_todos_in_another_spelling(ctx):
    # Todos restored from a checkpoint may use the enum spelling.
    ctx.todos.append({"id": "a", "content": "x", "status": "TODO_STATUS_IN_PROGRESS"})
    out = await TodoWriteTool().run({"merge": True, "todos": [{"id": "b", "content": "y"}]}, ctx)
    card = out.tool_call.update_todos_tool_call.result.success
    assert [t.status for t in card.todos] == [pb.TODO_STATUS_IN_PROGRESS, pb.TODO_STATUS_PENDING]
