"""What the model is offered in one mode: its tools and the system prompt that names them.

A turn starts with the toolset of its mode and gets a new one when the user approves a mode
switch (SwitchMode). Tools are sorted by name, so the tool list (the start of every provider's
cached prefix) and the system prompt are byte-identical on every call of a conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from cursor_byok.agent import context as prompts
from cursor_byok.agent import custom_mode
from cursor_byok.agent.turn import Turn
from cursor_byok.config import Config
from cursor_byok.config.catalog import find_model
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ToolSpec
from cursor_byok.tools.base import Tool
from cursor_byok.tools.registry import tools_for


@dataclass(frozen=True, slots=True)
class Toolset:
    """The tools of one mode: by name (to run a call), as provider specs, and the system prompt."""

    mode: int
    by_name: dict[str, Tool]
    specs: list[ToolSpec]
    system: str


def native_search(config: Config, turn: Turn, context: pb.RequestContext) -> bool:
    """The model searches the web itself (model `web_search = true`, client allows it)."""
    model = find_model(config, turn.status.model)
    allowed = context.HasField("web_search_enabled") and context.web_search_enabled
    return bool(model is not None and model.web_search and allowed)


def toolset_for(config: Config, turn: Turn, mode: int, context: pb.RequestContext) -> Toolset:
    """Tools, provider specs and system prompt for `mode`, sorted by name (see module doc)."""
    tools: list[Tool] = tools_for(
        mode,
        turn.run_request,
        request_context=context,
        web_search=None if native_search(config, turn, context) else config.web_search,
        image_generation=config.image_generation,
        route_model=lambda name: getattr(find_model(config, name), "name", None),
    )
    choice = turn.options.tool_choice
    if choice is not None:  # the client's own limits (Cursor's SDK `tools` option)
        tools = choice.apply(tools)
    definition = custom_subagent(turn.run_request, context)
    if definition is not None and definition.tools:
        allowed = {name.lower() for name in definition.tools}
        tools = [t for t in tools if t.name.lower() in allowed]
    tools = sorted(tools, key=lambda t: t.name)
    by_name = {tool.name: tool for tool in tools}
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools]
    system = prompts.system_prompt(mode, context, list(by_name))
    message = turn.instruction.user_message
    mode_text = custom_mode.section(message, mode, turn.transcript.messages(), context)
    if mode_text is not None:  # a skill the user picked as the mode (custom_mode.py)
        system += "\n\n" + mode_text
    if definition is not None and definition.prompt:
        system += f"\n\n<subagent name={definition.name!r}>\n{definition.prompt}\n</subagent>"
    return Toolset(mode, by_name, specs, system)


def custom_subagent(
    run_request: pb.AgentRunRequest, context: pb.RequestContext
) -> pb.CustomSubagent | None:
    """The user's own definition this child run is an instance of (the SDK's
    `AgentOptions.agents`, `.cursor/agents/*.md`): the parent's Task named it as
    `subagent_type`, the child's run request names it, its context carries the definitions.
    Its prompt joins the system prompt and its `tools` (when given) limit the child's."""
    name = run_request.subagent_type_name
    if not name:
        return None
    for definition in context.custom_subagents:
        if definition.name == name:
            return definition
    return None
