"""The SDK's request context (environment, rules, MCP servers) reaches the model, though its run
requests carry none: the proxy asks with the `request_context_args` exec (protocol.md §11.12).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from harness import MODEL
from harness import system_text
from harness import tool_names

pytestmark = pytest.mark.timeout(180)
MCP_ECHO = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo.py"
RULE = "Always answer in the voice of a lighthouse keeper."


def test_rules_environment_and_mcp_reach_the_prompt(stack, sdk, workspace) -> None:
    fp = stack.provider
    (workspace / "AGENTS.md").write_text(f"# Agents\n{RULE}\n")
    rules = workspace / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\nalwaysApply: true\n---\nUse tabs, never spaces.\n")
    first = len(fp.requests)
    fp.script.text("Ahoy.")
    agent = sdk.agent(
        MODEL,
        cwd=workspace,
        local={"setting_sources": ["SETTING_SOURCE_PROJECT"]},
        mcp_servers={"echo": {"type": "stdio", "command": sys.executable, "args": [str(MCP_ECHO)]}},
    )
    turn = sdk.send(agent, "Hello?")
    assert turn.status == "finished", turn.result
    assert turn.text == "Ahoy."
    [request] = fp.requests[first:]
    system = system_text(request)
    assert str(workspace) in system  # the environment: workspace folders
    assert RULE in system and "Use tabs, never spaces." in system  # AGENTS.md and a rule
    assert "The echo server repeats text back" in system  # the MCP server's instructions
    assert any("echo" in name and name != "CallMcpTool" for name in tool_names(request)), (
        tool_names(request)
    )


def test_the_sdks_tool_options_limit_what_the_model_is_offered(stack, sdk, workspace) -> None:
    """`tools` / `disallowed_tools` reach us only as x-cursor-agent-*-tools headers; the SDK
    itself would run any tool the model calls."""
    fp = stack.provider
    first = len(fp.requests)
    fp.script.text("Only reading.")
    fp.script.text("No shell.")
    reader = sdk.agent(MODEL, cwd=workspace, tools=["read"])
    assert sdk.send(reader, "Hi.").status == "finished"
    careful = sdk.agent(MODEL, cwd=workspace, disallowed_tools=["shell"])
    assert sdk.send(careful, "Hi.").status == "finished"
    only_read, no_shell = fp.requests[first:]
    assert tool_names(only_read) == ["Read"]
    offered = tool_names(no_shell)
    assert "Read" in offered and "Shell" not in offered and "WriteShellStdin" not in offered
