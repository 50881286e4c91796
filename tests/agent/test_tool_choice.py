"""The client's limits on the model's tools (agent/tool_choice.py), from the SDK's headers."""

from __future__ import annotations

from cursor_byok.agent.tool_choice import ToolChoice
from cursor_byok.proxy.turns import ToolChoices
from cursor_byok.tools.registry import BUILTIN


def tools(*names: str):
    return [BUILTIN[n]() for n in names]


def test_no_headers_no_choice() -> None:
    assert ToolChoice.from_headers({}) is None


def test_an_allow_list_keeps_only_its_variants() -> None:
    allowed = "read_tool_call, shell_tool_call,write_shell_stdin_tool_call"
    choice = ToolChoice.from_headers({"x-cursor-agent-allowed-tools": allowed})
    assert choice is not None
    kept = choice.apply(tools("Read", "Shell", "WriteShellStdin", "Write", "StrReplace", "Task"))
    assert [t.name for t in kept] == ["Read", "Shell", "WriteShellStdin"]


def test_an_exclude_list_drops_every_tool_of_a_variant() -> None:
    choice = ToolChoice.from_headers({"x-cursor-agent-exclude-tools": "edit_tool_call"})
    assert choice is not None
    kept = choice.apply(tools("Read", "Write", "StrReplace", "EditNotebook", "Shell"))
    assert [t.name for t in kept] == ["Read", "Shell"]


def test_an_empty_allow_list_allows_nothing() -> None:
    choice = ToolChoice.from_headers({"x-cursor-agent-allowed-tools": ""})
    assert choice is not None and choice.apply(tools("Read", "Shell")) == []


def test_choices_are_kept_per_request_id_and_bounded() -> None:
    store = ToolChoices(limit=2)
    store.note("r1", {"x-cursor-agent-allowed-tools": "read_tool_call"})
    store.note("r2", {"content-type": "application/proto"})  # carries none: nothing kept
    store.note(None, {"x-cursor-agent-allowed-tools": "read_tool_call"})
    assert store.get("r1") == ToolChoice(frozenset({"read_tool_call"}))
    assert store.get("r2") is None
    store.note("r3", {"x-cursor-agent-exclude-tools": "shell_tool_call"})
    store.note("r4", {"x-cursor-agent-exclude-tools": "shell_tool_call"})
    assert store.get("r1") is None and store.get("r4") is not None
