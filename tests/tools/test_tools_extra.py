"""WriteShellStdin, ListMcpResources, EditNotebook: exec, card, text for the model."""

from __future__ import annotations

import json

from fake_context import thrown

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import tools_for
from cursor_byok.tools.extra import EditNotebookTool
from cursor_byok.tools.extra import ListMcpResourcesTool
from cursor_byok.tools.extra import WriteShellStdinTool

NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "intro"]},
        {
            "cell_type": "code",
            "metadata": {},
            "source": ["x = 1\n", "print(x)"],
            "outputs": [{"output_type": "stream", "text": ["1\n"]}],
            "execution_count": 3,
        },
    ],
    "metadata": {"kernelspec": {"name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


async def test_write_shell_stdin(make_ctx) -> None:
    def ok(request):
        assert request.write_shell_stdin_args.shell_id == 7
        assert request.write_shell_stdin_args.chars == "y\n"
        reply = pb.ExecClientMessage()
        reply.write_shell_stdin_result.success.shell_id = 7
        reply.write_shell_stdin_result.success.terminal_file_length_before_input_written = 120
        return reply

    ctx = make_ctx(overrides={"write_shell_stdin_args": ok})
    outcome = await WriteShellStdinTool().run({"shell_id": "7", "chars": "y\n"}, ctx)
    assert not outcome.is_error and "byte 120" in outcome.text and "AwaitShell" in outcome.text
    card = outcome.tool_call.write_shell_stdin_tool_call
    assert card.args.shell_id == 7 and card.result.success.shell_id == 7


async def test_write_shell_stdin_errors(make_ctx) -> None:
    def failed(request):
        reply = pb.ExecClientMessage()
        reply.write_shell_stdin_result.error.error = "no such shell"
        return reply

    ctx = make_ctx(overrides={"write_shell_stdin_args": failed})
    outcome = await WriteShellStdinTool().run({"shell_id": 3, "chars": "q"}, ctx)
    assert outcome.is_error and "no such shell" in outcome.text
    assert outcome.tool_call.write_shell_stdin_tool_call.result.error.error == "no such shell"
    bad = await WriteShellStdinTool().run({"shell_id": -1, "chars": "q"}, ctx)
    assert bad.is_error and len(ctx.execs) == 1
    threw = await WriteShellStdinTool().run(
        {"shell_id": 3, "chars": "q"}, make_ctx(overrides={"write_shell_stdin_args": thrown})
    )
    assert threw.is_error and threw.tool_call.write_shell_stdin_tool_call.result.HasField("error")


async def test_list_mcp_resources(make_ctx) -> None:
    def listing(request):
        assert request.list_mcp_resources_exec_args.server == "docs"
        reply = pb.ExecClientMessage()
        ok = reply.list_mcp_resources_exec_result.success
        ok.resources.add(uri="docs://a", name="A", mime_type="text/plain", server="docs")
        ok.resources.add(uri="docs://b", description="second")
        return reply

    ctx = make_ctx(overrides={"list_mcp_resources_exec_args": listing})
    outcome = await ListMcpResourcesTool().run({"server": "docs"}, ctx)
    assert not outcome.is_error
    assert outcome.text.splitlines() == [
        "- docs://a (server docs, A, text/plain)",
        "- docs://b: second",
    ]
    assert len(outcome.tool_call.list_mcp_resources_tool_call.result.success.resources) == 2


async def test_list_mcp_resources_empty_rejected_error(make_ctx) -> None:
    def empty(request):
        reply = pb.ExecClientMessage()
        reply.list_mcp_resources_exec_result.success.SetInParent()
        return reply

    def rejected(request):
        reply = pb.ExecClientMessage()
        reply.list_mcp_resources_exec_result.rejected.reason = "no"
        return reply

    outcome = await ListMcpResourcesTool().run(
        {}, make_ctx(overrides={"list_mcp_resources_exec_args": empty})
    )
    assert not outcome.is_error and outcome.text == "No MCP resources."
    outcome = await ListMcpResourcesTool().run(
        {}, make_ctx(overrides={"list_mcp_resources_exec_args": rejected})
    )
    assert outcome.is_error and "declined" in outcome.text


async def test_edit_notebook_changes_one_cell(make_ctx, workspace) -> None:
    path = workspace / "analysis.ipynb"
    path.write_text(json.dumps(NOTEBOOK, indent=1))
    ctx = make_ctx()
    outcome = await EditNotebookTool().run(
        {
            "target_notebook": str(path),
            "cell_idx": 1,
            "is_new_cell": False,
            "old_string": "x = 1",
            "new_string": "x = 2",
        },
        ctx,
    )
    assert not outcome.is_error, outcome.text
    assert ctx.exec_kinds() == ["read_args", "write_args"]
    after = json.loads(path.read_text())
    assert after["cells"][1]["source"] == ["x = 2\n", "print(x)"]
    assert after["cells"][1]["outputs"] == [] and after["cells"][1]["execution_count"] is None
    assert after["cells"][0] == NOTEBOOK["cells"][0] and after["metadata"] == NOTEBOOK["metadata"]
    card = outcome.tool_call.edit_tool_call
    assert card.args.path == str(path) and card.result.success.lines_added >= 1


async def test_edit_notebook_new_cell_and_new_file(make_ctx, workspace) -> None:
    path = workspace / "new.ipynb"
    ctx = make_ctx()
    args = {
        "target_notebook": str(path),
        "cell_idx": 0,
        "is_new_cell": True,
        "cell_language": "markdown",
        "old_string": "",
        "new_string": "# Hello\nworld",
    }
    outcome = await EditNotebookTool().run(args, ctx)
    assert not outcome.is_error, outcome.text
    notebook = json.loads(path.read_text())
    assert notebook["nbformat"] == 4
    assert notebook["cells"] == [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Hello\n", "world"]}
    ]


async def test_edit_notebook_errors(make_ctx, workspace) -> None:
    path = workspace / "analysis.ipynb"
    path.write_text(json.dumps(NOTEBOOK))
    tool = EditNotebookTool()
    base = {"target_notebook": str(path), "is_new_cell": False, "new_string": "z"}
    missing = await tool.run({**base, "cell_idx": 1, "old_string": "nope"}, make_ctx())
    assert missing.is_error and "not found in cell 1" in missing.text
    past = await tool.run({**base, "cell_idx": 9, "old_string": "x"}, make_ctx())
    assert past.is_error and "does not exist" in past.text
    other = await tool.run({**base, "target_notebook": str(workspace / "README.md"),
                            "cell_idx": 0, "old_string": "x"}, make_ctx())  # fmt: skip
    assert other.is_error and "not a notebook" in other.text
    (workspace / "broken.ipynb").write_text("{not json")
    broken = await tool.run(
        {**base, "target_notebook": str(workspace / "broken.ipynb"), "cell_idx": 0,
         "old_string": "x"}, make_ctx()
    )  # fmt: skip
    assert broken.is_error and "not valid JSON" in broken.text
    assert json.loads(path.read_text()) == NOTEBOOK  # nothing written on errors
    assert broken.tool_call.edit_tool_call.result.HasField("error")


def test_new_tools_in_their_modes() -> None:
    request = pb.AgentRunRequest()
    request.action.user_message_action.user_message.text = "hi"
    agent = tools_for(pb.AGENT_MODE_AGENT, request).names()
    assert {"WriteShellStdin", "ListMcpResources", "EditNotebook"} <= set(agent)
    ask = tools_for(pb.AGENT_MODE_ASK, request).names()
    assert "EditNotebook" not in ask and "WriteShellStdin" not in ask
    assert "ListMcpResources" in ask
    plan = tools_for(pb.AGENT_MODE_PLAN, request).names()
    assert "EditNotebook" not in plan
