"""Which tools the model gets, per mode and client flags (tools.md §2), and lookup by name.

The sets follow the catalog Cursor's own server exposes in each mode so Cursor's prompts
and the models' habits apply. Tools that need a backend of ours (WebSearch a search
endpoint, GenerateImage an image endpoint) are left out without one rather than offered and
failed. Task (subagents) is offered except inside a subagent run (no nesting).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any

from cursor_byok.config import ImageGenerationConfig
from cursor_byok.config import WebSearchConfig
from cursor_byok.cursor.actions import resolve
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ToolSpec

from .base import Tool
from .edits import StrReplaceTool
from .edits import WriteTool
from .extra import EditNotebookTool
from .extra import ListMcpResourcesTool
from .extra import WriteShellStdinTool
from .files import DeleteTool
from .files import LsTool
from .files import ReadTool
from .goals import CreateGoalTool
from .goals import UpdateGoalTool
from .goals import has_goal
from .image import GenerateImageTool
from .interactions import AskQuestionTool
from .interactions import CreatePlanTool
from .interactions import SwitchModeTool
from .lints import ReadLintsTool
from .mcp import CallMcpToolTool
from .mcp import FetchMcpResourceTool
from .mcp import GetMcpToolsTool
from .mcp import McpToolRef
from .mcp import collect_mcp_tools
from .mcp import dynamic_mcp_tools
from .mcp_auth import McpAuthTool
from .mcp_auth import offered as mcp_auth_offered
from .search import GlobTool
from .search import GrepTool
from .shell import AwaitShellTool
from .shell import ShellTool
from .task import TaskTool
from .todos import TodoWriteTool
from .todos import UpdateCurrentStepTool
from .web import WebFetchTool
from .websearch import WebSearchTool

log = logging.getLogger(__name__)

# The configured model a name routes to (config.find_model), None when it is not one of ours.
ModelRouter = Callable[[str], str | None]

# Factories of the built-in tools; a fresh instance per run (some keep per-run state).
BUILTIN: dict[str, Callable[[], Tool]] = {
    "Shell": ShellTool,
    "Grep": GrepTool,
    "Glob": GlobTool,
    "Read": ReadTool,
    "Write": WriteTool,
    "StrReplace": StrReplaceTool,
    "Delete": DeleteTool,
    "LS": LsTool,
    "ReadLints": ReadLintsTool,
    "TodoWrite": TodoWriteTool,
    "AskQuestion": AskQuestionTool,
    "CreatePlan": CreatePlanTool,
    "SwitchMode": SwitchModeTool,
    "AwaitShell": AwaitShellTool,
    "WebFetch": WebFetchTool,
    "GetMcpTools": GetMcpToolsTool,
    "FetchMcpResource": FetchMcpResourceTool,
    "CallMcpTool": CallMcpToolTool,
    "UpdateCurrentStep": UpdateCurrentStepTool,
    "Task": TaskTool,
    "WriteShellStdin": WriteShellStdinTool,
    "ListMcpResources": ListMcpResourcesTool,
    "EditNotebook": EditNotebookTool,
    "CreateGoal": CreateGoalTool,
    "UpdateGoal": UpdateGoalTool,
    "McpAuth": McpAuthTool,
}
# The goal tools (goals.py): in the modes that act; UpdateGoal only once there is a goal.
GOAL_TOOLS = ("CreateGoal", "UpdateGoal")

# tools.md §2, in Cursor's order, minus the tools we cannot back (see the module docstring).
AGENT_TOOLS = (
    "Shell", "Grep", "Delete", "WebSearch", "WebFetch", "GenerateImage", "EditNotebook",
    "TodoWrite",
    "StrReplace", "Write", "Read", "ReadLints", "Glob", "AskQuestion", "Task", "AwaitShell",
    "WriteShellStdin", "GetMcpTools", "ListMcpResources", "FetchMcpResource", "SwitchMode",
    "CallMcpTool", "McpAuth", *GOAL_TOOLS,
)  # fmt: skip
PLAN_TOOLS = (
    "Shell", "Glob", "Grep", "Read", "TodoWrite", "ReadLints", "WebSearch", "WebFetch",
    "AskQuestion",
    "CreatePlan", "Task", "ListMcpResources", "FetchMcpResource", "CallMcpTool", "McpAuth",
)  # fmt: skip
DEBUG_TOOLS = (
    "AskQuestion", "AwaitShell", "CallMcpTool", "Delete", "EditNotebook", "FetchMcpResource",
    "Glob", "Grep", "Read", "ReadLints", "Shell", "StrReplace", "Task", "TodoWrite",
    "WebFetch", "WebSearch", "Write", "WriteShellStdin", "McpAuth", *GOAL_TOOLS,
)  # fmt: skip
ASK_TOOLS = (
    "Read", "Grep", "Glob", "ReadLints", "Shell", "WebSearch", "WebFetch", "AskQuestion", "Task",
    "GetMcpTools", "ListMcpResources", "FetchMcpResource", "CallMcpTool", "McpAuth",
)  # fmt: skip
MODE_TOOLS: dict[int, tuple[str, ...]] = {
    pb.AGENT_MODE_AGENT: AGENT_TOOLS,
    pb.AGENT_MODE_ASK: ASK_TOOLS,
    pb.AGENT_MODE_PLAN: PLAN_TOOLS,
    pb.AGENT_MODE_DEBUG: DEBUG_TOOLS,
    pb.AGENT_MODE_MULTITASK: AGENT_TOOLS,
    pb.AGENT_MODE_CUSTOM: AGENT_TOOLS,  # a skill as the mode: its text says what to do
}
# Modes whose catalog has the per-server MCP tools (the others reach MCP via CallMcpTool).
DYNAMIC_MCP_MODES = frozenset({pb.AGENT_MODE_AGENT, pb.AGENT_MODE_MULTITASK, pb.AGENT_MODE_CUSTOM})
MUTATING = frozenset({"Write", "StrReplace", "Delete", "EditNotebook", "GenerateImage"})
_MAX_LISTED_MCP = 60


class ToolSet(list[Tool]):
    """The tools of one run: a list (in catalog order) with lookup by model-facing name."""

    def get(self, name: str) -> Tool | None:
        for tool in self:
            if tool.name == name:
                return tool
        lowered = name.lower()
        for tool in self:
            if tool.name.lower() == lowered:
                return tool
        return None

    def names(self) -> list[str]:
        return [t.name for t in self]

    def specs(self) -> list[tuple[str, str, dict[str, Any]]]:
        return specs(self)


def specs(tools: Iterable[Tool]) -> list[tuple[str, str, dict[str, Any]]]:
    """[(name, description, JSON schema)] for the provider request."""
    return [(t.name, t.description, t.parameters) for t in tools]


def provider_specs(tools: Iterable[Tool]) -> list[Any]:
    """The same as `providers.ToolSpec` objects."""
    return [ToolSpec(name=n, description=d, parameters=p) for n, d, p in specs(tools)]


def get_tool(name: str, tools: Iterable[Tool] | None = None) -> Tool | None:
    """The tool called `name` in `tools`, else a fresh built-in of that name, else None."""
    if tools is not None:
        found = ToolSet(tools).get(name)
        if found is not None:
            return found
    factory = BUILTIN.get(name)
    return factory() if factory else None


def request_context_of(run_request: pb.AgentRunRequest) -> pb.RequestContext:
    """The run's RequestContext: inline on a new chat's user message, else the dynamic part
    of `request_context_parts` (later turns; the other parts are blobs the loop resolves)."""
    inline = resolve(run_request).request_context
    if inline is not None and inline.ListFields():
        return inline
    return run_request.action.request_context_parts.dynamic_context


def _flag(context: pb.RequestContext, name: str) -> bool | None:
    return getattr(context, name) if context.HasField(name) else None


def _call_mcp_with_catalog(refs: list[McpToolRef]) -> CallMcpToolTool:
    """CallMcpTool whose description names the known tools (modes without dynamic tools)."""
    tool = CallMcpToolTool(refs)
    if refs:
        listed = [f"- {r.server}: {r.tool_name}" for r in refs[:_MAX_LISTED_MCP]]
        if len(refs) > _MAX_LISTED_MCP:
            listed.append(f"- … and {len(refs) - _MAX_LISTED_MCP} more")
        tool.description = (  # type: ignore[misc]
            CallMcpToolTool.description + "\nKnown MCP tools (server: tool):\n" + "\n".join(listed)
        )
    return tool


def tools_for(
    mode: int,
    run_request: pb.AgentRunRequest,
    *,
    request_context: pb.RequestContext | None = None,
    extra: Iterable[str] = (),
    web_search: WebSearchConfig | None = None,
    image_generation: ImageGenerationConfig | None = None,
    route_model: ModelRouter | None = None,
) -> ToolSet:
    """The tools for one run in `mode`.

    `request_context` overrides the one found in the run request (pass the resolved context
    when its parts live in blobs). `web_search` is the configured search endpoint: WebSearch
    is offered only with one (and when the client allows web search); GenerateImage only with
    an `image_generation` endpoint. `extra` adds optional
    built-ins not in Cursor's catalog (e.g. "LS"). Unknown modes fall back to Agent with a
    warning (tools.md §2). `route_model` names the configured model a subagent definition's
    `model` routes to (None: not one of ours); without it definitions' models are not used.
    """
    context = request_context if request_context is not None else request_context_of(run_request)
    mode, names = _mode_tools(mode)
    subagent = bool(run_request.subagent_type_name)
    chosen = list(names)
    if subagent and not run_request.suppress_subagent_progress_update_tool:
        chosen.append("UpdateCurrentStep")
    chosen += [n for n in extra if n in BUILTIN and n not in chosen]
    left_out = _left_out(mode, run_request, context, web_search, image_generation)
    refs = collect_mcp_tools(run_request, context)
    dynamic = mode in DYNAMIC_MCP_MODES or subagent
    made = _Maker(mode, context, refs, dynamic, web_search, image_generation, route_model)
    tools = ToolSet(made.tool(name) for name in chosen if name not in left_out)
    if dynamic:
        tools.extend(dynamic_mcp_tools(refs, set(BUILTIN) | set(tools.names())))
    return tools


def definition_models(
    custom: Iterable[pb.CustomSubagent], route_model: ModelRouter | None
) -> dict[str, str]:
    """Definition name (lowercase) -> the configured model its `model` names, for the
    definitions whose model the config routes (not "inherit", not forced to the default)."""
    if route_model is None:
        return {}
    out: dict[str, str] = {}
    for definition in custom:
        wanted = definition.model.strip()
        if not definition.name or definition.force_default_model:
            continue
        if not wanted or wanted.lower() in ("inherit", "default"):
            continue
        routed = route_model(wanted)
        if routed is None:
            log.info("subagent %r names model %r, which is not configured", definition.name, wanted)
            continue
        out[definition.name.lower()] = routed
    return out


def _mode_tools(mode: int) -> tuple[int, tuple[str, ...]]:
    """The mode's catalog; an unknown mode gets Agent's (with a warning)."""
    names = MODE_TOOLS.get(mode)
    if names is not None:
        return mode, names
    if mode != pb.AGENT_MODE_UNSPECIFIED:
        label = pb.AgentMode.Name(mode) if mode in pb.AgentMode.values() else str(mode)
        log.warning("mode %s has no tool set of its own; using the Agent tools", label)
    return pb.AGENT_MODE_AGENT, AGENT_TOOLS


def _left_out(
    mode: int,
    run_request: pb.AgentRunRequest,
    context: pb.RequestContext,
    web_search: WebSearchConfig | None,
    image_generation: ImageGenerationConfig | None,
) -> set[str]:
    """Tools of the catalog this run does not get: what the client turned off, what needs an
    endpoint we lack, what the mode or a subagent run may not do."""
    out: set[str] = set()
    if _flag(context, "web_fetch_enabled") is not True:
        out.add("WebFetch")
    if web_search is None or _flag(context, "web_search_enabled") is not True:
        out.add("WebSearch")  # needs an endpoint and the client's OK
    if image_generation is None:
        out.add("GenerateImage")
    if _flag(context, "read_lints_enabled") is False:
        out.add("ReadLints")
    if mode == pb.AGENT_MODE_ASK:
        out |= MUTATING
    if run_request.subagent_type_name:  # no AskQuestion, no Task (bounded depth), no goals
        out |= {"AskQuestion", "Task", "McpAuth", *GOAL_TOOLS}
    if not mcp_auth_offered(context):  # the client cannot run an MCP sign-in
        out.add("McpAuth")
    if not has_goal(run_request.conversation_state):
        out.add("UpdateGoal")
    return out


class _Maker:
    """Builds one tool of a run by name: the built-ins that need the run's settings, else the
    plain factory."""

    def __init__(
        self,
        mode: int,
        context: pb.RequestContext,
        refs: list[McpToolRef],
        dynamic: bool,
        web_search: WebSearchConfig | None,
        image_generation: ImageGenerationConfig | None,
        route_model: ModelRouter | None,
    ) -> None:
        self.mode = mode
        self.context = context
        self.refs = refs
        self.dynamic = dynamic
        self.web_search = web_search
        self.image_generation = image_generation
        self.route_model = route_model

    def tool(self, name: str) -> Tool:
        special = getattr(self, "_" + name, None)
        return special() if special is not None else BUILTIN[name]()

    def _Shell(self) -> Tool:
        return ShellTool(read_only_sandbox=self.mode == pb.AGENT_MODE_ASK)

    def _WebSearch(self) -> Tool:
        assert self.web_search is not None
        return WebSearchTool(self.web_search)

    def _GenerateImage(self) -> Tool:
        assert self.image_generation is not None
        return GenerateImageTool(self.image_generation)

    def _Task(self) -> Tool:
        custom = self.context.custom_subagents
        return TaskTool.offering(
            custom,
            force_readonly=self.mode in (pb.AGENT_MODE_ASK, pb.AGENT_MODE_PLAN),
            models=definition_models(custom, self.route_model),
        )

    def _CallMcpTool(self) -> Tool:
        return CallMcpToolTool(self.refs) if self.dynamic else _call_mcp_with_catalog(self.refs)
