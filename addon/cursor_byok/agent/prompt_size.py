"""What a model request weighs, in bytes: in total, and per category of Cursor's context meter.

The token meter (`tokens.TokenMeter`) converts bytes to tokens; this module only measures. The
total is what every call's compaction decision and the meter's `used` start from; the split by
category (system prompt, rules, skills, MCP, tools, summarised and verbatim conversation) is what
the checkpoint's `token_details.breakdown` shows (protocol.md §10.5).
"""

from __future__ import annotations

from cursor_byok.agent import context as prompts
from cursor_byok.agent.compaction import is_summary
from cursor_byok.agent.tokens import json_bytes
from cursor_byok.agent.tokens import messages_bytes
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ToolSpec
from cursor_byok.tools.base import Tool

Measured = tuple[int, dict[str, int]]  # a request's bytes: in total, by meter category


def request_bytes(request: ModelRequest) -> int:
    """Size of what a call sends: system prompt, tool schemas, history (neutral form)."""
    tools = sum(tool_bytes(t) for t in request.tools)
    return len(request.system.encode()) + tools + messages_bytes(request.messages)


_TOOL_BYTES: dict[tuple[str, str, int], tuple[dict, int]] = {}
_TOOL_BYTES_MAX = 1024


def tool_bytes(tool: ToolSpec) -> int:
    """A tool schema's JSON size, measured once: the same ~40 schemas go with every call of
    every turn, and serialising them each time was a visible share of a turn's fixed cost.
    Keyed by the schema object (kept alive in the entry, so its id is not reused)."""
    key = (tool.name, tool.description, id(tool.parameters))
    hit = _TOOL_BYTES.get(key)
    if hit is not None and hit[0] is tool.parameters:
        return hit[1]
    size = json_bytes(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    )
    if len(_TOOL_BYTES) >= _TOOL_BYTES_MAX:
        _TOOL_BYTES.clear()
    _TOOL_BYTES[key] = (tool.parameters, size)
    return size


def category_bytes(
    request: ModelRequest, mode: int, context: pb.RequestContext, tools: dict[str, Tool]
) -> dict[str, int]:
    """Bytes of `request` per context-meter category (the ids of `context_meter.CATEGORIES`)."""
    return measure(request, mode, context, tools)[1]


def measure(
    request: ModelRequest, mode: int, context: pb.RequestContext, tools: dict[str, Tool]
) -> Measured:
    """`request_bytes(request)` and `category_bytes(...)` in one pass over the conversation:
    each message is serialised once for both (the history is most of a long conversation's
    request, and it was measured twice per call, then twice more with the answer)."""
    sizes: dict[str, int] = {}
    for category, text in prompts.prompt_parts(mode, context, [t.name for t in request.tools]):
        sizes[category] = sizes.get(category, 0) + len(text.encode())
    total = len(request.system.encode())
    for spec in request.tools:
        tool = tools.get(spec.name)
        category = "mcp" if tool is not None and _is_mcp(tool) else "tools"
        size = tool_bytes(spec)
        sizes[category] = sizes.get(category, 0) + size
        total += size
    for message in request.messages:
        category = "summarized_conversation" if is_summary(message) else "conversation"
        size = json_bytes(message)
        sizes[category] = sizes.get(category, 0) + size
        total += size
    return total, sizes


def grown(
    sent: ModelRequest, measured: Measured, following: ModelRequest, answer_bytes: int
) -> Measured | None:
    """`following`'s sizes from `sent`'s (`measured`) when it is `sent` with one more message
    (the answer, `answer_bytes` long): the same system prompt and tools, and the very same
    message objects before it; else None (measure it whole)."""
    after = following.messages
    if len(after) != len(sent.messages) + 1 or not _same_prefix(sent, following):
        return None
    total, sizes = measured
    sizes = dict(sizes)
    category = "summarized_conversation" if is_summary(after[-1]) else "conversation"
    sizes[category] = sizes.get(category, 0) + answer_bytes
    return total + answer_bytes, sizes


def unchanged(measured: ModelRequest, request: ModelRequest) -> bool:
    """Whether `request` is `measured` again: the same system prompt and tools and the very
    same message objects (the turn's start measures the request its first call sends)."""
    return len(request.messages) == len(measured.messages) and _same_prefix(measured, request)


def _same_prefix(sent: ModelRequest, following: ModelRequest) -> bool:
    """`following` has `sent`'s system prompt, tools and message objects, then maybe more."""
    return (
        following.system is sent.system
        and following.tools is sent.tools
        and all(a is b for a, b in zip(sent.messages, following.messages, strict=False))
    )


def _is_mcp(tool: Tool) -> bool:
    """MCP tools count as "MCP & dynamic tools" on Cursor's meter."""
    return type(tool).__module__.endswith(".mcp")
