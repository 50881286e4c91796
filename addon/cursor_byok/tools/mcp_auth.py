"""McpAuth (issue 37): let the user authorise an MCP server that needs OAuth, from a BYOK turn.

An MCP server whose OAuth sign-in is missing or expired reports the status `needsAuth` (the
MCP state exec; GetMcpTools shows it) and offers no tools. Cursor's server then asks the client
with the `mcp_auth_request_query` interaction query (InteractionQuery 11) to run the server's
sign-in; the user approves (the client runs the OAuth flow) or declines. The card is
`mcp_auth_tool_call` (ToolCall 41). Offered only when the client says it can
(`RequestContext.supports_mcp_auth`). Cursor's SDK 1.1.0 says so too, yet answers every such
query with a rejection ("MCP authentication is not supported in local SDK runs"): its model is
told that, as it would be by Cursor's own server.

The tool's name and text are ours [inf]; so is what the query's answer means: `approved` is
taken as "signed in" (the client answers once its flow ended). After a sign-in the server's
state is asked for again, so the model learns the tools it now has.
"""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolOutcome
from .base import loose_str

MAX_LISTED_TOOLS = 40


def offered(context: pb.RequestContext) -> bool:
    return context.HasField("supports_mcp_auth") and context.supports_mcp_auth


def server_identifier(context: pb.RequestContext, server: str) -> str:
    """The identifier the client knows a server by, for a name or identifier the model gave."""
    wanted = server.strip().lower()
    pairs = [(i.server_name, i.server_identifier) for i in context.mcp_instructions]
    if context.HasField("mcp_file_system_options"):
        pairs += [
            (d.server_name, d.server_identifier)
            for d in context.mcp_file_system_options.mcp_descriptors
        ]
    for name, ident in pairs:
        if ident and wanted in (name.lower(), ident.lower()):
            return ident
    return server.strip()


class McpAuthTool(Tool):
    name = "McpAuth"
    identifier = "MCP_AUTH"
    read_only = True
    description = (
        "Ask the user to sign in to an MCP server that needs authorisation (GetMcpTools shows "
        "its status as needsAuth and lists no tools for it). The user completes the server's "
        "OAuth sign-in in the editor or declines. Pass the server's name or id."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"server": {"type": "string", "description": "The MCP server's name or id."}},
        "required": ["server"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.McpAuthArgs(server_identifier=loose_str(args, "server"))
        return pb.ToolCall(mcp_auth_tool_call=pb.McpAuthToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.mcp_auth_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        server = loose_str(args, "server").strip()
        if not server:
            raise ToolError("Pass the MCP server's name or id as `server`.")
        ident = server_identifier(ctx.request_context, server)
        request = pb.McpAuthArgs(server_identifier=ident, tool_call_id=ctx.call_id)
        query = pb.InteractionQuery(mcp_auth_request_query=pb.McpAuthRequestQuery(args=request))
        answer = await ctx.interact(query)
        call = pb.ToolCall(mcp_auth_tool_call=pb.McpAuthToolCall(args=request))
        result = call.mcp_auth_tool_call.result
        kind = (
            answer.mcp_auth_request_response.WhichOneof("result")
            if answer.WhichOneof("result") == "mcp_auth_request_response"
            else None
        )
        if kind == "rejected":
            reason = answer.mcp_auth_request_response.rejected.reason
            result.rejected.reason = reason
            text = f"The user did not authorise the MCP server {server!r}"
            return ToolOutcome(text + (f": {reason}" if reason else "."), False, call)
        if kind != "approved":
            message = f"The client could not authorise the MCP server {server!r}."
            result.error.error = message
            raise ToolError(message, call)
        result.success.server_identifier = ident
        text = f"The user authorised the MCP server {server!r}." + await _tools_now(ctx, ident)
        return ToolOutcome(text, False, call)


async def _tools_now(ctx: ToolContext, ident: str) -> str:
    """The server's tools after the sign-in (best effort: the next turn lists them anyway)."""
    message = pb.ExecServerMessage(
        mcp_state_exec_args=pb.McpStateExecArgs(server_identifiers=[ident])
    )
    reply = await ctx.exec(message)
    if reply.WhichOneof("message") != "mcp_state_exec_result":
        return ""
    state = reply.mcp_state_exec_result
    if state.WhichOneof("result") != "success":
        return ""
    for server in state.success.servers:
        if server.server_identifier != ident:
            continue
        names = [t.tool_name or t.name for t in server.tools][:MAX_LISTED_TOOLS]
        status = f" Its status is now {server.status}." if server.HasField("status") else ""
        if not names:
            return status
        listed = ", ".join(names)
        return f"{status} Its tools: {listed}. Call them with CallMcpTool."
    return ""
