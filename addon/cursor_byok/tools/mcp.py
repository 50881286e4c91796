"""MCP tools (tools.md §4.11): dynamic per-server tools and the meta tools.

The user's MCP servers run inside Cursor; we only see their tool definitions in the run
request and call them through `mcp_args` execs. Each definition becomes a model tool of its
own (a valid function name mapped back to server + tool), and CallMcpTool / GetMcpTools /
FetchMcpResource follow Cursor's current catalog for discovery and resources.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any
from typing import ClassVar

from google.protobuf import json_format
from google.protobuf import struct_pb2

from cursor_byok.pb import agent_v1_pb2 as pb

from .base import Tool
from .base import ToolContext
from .base import ToolError
from .base import ToolImage
from .base import ToolOutcome
from .base import arg_opt_str
from .base import arg_str
from .base import loose_str
from .base import no_result_text
from .base import result_of
from .base import truncate_text

_NAME_OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_SHORT_DESCRIPTION = 200
_UNUSABLE_STATUS = ("needsauth", "needs_auth", "error", "loading", "disconnected")


@dataclass(frozen=True, slots=True)
class McpToolRef:
    """One MCP tool as the client knows it, plus the model-facing name we gave it."""

    name: str  # McpToolDefinition.name, sent back as McpArgs.name
    tool_name: str  # the tool's own name on its server
    provider_identifier: str  # the server, as the client identifies it
    description: str = ""
    schema: dict[str, Any] | None = None
    server_name: str = ""
    server_identifier: str = ""

    @property
    def server(self) -> str:
        return self.server_name or self.provider_identifier or self.server_identifier


def sanitize_name(raw: str, taken: set[str]) -> str:
    """A function name matching ^[a-zA-Z0-9_-]{1,64}$ not in `taken` (OpenAI's rule, the
    strictest common one)."""
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", raw).strip("_") or "mcp_tool"
    if len(name) > 64:
        digest = hashlib.sha1(raw.encode()).hexdigest()[:8]
        name = f"{name[:55]}_{digest}"
    base, n = name, 2
    while name.lower() in {t.lower() for t in taken}:
        suffix = f"_{n}"
        name = base[: 64 - len(suffix)] + suffix
        n += 1
    return name


def object_schema(schema: Any) -> dict[str, Any]:
    """An object schema whatever the server declared (Kimi and others reject anything else)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    out = dict(schema)
    if out.get("type") != "object":
        if out.get("type") is None and isinstance(out.get("properties"), dict):
            out["type"] = "object"
        else:
            return {"type": "object", "properties": {"value": schema}, "required": []}
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    if not isinstance(out.get("required"), list):
        out.pop("required", None)
    return out


def _schema_of(value: struct_pb2.Value | None, as_json: str | None) -> dict[str, Any] | None:
    if as_json:
        try:
            return json.loads(as_json)
        except ValueError:
            pass
    if value is not None and value.WhichOneof("kind") is not None:
        parsed = json_format.MessageToDict(value)
        return parsed if isinstance(parsed, dict) else None
    return None


def collect_mcp_tools(
    run_request: pb.AgentRunRequest, request_context: pb.RequestContext | None
) -> list[McpToolRef]:
    """Every MCP tool the run request declares, de-duplicated by server and tool.

    Sources: `AgentRunRequest.mcp_tools`, `RequestContext.tools`, and the MCP descriptors of
    `mcp_file_system_options` / `mcp_meta_tool_options` (which carry the server name and
    identifier explicitly).
    """
    refs: dict[tuple[str, str], McpToolRef] = {}

    def add(ref: McpToolRef) -> None:
        key = (ref.provider_identifier or ref.server_identifier, ref.tool_name or ref.name)
        if key[1] and key not in refs:
            refs[key] = ref

    definitions = list(run_request.mcp_tools.mcp_tools)
    if request_context is not None:
        definitions += list(request_context.tools)
    for d in definitions:
        add(
            McpToolRef(
                name=d.name or d.tool_name,
                tool_name=d.tool_name or d.name,
                provider_identifier=d.provider_identifier,
                description=d.description,
                schema=_schema_of(
                    d.input_schema if d.HasField("input_schema") else None,
                    d.input_schema_json if d.HasField("input_schema_json") else None,
                ),
            )
        )
    descriptor_sources: list[Any] = []
    if run_request.HasField("mcp_file_system_options"):
        descriptor_sources.append(run_request.mcp_file_system_options)
    if request_context is not None:
        if request_context.HasField("mcp_file_system_options"):
            descriptor_sources.append(request_context.mcp_file_system_options)
        if request_context.HasField("mcp_meta_tool_options"):
            descriptor_sources.append(request_context.mcp_meta_tool_options)
    for source in descriptor_sources:
        for server in source.mcp_descriptors:
            for t in server.tools:
                add(
                    McpToolRef(
                        name=t.tool_name,
                        tool_name=t.tool_name,
                        provider_identifier=server.server_identifier,
                        description=t.description if t.HasField("description") else "",
                        schema=_schema_of(
                            t.input_schema if t.HasField("input_schema") else None,
                            t.input_schema_json if t.HasField("input_schema_json") else None,
                        ),
                        server_name=server.server_name,
                        server_identifier=server.server_identifier,
                    )
                )
    return list(refs.values())


def to_value_map(arguments: dict[str, Any]) -> dict[str, struct_pb2.Value]:
    """JSON arguments as the map<string, Value> McpArgs wants."""
    return {k: json_format.ParseDict(v, struct_pb2.Value()) for k, v in arguments.items()}


def mcp_args_for(ref: McpToolRef, arguments: dict[str, Any], call_id: str) -> pb.McpArgs:
    args = pb.McpArgs(
        name=ref.name,
        tool_call_id=call_id,
        provider_identifier=ref.provider_identifier,
        tool_name=ref.tool_name,
    )
    if ref.server_identifier:
        args.server_identifier = ref.server_identifier
    for key, value in to_value_map(arguments).items():
        args.args[key].CopyFrom(value)
    return args


def _arguments(raw: Any) -> dict[str, Any]:
    """The tool's arguments object; a JSON string holding an object is accepted."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ToolError("`arguments` must be a JSON object.") from None
    if not isinstance(raw, dict):
        raise ToolError("`arguments` must be a JSON object.")
    return raw


async def call_mcp(
    ctx: ToolContext, mcp: pb.McpArgs, label: str, description: str = ""
) -> ToolOutcome:
    """Run one mcp_args exec and turn its McpResult into text and the mcp_tool_call card."""
    reply = await ctx.exec(pb.ExecServerMessage(mcp_args=mcp))
    call = pb.ToolCall(mcp_tool_call=pb.McpToolCall(args=mcp))
    if description:
        call.mcp_tool_call.description = description
    res = call.mcp_tool_call.result
    result = result_of(reply, "mcp_result")
    kind = result.WhichOneof("result") if result is not None else None
    if result is None:
        text = no_result_text(reply, f"call the MCP tool {label}")
    elif kind == "success":
        res.success.CopyFrom(result.success)
        text, images = render_mcp_success(result.success)
        if result.success.is_error:
            return ToolOutcome(
                f"The MCP tool {label} reported an error:\n{text}", True, call, images
            )
        return ToolOutcome(text, False, call, images)
    elif kind == "rejected":
        res.rejected.CopyFrom(result.rejected)
        reason = result.rejected.reason or "no reason given"
        return ToolOutcome(f"The user declined the MCP call {label}: {reason}", True, call)
    elif kind == "permission_denied":
        res.permission_denied.CopyFrom(result.permission_denied)
        detail = result.permission_denied.error or "permission denied"
        return ToolOutcome(f"The MCP call {label} is not allowed: {detail}", True, call)
    elif kind == "tool_not_found":
        found = result.tool_not_found
        text = f"MCP tool not found: {found.name or label}."
        if found.available_tools:
            text += " Available tools: " + ", ".join(found.available_tools)
    elif kind == "server_not_found":
        found = result.server_not_found
        text = f"MCP server not found: {found.name or mcp.provider_identifier}."
        if found.available_servers:
            text += " Available servers: " + ", ".join(found.available_servers)
    elif kind == "error":
        text = f"The MCP call {label} failed: {result.error.error or 'unknown error'}"
    elif kind == "approved":
        # Not a final result in any flow we use (tools.md §4.11); the session resolves the
        # exec on it anyway, so tell the model instead of waiting forever.
        text = f"The MCP call {label} was approved but the client sent no result; try again."
    else:
        text = no_result_text(reply, f"call the MCP tool {label}")
    res.error.error = text
    return ToolOutcome(text, True, call)


def render_mcp_success(success: pb.McpSuccess) -> tuple[str, tuple[ToolImage, ...]]:
    parts: list[str] = []
    images: list[ToolImage] = []
    for item in success.content:
        kind = item.WhichOneof("content")
        if kind == "text":
            parts.append(item.text.text)
            if item.text.HasField("output_location"):
                loc = item.text.output_location
                parts.append(f"[Full output saved to {loc.file_path}; use Read or Grep on it.]")
        elif kind == "image":
            images.append(ToolImage(item.image.data, item.image.mime_type or "image/png"))
            parts.append(f"[image {item.image.mime_type or ''} attached]".replace("  ", " "))
    if not any(p.strip() for p in parts) and success.HasField("structured_content"):
        parts.append(json.dumps(json_format.MessageToDict(success.structured_content), indent=1))
    text = "\n".join(parts).strip() or "(the tool returned no content)"
    return truncate_text(text), tuple(images)


# =========================================================================== dynamic tools


class McpTool(Tool):
    """One MCP tool offered to the model under its own (sanitised) name."""

    read_only = False
    identifier = "MCP"

    def __init__(self, ref: McpToolRef, model_name: str) -> None:
        self.ref = ref
        self.name = model_name  # type: ignore[misc]
        server = ref.server or "an MCP server"
        text = ref.description.strip() or f"The {ref.tool_name} tool."
        self.description = f"{text}\n\n(MCP tool `{ref.tool_name}` of server `{server}`.)"  # type: ignore[misc]
        self.parameters = object_schema(ref.schema)  # type: ignore[misc]

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        mcp = pb.McpArgs(
            name=self.ref.name,
            provider_identifier=self.ref.provider_identifier,
            tool_name=self.ref.tool_name,
        )
        try:
            for key, value in to_value_map(args).items():
                mcp.args[key].CopyFrom(value)
        except Exception:  # partial args: show the call without them
            mcp.args.clear()
        return pb.ToolCall(mcp_tool_call=pb.McpToolCall(args=mcp))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.mcp_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        try:
            mcp = mcp_args_for(self.ref, args, ctx.call_id)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise ToolError(f"Arguments are not valid JSON values: {exc}") from None
        return await call_mcp(ctx, mcp, f"{self.ref.server}/{self.ref.tool_name}")


def dynamic_mcp_tools(refs: list[McpToolRef], taken: set[str]) -> list[McpTool]:
    """One McpTool per ref; names never clash with `taken` (built-in names) or each other."""
    used = set(taken)
    tools = []
    for ref in refs:
        raw = f"mcp_{ref.server}_{ref.tool_name}" if ref.server else f"mcp_{ref.tool_name}"
        name = sanitize_name(raw, used)
        used.add(name)
        tools.append(McpTool(ref, name))
    return tools


# =========================================================================== meta tools


class CallMcpToolTool(Tool):
    """CallMcpTool{server, toolName, arguments}: Cursor's generic MCP call."""

    name = "CallMcpTool"
    identifier = "MCP"
    read_only = False
    description = (
        "Call a tool of one of the user's MCP servers. Use GetMcpTools first to learn the "
        "exact server and tool names and the tool's argument schema."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server name or identifier."},
            "toolName": {"type": "string", "description": "The tool's name on that server."},
            "arguments": {"type": "object", "description": "The tool's arguments."},
            "description": {"type": "string", "description": "What this call is for."},
        },
        "required": ["server", "toolName"],
    }

    def __init__(self, refs: list[McpToolRef] | None = None) -> None:
        self.refs = list(refs or [])

    def resolve(self, server: str, tool: str) -> McpToolRef:
        """The known tool for (server, tool); else a best guess the client can reject."""
        want = server.lower()
        for ref in self.refs:
            names = {ref.server_name.lower(), ref.provider_identifier.lower()}
            names.add(ref.server_identifier.lower())
            if want in names and tool in (ref.tool_name, ref.name):
                return ref
        return McpToolRef(name=tool, tool_name=tool, provider_identifier=server)

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ref = self.resolve(loose_str(args, "server"), loose_str(args, "toolName"))
        mcp = pb.McpArgs(
            name=ref.name, provider_identifier=ref.provider_identifier, tool_name=ref.tool_name
        )
        raw = args.get("arguments")
        if isinstance(raw, dict):
            try:
                for key, value in to_value_map(raw).items():
                    mcp.args[key].CopyFrom(value)
            except Exception:
                mcp.args.clear()
        call = pb.ToolCall(mcp_tool_call=pb.McpToolCall(args=mcp))
        description = loose_str(args, "description")
        if description:
            call.mcp_tool_call.description = description
        return call

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.mcp_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        server = arg_str(args, "server", required=True)
        tool = arg_str(args, "toolName", required=True)
        arguments = _arguments(args.get("arguments"))
        ref = self.resolve(server, tool)
        try:
            mcp = mcp_args_for(ref, arguments, ctx.call_id)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise ToolError(f"`arguments` are not valid JSON values: {exc}") from None
        return await call_mcp(ctx, mcp, f"{server}/{tool}", arg_str(args, "description"))


class GetMcpToolsTool(Tool):
    """GetMcpTools: discover MCP servers and tools from the client's live MCP state."""

    name = "GetMcpTools"
    identifier = "GET_MCP_TOOLS"
    read_only = True
    description = (
        "List the user's MCP servers and their tools. Without arguments, returns a catalog "
        "with short descriptions; with `server` (and optionally `toolName`) returns full "
        "argument schemas; `pattern` filters server and tool names by regular expression."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "Only this server."},
            "toolName": {"type": "string", "description": "Only this tool (with `server`)."},
            "pattern": {"type": "string", "description": "Regex over server and tool names."},
        },
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.GetMcpToolsArgs()
        for key, field in (("server", "server"), ("toolName", "tool_name"), ("pattern", "pattern")):
            value = loose_str(args, key)
            if value:
                setattr(ui, field, value)
        return pb.ToolCall(get_mcp_tools_tool_call=pb.GetMcpToolsToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.get_mcp_tools_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        server = (arg_opt_str(args, "server") or "").lower()
        tool = arg_opt_str(args, "toolName") or ""
        pattern_text = arg_opt_str(args, "pattern")
        try:
            pattern = re.compile(pattern_text, re.IGNORECASE) if pattern_text else None
        except re.error as exc:
            raise ToolError(f"Invalid regular expression in `pattern`: {exc}") from None
        reply = await ctx.exec(pb.ExecServerMessage(mcp_state_exec_args=pb.McpStateExecArgs()))
        result = result_of(reply, "mcp_state_exec_result")
        if result is None:
            raise ToolError(no_result_text(reply, "list the MCP servers"))
        kind = result.WhichOneof("result")
        if kind == "rejected":
            raise ToolError(f"Listing MCP tools was blocked: {result.rejected.reason}")
        if kind != "success":
            detail = result.error.error if kind == "error" else "no result"
            raise ToolError(f"Listing MCP tools failed: {detail or 'unknown error'}")
        full = bool(server) or bool(tool)
        blocks: list[str] = []
        for s in result.success.servers:
            names = {s.server_name.lower(), s.server_identifier.lower()}
            if server and server not in names:
                continue
            status = s.status if s.HasField("status") else ""
            tools = [
                t
                for t in s.tools
                if (not tool or tool in (t.tool_name, t.name))
                and (not pattern or pattern.search(f"{s.server_name} {t.tool_name or t.name}"))
            ]
            if pattern and not tools and not pattern.search(s.server_name):
                continue
            head = f"Server {s.server_name} (id {s.server_identifier})"
            if status:
                head += f" — status: {status}"
                if status.lower().replace("-", "") in _UNUSABLE_STATUS:
                    head += " (not usable right now)"
            lines = [head]
            lines += [f"Instructions: {i.instructions}" for i in s.instructions if i.instructions]
            for t in tools:
                lines.append(_render_tool(t, full))
            if not tools:
                lines.append("  (no matching tools)")
            blocks.append("\n".join(lines))
        if not blocks:
            what = f"server {server!r}" if server else "MCP servers"
            text = f"No {what} found." if not pattern_text else "No MCP tools match."
        else:
            text = truncate_text("\n\n".join(blocks))
        call = self._ui_call(args)
        call.get_mcp_tools_tool_call.args.tool_call_id = ctx.call_id
        call.get_mcp_tools_tool_call.result.success.content = text
        return ToolOutcome(text, False, call)


def _render_tool(t: pb.McpToolDefinition, full: bool) -> str:
    name = t.tool_name or t.name
    description = " ".join(t.description.split())
    if not full:
        if len(description) > _SHORT_DESCRIPTION:
            description = description[: _SHORT_DESCRIPTION - 1] + "…"
        return f"  - {name}: {description}" if description else f"  - {name}"
    schema = _schema_of(
        t.input_schema if t.HasField("input_schema") else None,
        t.input_schema_json if t.HasField("input_schema_json") else None,
    )
    out = f"  - {name}: {description}" if description else f"  - {name}"
    if schema is not None:
        out += "\n    arguments schema: " + json.dumps(schema, ensure_ascii=False)
    return out


class FetchMcpResourceTool(Tool):
    """FetchMcpResource: read one resource of an MCP server (or save it to a file)."""

    name = "FetchMcpResource"
    identifier = "FETCH_MCP_RESOURCE"
    read_only = True
    description = (
        "Read a resource from one of the user's MCP servers by URI. With `downloadPath` the "
        "resource is saved to that file instead of being returned."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server name or identifier."},
            "uri": {"type": "string", "description": "The resource URI."},
            "downloadPath": {"type": "string", "description": "Save the resource here."},
        },
        "required": ["server", "uri"],
    }

    def _ui_call(self, args: dict[str, Any]) -> pb.ToolCall:
        ui = pb.ReadMcpResourceExecArgs(
            server=loose_str(args, "server"), uri=loose_str(args, "uri")
        )
        download = loose_str(args, "downloadPath")
        if download:
            ui.download_path = download
        return pb.ToolCall(read_mcp_resource_tool_call=pb.ReadMcpResourceToolCall(args=ui))

    def error_call(self, args: dict[str, Any], message: str) -> pb.ToolCall:
        call = self._ui_call(args)
        call.read_mcp_resource_tool_call.result.error.uri = loose_str(args, "uri")
        call.read_mcp_resource_tool_call.result.error.error = message
        return call

    async def _run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        read = pb.ReadMcpResourceExecArgs(
            server=arg_str(args, "server", required=True),
            uri=arg_str(args, "uri", required=True),
            tool_call_id=ctx.call_id,
        )
        download = arg_opt_str(args, "downloadPath")
        if download:
            read.download_path = download
        reply = await ctx.exec(pb.ExecServerMessage(read_mcp_resource_exec_args=read))
        result = result_of(reply, "read_mcp_resource_exec_result")
        if result is None:
            raise ToolError(no_result_text(reply, f"read the MCP resource {read.uri}"))
        call = pb.ToolCall(
            read_mcp_resource_tool_call=pb.ReadMcpResourceToolCall(args=read, result=result)
        )
        kind = result.WhichOneof("result")
        if kind == "success":
            ok = result.success
            if ok.HasField("download_path") and ok.download_path:
                return ToolOutcome(
                    f"Saved {ok.uri or read.uri} to {ok.download_path}.", False, call
                )
            if ok.WhichOneof("content") == "blob":
                mime = ok.mime_type or "unknown type"
                text = f"{read.uri}: binary resource ({len(ok.blob)} bytes, {mime})."
                if mime.startswith("image/"):
                    return ToolOutcome(text, False, call, (ToolImage(ok.blob, mime),))
                return ToolOutcome(text + " Use downloadPath to save it.", False, call)
            return ToolOutcome(truncate_text(ok.text) or "(empty resource)", False, call)
        if kind == "not_found":
            return ToolOutcome(f"MCP resource not found: {read.uri}", True, call)
        if kind == "rejected":
            reason = result.rejected.reason or "no reason given"
            return ToolOutcome(f"The user declined reading {read.uri}: {reason}", True, call)
        detail = result.error.error if kind == "error" else "no result"
        return ToolOutcome(f"Reading {read.uri} failed: {detail or 'unknown error'}", True, call)
