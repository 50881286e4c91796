"""The client's own limits on the model's tools.

Cursor's SDK takes `tools` / `disallowed_tools` options and does not enforce them itself: it sends
them on every run as the headers `x-cursor-agent-allowed-tools` and `x-cursor-agent-exclude-tools`,
comma lists of `agent.v1.ToolCall` field names (`read_tool_call`, `shell_tool_call`, ...; its
`"shell"` means `shell_tool_call,write_shell_stdin_tool_call`), for the server to honour. A tool
is known by the ToolCall variant its card uses, so Write and StrReplace are both `edit_tool_call`
and every MCP tool is `mcp_tool_call`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from cursor_byok.tools.base import Tool

log = logging.getLogger(__name__)

ALLOWED_HEADER = "x-cursor-agent-allowed-tools"
EXCLUDED_HEADER = "x-cursor-agent-exclude-tools"


def _names(value: str | None) -> frozenset[str]:
    return frozenset(n.strip() for n in (value or "").split(",") if n.strip())


def tool_variant(tool: Tool) -> str | None:
    """The `ToolCall` field a tool's card uses (None if it cannot draw one)."""
    try:
        return tool.ui_call({}).WhichOneof("tool")
    except Exception:  # ui_call is best effort by contract
        return None


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """Which tools the client lets the model have: only `allowed` (None: any), none of
    `excluded`."""

    allowed: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    @classmethod
    def from_headers(cls, headers: dict[str, str]) -> ToolChoice | None:
        """The choice a run's request headers carry (keys lower case); None when they carry
        none."""
        allowed = headers.get(ALLOWED_HEADER)
        excluded = headers.get(EXCLUDED_HEADER)
        if allowed is None and excluded is None:
            return None
        return cls(_names(allowed) if allowed is not None else None, _names(excluded))

    def permits(self, tool: Tool) -> bool:
        variant = tool_variant(tool)
        if variant is None:
            return self.allowed is None
        if self.allowed is not None and variant not in self.allowed:
            return False
        return variant not in self.excluded

    def apply(self, tools: list[Tool]) -> list[Tool]:
        kept = [t for t in tools if self.permits(t)]
        if len(kept) != len(tools):
            dropped = sorted({t.name for t in tools} - {t.name for t in kept})
            log.debug("tools the client does not allow: %s", ", ".join(dropped))
        return kept
