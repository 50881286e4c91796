"""McpAuth: the mcp_auth interaction query, answered by the user."""

from __future__ import annotations

from fake_context import FakeToolContext

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.tools.mcp_auth import McpAuthTool


def _answer(kind: str, reason: str = "") -> pb.InteractionResponse:
    response = pb.InteractionResponse()
    if kind == "rejected":
        response.mcp_auth_request_response.rejected.reason = reason
    elif kind == "approved":
        response.mcp_auth_request_response.approved.SetInParent()
    return response


async def test_a_declined_sign_in_is_reported_not_failed(ctx: FakeToolContext) -> None:
    ctx.answers["mcp_auth_request_query"] = _answer("rejected", "not now")
    out = await McpAuthTool().run({"server": "sleepy"}, ctx)
    assert not out.is_error and "did not authorise" in out.text and "not now" in out.text
    assert out.tool_call.mcp_auth_tool_call.result.rejected.reason == "not now"
    assert not ctx.execs  # no state refresh without a sign-in


async def test_no_answer_is_an_error_and_a_sign_in_lists_the_tools(ctx: FakeToolContext) -> None:
    failed = await McpAuthTool().run({"server": "sleepy"}, ctx)  # the client answers nothing
    assert failed.is_error and failed.tool_call.mcp_auth_tool_call.result.HasField("error")
    ctx.answers["mcp_auth_request_query"] = _answer("approved")
    ctx.request_context.mcp_instructions.add(server_name="demo", server_identifier="user-demo")
    out = await McpAuthTool().run({"server": "Demo"}, ctx)
    assert "Its tools: echo, fail, image" in out.text
    assert ctx.execs[-1].mcp_state_exec_args.server_identifiers == ["user-demo"]
