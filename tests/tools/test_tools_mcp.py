"""MCP: dynamic tools, CallMcpTool, GetMcpTools, FetchMcpResource against the canned servers."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_context import FakeToolContext
from google.protobuf import json_format

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.mcp import CallMcpToolTool
from cursor_byok.tools.mcp import FetchMcpResourceTool
from cursor_byok.tools.mcp import GetMcpToolsTool
from cursor_byok.tools.mcp import McpToolRef
from cursor_byok.tools.mcp import collect_mcp_tools
from cursor_byok.tools.mcp import dynamic_mcp_tools
from cursor_byok.tools.mcp import object_schema
from cursor_byok.tools.mcp import sanitize_name

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _definition(name: str, server: str, tool: str, schema=None) -> pb.McpToolDefinition:
    d = pb.McpToolDefinition(name=name, provider_identifier=server, tool_name=tool)
    d.description = f"{tool} of {server}"
    if schema is not None:
        d.input_schema.CopyFrom(json_format.ParseDict(schema, d.input_schema))
    return d


def test_sanitize_name_rules():
    assert sanitize_name("mcp_user-demo_echo", set()) == "mcp_user-demo_echo"
    assert sanitize_name("mcp_my server.v2/do it!", set()) == "mcp_my_server_v2_do_it"
    long = sanitize_name("mcp_" + "x" * 100, set())
    assert VALID.match(long) and len(long) == 64
    assert sanitize_name("Read", {"Read"}) == "Read_2"
    assert sanitize_name("", set()) == "mcp_tool"


def test_object_schema_normalises():
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({"properties": {"a": {}}, "required": None}) == {
        "type": "object",
        "properties": {"a": {}},
    }
    wrapped = object_schema({"type": "string"})
    assert wrapped["type"] == "object" and "value" in wrapped["properties"]


def test_collect_dedupes_sources():
    run = pb.AgentRunRequest()
    run.mcp_tools.mcp_tools.append(_definition("echo", "user-demo", "echo", {"type": "object"}))
    context = pb.RequestContext()
    context.tools.append(_definition("echo", "user-demo", "echo"))
    server = context.mcp_meta_tool_options.mcp_descriptors.add(
        server_name="other", server_identifier="user-other"
    )
    server.tools.add(tool_name="ping", input_schema_json='{"type":"object","properties":{}}')
    refs = collect_mcp_tools(run, context)
    assert [(r.provider_identifier, r.tool_name) for r in refs] == [
        ("user-demo", "echo"),
        ("user-other", "ping"),
    ]
    assert refs[1].server_name == "other" and refs[1].schema == {"type": "object", "properties": {}}


async def test_dynamic_tool_routes_to_server_and_tool(ctx: FakeToolContext):
    assert collect_mcp_tools(pb.AgentRunRequest(), None) == []
    refs = [
        McpToolRef(name="echo", tool_name="echo", provider_identifier="user-demo"),
        McpToolRef(name="fail", tool_name="fail", provider_identifier="user-demo"),
    ]
    echo, fail = dynamic_mcp_tools(refs, {"Read"})
    assert echo.name == "mcp_user-demo_echo" and VALID.match(echo.name)
    assert echo.parameters["type"] == "object" and echo.identifier == "MCP"
    out = await echo.run({"text": "hi", "n": 2}, ctx)
    assert not out.is_error, out.text
    assert json.loads(out.text) == {"n": 2, "text": "hi"}
    mcp = ctx.execs[0].mcp_args
    assert (mcp.name, mcp.provider_identifier, mcp.tool_name) == ("echo", "user-demo", "echo")
    assert mcp.tool_call_id == "call-1"
    assert out.tool_call.mcp_tool_call.result.success.content[0].text.text == out.text
    out = await fail.run({}, ctx)
    assert out.is_error and "demo failure" in out.text
    assert out.tool_call.mcp_tool_call.result.success.is_error


async def test_mcp_not_found_and_rejected(make_ctx):
    ctx = make_ctx()
    [ghost] = dynamic_mcp_tools(
        [McpToolRef(name="x", tool_name="x", provider_identifier="ghost")], set()
    )
    out = await ghost.run({}, ctx)
    assert out.is_error and "MCP server not found" in out.text and "demo" in out.text
    assert out.tool_call.mcp_tool_call.result.error.error == out.text

    def rejected(request):
        reply = pb.ExecClientMessage()
        reply.mcp_result.rejected.reason = "no thanks"
        return reply

    out = await ghost.run({}, make_ctx(overrides={"mcp_args": rejected}))
    assert out.is_error and "declined" in out.text
    assert out.tool_call.mcp_tool_call.result.rejected.reason == "no thanks"


async def test_call_mcp_tool_resolves_names_and_reports_unknown_tools(ctx):
    tool = CallMcpToolTool([McpToolRef("echo", "echo", "user-demo", server_name="demo")])
    out = await tool.run({"server": "demo", "toolName": "echo", "arguments": '{"a": [1]}'}, ctx)
    assert not out.is_error and json.loads(out.text) == {"a": [1.0]}
    assert ctx.execs[0].mcp_args.provider_identifier == "user-demo"
    out = await tool.run({"server": "demo", "toolName": "nope"}, ctx)
    assert out.is_error and "MCP tool not found" in out.text and "echo" in out.text
    out = await tool.run({"server": "demo", "toolName": "echo", "arguments": [1]}, ctx)
    assert out.is_error and "arguments" in out.text


async def test_mcp_image_content(ctx):
    tool = CallMcpToolTool()
    out = await tool.run({"server": "user-demo", "toolName": "image"}, ctx)
    assert not out.is_error and out.images and out.images[0].mime_type == "image/png"
    assert "image" in out.text


async def test_get_mcp_tools_catalog_and_detail(ctx):
    out = await GetMcpToolsTool().run({}, ctx)
    assert "Server demo (id user-demo) — status: ready" in out.text
    assert "  - echo: Echo the arguments back as JSON." in out.text
    assert "needsAuth (not usable right now)" in out.text
    assert "schema" not in out.text
    assert ctx.exec_kinds() == ["mcp_state_exec_args"]
    out = await GetMcpToolsTool().run({"server": "demo", "toolName": "echo"}, ctx)
    assert "arguments schema" in out.text and "fail" not in out.text
    assert out.tool_call.get_mcp_tools_tool_call.result.success.content == out.text
    out = await GetMcpToolsTool().run({"pattern": "^demo fa"}, ctx)
    assert "fail" in out.text and "echo" not in out.text
    out = await GetMcpToolsTool().run({"server": "nosuch"}, ctx)
    assert out.text == "No server 'nosuch' found."


async def test_fetch_mcp_resource(ctx, workspace: Path):
    out = await FetchMcpResourceTool().run({"server": "demo", "uri": "mem://a"}, ctx)
    assert out.text == "resource mem://a" and not out.is_error
    assert ctx.execs[0].read_mcp_resource_exec_args.tool_call_id == "call-1"
    out = await FetchMcpResourceTool().run({"server": "demo", "uri": "mem://missing"}, ctx)
    assert out.is_error and "not found" in out.text
    out = await FetchMcpResourceTool().run(
        {"server": "demo", "uri": "mem://b", "downloadPath": "out/res.txt"}, ctx
    )
    assert out.text.startswith("Saved mem://b to") and (workspace / "out" / "res.txt").exists()
