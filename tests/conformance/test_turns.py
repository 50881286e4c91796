"""Cursor's official SDK through our proxy: the ordinary kinds of turn, on both transports.

Each test asserts what the SDK saw (its messages and run result) and what the provider received.
"""

from __future__ import annotations

import pytest
from harness import MODEL
from harness import provider_user_texts

pytestmark = [pytest.mark.timeout(180), pytest.mark.every_sdk]


def test_read_turn(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    path = str(workspace / "notes.txt")
    fp.script.tool_calls([("call_read", "Read", {"path": path})])
    fp.script.text("notes.txt says alpha and beta.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "What is in notes.txt?")
    assert turn.status == "finished", turn.result
    assert "alpha and beta" in turn.text
    [read] = turn.tool_calls()
    assert read["name"] == "read"
    requests = fp.requests[first:]
    assert len(requests) == 2
    assert "What is in notes.txt?" in provider_user_texts(requests[0])
    tool_results = [m for m in requests[1].json["messages"] if m["role"] == "tool"]
    assert "alpha" in tool_results[0]["content"] and "beta" in tool_results[0]["content"]


def test_shell_turn(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    fp.script.tool_calls([("call_sh", "Shell", {"command": "echo made-by-$((6*7))"})])
    fp.script.text("It printed made-by-42.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Run the echo.")
    assert turn.status == "finished", turn.result
    [shell] = turn.tool_calls()
    assert shell["name"] == "shell"
    assert "made-by-42" in str(shell["result"])
    result = [m for m in fp.requests[first + 1].json["messages"] if m["role"] == "tool"][-1]
    assert "made-by-42" in result["content"]  # the command really ran in the SDK's shell


def test_edit_is_applied_once_on_disk(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    notes = workspace / "notes.txt"
    # new_string contains old_string: a second application would show as "... more more"
    edit = {"path": str(notes), "old_string": "beta", "new_string": "beta and more"}
    fp.script.tool_calls([("call_edit", "StrReplace", edit)])
    fp.script.text("Edited.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Extend beta.")
    assert turn.status == "finished", turn.result
    assert notes.read_text() == "alpha\nbeta and more\n"
    assert len(turn.tool_calls()) == 1
    assert len(fp.requests) == first + 2
    result = [m for m in fp.requests[first + 1].json["messages"] if m["role"] == "tool"][-1]
    assert "error" not in result["content"].lower()


def test_turns_carry_the_history(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    agent = sdk.agent(MODEL, cwd=workspace)
    said = []
    for n in range(3):
        fp.script.text(f"Answer number {n}.")
        turn = sdk.send(agent, f"Question number {n}?")
        assert turn.status == "finished", turn.result
        assert turn.text == f"Answer number {n}."
        said.append(turn.text)
    last = fp.requests[first + 2].json["messages"]
    dialogue = [(m["role"], m["content"]) for m in last if m["role"] in ("user", "assistant")]
    users = [c for r, c in dialogue if r == "user"]
    assistants = [c for r, c in dialogue if r == "assistant"]
    assert [u if isinstance(u, str) else u[0]["text"] for u in users] == [
        "Question number 0?",
        "Question number 1?",
        "Question number 2?",
    ]
    assert [
        a if isinstance(a, str) else "".join(p.get("text", "") for p in a) for a in assistants
    ] == said[:2]
