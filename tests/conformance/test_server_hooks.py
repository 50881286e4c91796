"""The hooks only the server can fire (execute_hook_args, exec 27), run by Cursor's SDK from a
project `.cursor/hooks.json` on a BYOK turn: subagentStart refuses a subagent, subagentStop
resumes it once and adds context for the parent, preCompact shows its message. And a subagent
definition's own model (issue 37 item 5)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from fakes.script import Step
from harness import MODEL
from harness import SMALL
from harness import system_text

pytestmark = pytest.mark.timeout(240)
PROJECT = {"setting_sources": ["SETTING_SOURCE_PROJECT"]}
SUMMARY_MARK = "You summarise a coding-agent conversation"


def project_hook(workspace: Path, step: str, body: str) -> Path:
    """A python hook for `step` in the project's hooks.json; `body` reads `event` (the JSON
    the client passes on stdin) and sets `out` (what it answers). Every event is logged."""
    folder = workspace / ".cursor"
    folder.mkdir(exist_ok=True)
    log = folder / f"{step}.log"
    script = folder / f"{step}.py"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\nevent = json.load(sys.stdin)\nout = {{}}\n"
        f"{body}\n"
        f"with open({str(log)!r}, 'a') as f:\n    f.write(json.dumps(event) + '\\n')\n"
        "print(json.dumps(out))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    config = folder / "hooks.json"
    hooks = json.loads(config.read_text())["hooks"] if config.exists() else {}
    hooks[step] = [{"command": str(script)}]
    config.write_text(json.dumps({"version": 1, "hooks": hooks}))
    return log


def events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.every_sdk
def test_a_subagent_start_hook_refuses_the_subagent(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    log = project_hook(
        workspace, "subagentStart", 'out = {"permission": "deny", "user_message": "no (c41)"}'
    )
    task = {"description": "Look", "prompt": "Count the files."}
    fp.script.tool_calls([("call_task", "Task", task)])
    fp.script.text("The hook refused the subagent.")
    agent = sdk.agent(MODEL, cwd=workspace, local=PROJECT)
    turn = sdk.send(agent, "Ask a subagent.", timeout=90)
    assert turn.status == "finished", turn.result
    assert turn.text == "The hook refused the subagent."
    [event] = events(log)
    assert event["task"] == "Count the files." and event["subagent_type"] == "generalPurpose"
    requests = fp.requests[first:]
    assert len(requests) == 2  # no child run
    result = [m for m in requests[1].json["messages"] if m["role"] == "tool"][-1]["content"]
    assert "no (c41)" in result


@pytest.mark.every_sdk
def test_a_subagent_stop_hook_resumes_it_and_adds_context(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    log = project_hook(
        workspace,
        "subagentStop",
        'if event.get("loop_count", 0) == 0:\n'
        '    out = {"followup_message": "Also count the tests.", "additional_context": "ctx 5d2"}',
    )
    task = {"description": "Count", "prompt": "Count the files."}
    fp.script.tool_calls([("call_task", "Task", task)])
    fp.script.text("Three files.")  # the child run
    fp.script.text("Three files, one test.")  # the child, resumed with the follow-up
    fp.script.text("Done counting.")
    agent = sdk.agent(MODEL, cwd=workspace, local=PROJECT)
    turn = sdk.send(agent, "Ask a subagent to count.", timeout=120)
    assert turn.status == "finished", turn.result
    assert turn.text == "Done counting."
    stops = events(log)
    assert [e["loop_count"] for e in stops] == [0, 1]
    assert stops[0]["status"] == "completed" and stops[0]["summary"] == "Three files."
    _parent, _child, resumed, final = fp.requests[first : first + 4]
    assert "Also count the tests." in json.dumps(resumed.json["messages"])
    assert "Three files." in json.dumps(resumed.json["messages"])  # the same child, resumed
    result = [m for m in final.json["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Three files, one test." in result and "ctx 5d2" in result


@pytest.mark.every_sdk
def test_a_pre_compact_hook_is_told_and_its_message_shown(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    log = project_hook(workspace, "preCompact", 'out = {"user_message": "compacting (hook 8e1)"}')
    filler = " ".join(f"word{n}" for n in range(2200))

    def respond(request) -> Step:
        if SUMMARY_MARK in system_text(request):
            return Step("reply", text="## Goals\nKeep going.\n")
        return Step("reply", text=f"Noted {len(fp.requests)}.")

    fp.fp.responder = respond
    fp.fp.usage_from_prompt = True
    agent = sdk.agent(SMALL, cwd=workspace, local=PROJECT)
    turns = [sdk.send(agent, f"Remember this. {filler}") for _ in range(5)]
    assert all(t.status == "finished" for t in turns), [t.result for t in turns]
    assert any(SUMMARY_MARK in system_text(r) for r in fp.requests[first:])
    [event, *_] = events(log)
    assert event["trigger"] == "auto" and event["is_first_compaction"] is True
    assert event["context_window_size"] > 0 and event["messages_to_compact"] > 0
    assert any("compacting (hook 8e1)" in t.text for t in turns)


def test_a_subagent_definition_runs_on_the_model_it_names(stack, sdk, workspace) -> None:
    """`AgentOptions.agents[...].model` (issue 37 item 5): a definition naming a configured
    model runs its child there; the parent stays on its own."""
    fp = stack.provider
    first = len(fp.requests)
    task = {"description": "Review", "prompt": "Review notes.txt", "subagent_type": "reviewer"}
    fp.script.tool_calls([("call_task", "Task", task)])
    fp.script.text("Looks fine.")  # the child run
    fp.script.text("The reviewer says it looks fine.")
    agents = {"reviewer": {"description": "Reviews", "prompt": "Review.", "model": {"id": SMALL}}}
    agent = sdk.agent(MODEL, cwd=workspace, agents=agents)
    turn = sdk.send(agent, "Have the reviewer look.", timeout=90)
    assert turn.status == "finished", turn.result
    parent, child, final = fp.requests[first : first + 3]
    assert child.json["model"] == "fake-small-1"
    assert parent.json["model"] == final.json["model"] == "fake-upstream-1"
