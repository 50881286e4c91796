"""Tool sets per mode and flags, MCP naming, and the ui_call / spec contract of every tool."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from fake_context import FakeToolContext
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools import BUILTIN
from cursor_byok.tools import ToolSet
from cursor_byok.tools import get_tool
from cursor_byok.tools import provider_specs
from cursor_byok.tools import request_context_of
from cursor_byok.tools import tools_for
from cursor_byok.tools.base import Tool

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MUTATING = {"Write", "StrReplace", "Delete"}


def run_request(*, web_fetch: bool | None = True, lints: bool | None = True) -> pb.AgentRunRequest:
    """A run request shaped like the captured ones: context in request_context_parts."""
    run = pb.AgentRunRequest()
    context = run.action.request_context_parts.dynamic_context
    context.env.workspace_paths.append("/work/project")
    if web_fetch is not None:
        context.web_fetch_enabled = web_fetch
    if lints is not None:
        context.read_lints_enabled = lints
    run.action.user_message_action.user_message.text = "hi"
    for server, tool in (("user-github", "create_issue"), ("user-my server", "search.docs")):
        d = run.mcp_tools.mcp_tools.add(name=tool, provider_identifier=server, tool_name=tool)
        d.input_schema.struct_value.update({"type": "object", "properties": {"q": {}}})
    clash = run.mcp_tools.mcp_tools.add(name="Read", provider_identifier="", tool_name="Read")
    clash.description = "an MCP tool called Read"
    return run


def test_agent_mode_has_everything_we_back():
    tools = tools_for(pb.AGENT_MODE_AGENT, run_request())
    names = tools.names()
    for name in ("Shell", "Grep", "Glob", "Read", "Write", "StrReplace", "Delete", "ReadLints",
                 "TodoWrite", "AskQuestion", "AwaitShell", "WebFetch", "SwitchMode",
                 "GetMcpTools", "FetchMcpResource", "CallMcpTool"):  # fmt: skip
        assert name in names
    assert "CreatePlan" not in names and "LS" not in names and "WebSearch" not in names
    assert len(set(names)) == len(names)


def test_ask_mode_is_read_only():
    tools = tools_for(pb.AGENT_MODE_ASK, run_request())
    assert not MUTATING & set(tools.names())
    assert "SwitchMode" not in tools.names() and "CreatePlan" not in tools.names()
    shell = tools.get("Shell")
    assert shell is not None and shell.read_only_sandbox  # type: ignore[attr-defined]
    assert not any(t.name.startswith("mcp_") for t in tools)
    call = tools.get("CallMcpTool")
    assert call is not None and "user-github: create_issue" in call.description


def test_plan_and_debug_modes():
    plan = tools_for(pb.AGENT_MODE_PLAN, run_request()).names()
    assert "CreatePlan" in plan and not MUTATING & set(plan)
    debug = tools_for(pb.AGENT_MODE_DEBUG, run_request()).names()
    assert {"Write", "StrReplace", "Delete", "Shell"} <= set(debug) and "CreatePlan" not in debug


def test_flags_remove_tools():
    assert "WebFetch" not in tools_for(1, run_request(web_fetch=False)).names()
    assert "WebFetch" not in tools_for(1, run_request(web_fetch=None)).names()
    assert "ReadLints" not in tools_for(1, run_request(lints=False)).names()
    assert "ReadLints" in tools_for(1, run_request(lints=None)).names()


def test_unknown_mode_falls_back_to_agent(caplog):
    with caplog.at_level(logging.WARNING):
        tools = tools_for(pb.AGENT_MODE_TRIAGE, run_request())
    assert tools.names() == tools_for(pb.AGENT_MODE_AGENT, run_request()).names()
    assert "AGENT_MODE_TRIAGE" in caplog.text
    assert tools_for(99, run_request()).names() == tools.names()


def test_subagent_runs():
    run = run_request()
    run.subagent_type_name = "explore"
    names = tools_for(pb.AGENT_MODE_AGENT, run).names()
    assert "AskQuestion" not in names and "UpdateCurrentStep" in names
    run.suppress_subagent_progress_update_tool = True
    assert "UpdateCurrentStep" not in tools_for(pb.AGENT_MODE_AGENT, run).names()


def test_extra_optional_tools():
    assert "LS" in tools_for(1, run_request(), extra=["LS", "Bogus"]).names()


def test_mcp_tools_have_valid_unique_names():
    tools = tools_for(pb.AGENT_MODE_AGENT, run_request())
    mcp = [t for t in tools if t.identifier == "MCP" and t.name != "CallMcpTool"]
    names = [t.name for t in mcp]
    assert names == ["mcp_user-github_create_issue", "mcp_user-my_server_search_docs", "mcp_Read"]
    assert all(VALID.match(n) for n in names)
    assert len({n.lower() for n in tools.names()}) == len(tools)
    assert mcp[0].parameters == {"type": "object", "properties": {"q": {}}}


async def test_mcp_tool_routes_back_to_server_and_tool(make_ctx):
    tools = tools_for(pb.AGENT_MODE_AGENT, run_request())
    tool = tools.get("mcp_user-my_server_search_docs")
    assert tool is not None

    def answer(request: pb.ExecServerMessage) -> pb.ExecClientMessage:
        reply = pb.ExecClientMessage()
        reply.mcp_result.success.content.add().text.text = "found"
        return reply

    ctx: FakeToolContext = make_ctx(overrides={"mcp_args": answer})
    out = await tool.run({"q": "x"}, ctx)
    assert out.text == "found" and not out.is_error
    mcp = ctx.execs[0].mcp_args
    assert (mcp.provider_identifier, mcp.tool_name, mcp.name) == (
        "user-my server",
        "search.docs",
        "search.docs",
    )


def test_request_context_sources():
    run = run_request()
    assert request_context_of(run).env.workspace_paths == ["/work/project"]
    run.action.user_message_action.request_context.env.workspace_paths.append("/inline")
    assert request_context_of(run).env.workspace_paths == ["/inline"]
    override = pb.RequestContext(web_fetch_enabled=False)
    assert "WebFetch" not in tools_for(1, run, request_context=override).names()


def test_toolset_lookup_and_specs():
    tools = tools_for(pb.AGENT_MODE_AGENT, run_request())
    assert isinstance(tools, ToolSet) and tools.get("read") is tools.get("Read")
    assert get_tool("Grep", tools) is tools.get("Grep")
    assert get_tool("LS") is not None and get_tool("Nope") is None
    specs = tools.specs()
    assert [s[0] for s in specs] == tools.names()
    for name, description, schema in specs:
        assert VALID.match(name) and description
        assert schema["type"] == "object" and isinstance(schema.get("properties"), dict)
        assert isinstance(schema.get("required", []), list)
    assert provider_specs(tools)[0].name == specs[0][0]


def test_identifiers_follow_the_pending_contracts():
    expected = {"Read": "READ", "StrReplace": "STR_REPLACE", "AwaitShell": "AWAIT",
                "CallMcpTool": "MCP", "CreatePlan": "CREATE_PLAN_V2",
                "UpdateCurrentStep": "COMMUNICATE_UPDATE", "Shell": "SHELL", "Grep": "GREP",
                "Glob": "GLOB", "Write": "WRITE", "Delete": "DELETE"}  # fmt: skip
    for name, identifier in expected.items():
        assert BUILTIN[name]().identifier == identifier


def _all_tools() -> list[Tool]:
    return list(tools_for(pb.AGENT_MODE_AGENT, run_request(), extra=["LS", "CreatePlan"]))


GARBAGE: list[Any] = [
    {},
    None,
    "text",
    [1, 2],
    {"path": 5, "todos": "x", "questions": [None, 3, {"options": "no"}], "offset": "x"},
    {"command": ["ls"], "pattern": {"a": 1}, "-A": "many", "block_until_ms": 1e30},
    {"arguments": {"x": float("nan")}, "q": object()},
    {"offset": 2**40, "limit": -(2**40), "head_limit": 2**63},
]


@pytest.mark.parametrize("tool", _all_tools(), ids=lambda t: t.name)
@pytest.mark.parametrize("args", GARBAGE, ids=range(len(GARBAGE)))
def test_ui_call_never_raises(tool: Tool, args: Any):
    call = tool.ui_call(args)
    assert isinstance(call, pb.ToolCall)
    assert call.WhichOneof("tool") is not None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
arg_keys = st.sampled_from(
    ["path", "contents", "old_string", "command", "pattern", "glob_pattern", "todos", "merge",
     "questions", "url", "paths", "server", "toolName", "arguments", "offset", "limit", "-A"]
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(arg_keys, json_values, max_size=6))
def test_ui_call_never_raises_on_json_args(args: dict[str, Any]):
    for tool in _all_tools():
        assert tool.ui_call(args).WhichOneof("tool") is not None


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(arg_keys, json_values, max_size=6))
async def test_run_never_raises_on_json_args(tmp_path_factory, args: dict[str, Any]):
    workspace = tmp_path_factory.mktemp("fuzz")

    def refuse(request: pb.ExecServerMessage) -> pb.ExecClientMessage:
        # Fuzzed paths may be absolute: never let them write or delete outside the tmp dir.
        reply = pb.ExecClientMessage()
        if request.HasField("write_args"):
            reply.write_result.rejected.reason = "fuzz"
        else:
            reply.delete_result.rejected.reason = "fuzz"
        return reply

    ctx = FakeToolContext(workspace, overrides={"write_args": refuse, "delete_args": refuse})
    for tool in _all_tools():
        if tool.name in ("Shell", "AwaitShell"):
            continue  # would run commands / sleep
        out = await tool.run(args, ctx)
        assert isinstance(out.text, str) and out.text
        assert out.tool_call.WhichOneof("tool") is not None
