"""Cursor's official SDK through our proxy: the ordinary kinds of turn, on both transports.

Each test asserts what the SDK saw (its messages and run result) and what the provider received.
"""

from __future__ import annotations

import pytest
from conftest import MODEL
from harness import provider_user_texts

pytestmark = pytest.mark.timeout(180)


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
