"""Cursor's official SDK through our proxy: an image for a vision model, an MCP tool, a subagent
and a conversation long enough to compact, on both transports."""

from __future__ import annotations

import base64
import json
import re
import struct
import sys
import zlib
from pathlib import Path

import pytest
from fakes.script import Step
from harness import CLAUDE
from harness import MODEL
from harness import SMALL
from harness import system_text
from harness import tool_names

pytestmark = pytest.mark.timeout(240)
MCP_ECHO = Path(__file__).resolve().parents[1] / "fakes" / "mcp_echo.py"
SUMMARY_MARK = "You summarise a coding-agent conversation"


def tiny_png(path: Path) -> bytes:
    """A valid 2x2 red PNG (the SDK sniffs the type from the magic bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    path.write_bytes(data)
    return data


def test_image_reaches_a_vision_model(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    png = tiny_png(workspace / "red.png")
    fp.script.text("A red square.")
    agent = sdk.agent(CLAUDE, cwd=workspace)
    turn = sdk.send(agent, "What is in this image?", images=[(workspace / "red.png", "image/png")])
    assert turn.status == "finished", turn.result
    assert turn.text == "A red square."
    [request] = fp.requests[first:]
    assert request.format == "anthropic"
    user = [m for m in request.json["messages"] if m["role"] == "user"][-1]
    images = [p for p in user["content"] if p.get("type") == "image"]
    assert len(images) == 1
    assert images[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(images[0]["source"]["data"]) == png


@pytest.mark.every_sdk
def test_mcp_tool(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)

    def respond(request) -> Step:
        if request is fp.requests[first]:
            [name] = [n for n in tool_names(request) if "echo" in n and n != "CallMcpTool"]
            return Step("reply", tool_calls=[("call_mcp", name, {"text": "over MCP"})])
        return Step("reply", text="The server said it back.")

    fp.fp.responder = respond
    agent = sdk.agent(
        MODEL,
        cwd=workspace,
        mcp_servers={"echo": {"type": "stdio", "command": sys.executable, "args": [str(MCP_ECHO)]}},
    )
    turn = sdk.send(agent, "Echo 'over MCP'.")
    assert turn.status == "finished", turn.result
    assert turn.text == "The server said it back."
    [call] = turn.tool_calls()
    assert "echo: over MCP" in json.dumps(call["result"])  # the SDK ran the server's tool
    assert len(fp.requests) == first + 2
    result = [m for m in fp.requests[first + 1].json["messages"] if m["role"] == "tool"][-1]
    assert "echo: over MCP" in result["content"]


@pytest.mark.every_sdk
def test_subagent(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    task = {"description": "Find the answer", "prompt": "What is six times seven?"}
    fp.script.tool_calls([("call_task", "Task", task)])
    fp.script.text("Forty-two.")  # the child run (a run of its own, through the proxy)
    fp.script.text("The subagent says forty-two.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, "Ask a subagent.", timeout=90)
    assert turn.status == "finished", turn.result
    assert turn.text == "The subagent says forty-two."
    _parent, child, final = fp.requests[first : first + 3]
    child_users = [m for m in child.json["messages"] if m["role"] == "user"]
    assert "What is six times seven?" in json.dumps(child_users)
    result = [m for m in final.json["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Forty-two." in result
    agent_id = re.search(r"subagent agent id: ([^;\]]*);", result)
    assert agent_id and agent_id.group(1).strip(), result  # a real id, not ""


def test_long_conversation_compacts(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    filler = " ".join(f"word{n}" for n in range(2200))  # ~15 KB a turn; the window is 16k tokens

    def respond(request) -> Step:
        if SUMMARY_MARK in system_text(request):
            return Step("reply", text="## Goals\nKeep the codeword: marigold.\n")
        return Step("reply", text=f"Noted {len(fp.requests)}.")

    fp.fp.responder = respond
    fp.fp.usage_from_prompt = True  # usage as a real provider reports it: the meter trusts it
    agent = sdk.agent(SMALL, cwd=workspace)
    turns = [sdk.send(agent, f"Remember marigold. {filler}") for _ in range(5)]
    assert all(t.status == "finished" for t in turns), [t.result for t in turns]
    requests = fp.requests[first:]
    summaries = [r for r in requests if SUMMARY_MARK in system_text(r)]
    assert summaries, "the conversation never compacted"
    # the SDK's messages have no summary kind; the turn after it goes on from the summary
    assert turns[-1].text.startswith("Noted")
    after = requests[requests.index(summaries[0]) + 1]
    assert "Keep the codeword: marigold." in json.dumps(after.json["messages"])
    assert not any(r.overflowed for r in requests)


def test_subagent_definitions_reach_the_model(stack, sdk, workspace) -> None:
    """`AgentOptions.agents`: the parent's model sees each definition as a Task subagent type;
    the child run it starts by that name works under the definition's prompt."""
    fp = stack.provider
    first = len(fp.requests)
    task = {"description": "Review", "prompt": "Review notes.txt", "subagent_type": "reviewer"}
    fp.script.tool_calls([("call_task", "Task", task)])
    fp.script.text("Looks fine.")  # the child run
    fp.script.text("The reviewer says it looks fine.")
    agents = {
        "reviewer": {
            "description": "Reviews changes for bugs",
            "prompt": "You are a meticulous code reviewer (marker 7f3a).",
        }
    }
    agent = sdk.agent(MODEL, cwd=workspace, agents=agents)
    turn = sdk.send(agent, "Have the reviewer look.", timeout=90)
    assert turn.status == "finished", turn.result
    assert turn.text == "The reviewer says it looks fine."
    parent, child, _final = fp.requests[first : first + 3]
    [task_tool] = [
        t for t in parent.json["tools"] if (t.get("function") or {}).get("name") == "Task"
    ]
    assert "`reviewer`: Reviews changes for bugs" in task_tool["function"]["description"]
    assert "meticulous code reviewer (marker 7f3a)" in system_text(child)
    assert "marker 7f3a" not in system_text(parent)
