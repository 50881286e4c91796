"""Project hooks run by Cursor's SDK itself on a BYOK turn: a `.cursor/hooks.json` (loaded with
`setting_sources=["project"]`) whose preToolUse hook denies the shell command."""

from __future__ import annotations

import json
import stat

import pytest
from harness import MODEL

pytestmark = pytest.mark.timeout(180)


@pytest.mark.every_sdk
def test_a_project_pre_tool_use_hook_denies_the_shell(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    hooks = workspace / ".cursor"
    hooks.mkdir()
    script = hooks / "deny.sh"
    script.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        'echo \'{"permission": "deny", "user_message": "blocked by hook", '
        '"agent_message": "The project hook blocks this tool."}\'\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (hooks / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {"preToolUse": [{"command": str(script)}]}})
    )
    marker = workspace / "ran.txt"
    fp.script.tool_calls([("call_sh", "Shell", {"command": f"touch {marker}"})])
    fp.script.text("The hook stopped me.")
    agent = sdk.agent(MODEL, cwd=workspace, local={"setting_sources": ["SETTING_SOURCE_PROJECT"]})
    turn = sdk.send(agent, "Touch the file.", timeout=90)
    assert turn.status == "finished", turn.result
    assert turn.text == "The hook stopped me."
    assert not marker.exists()  # the command never ran
    result = [m for m in fp.requests[first + 1].json["messages"] if m["role"] == "tool"][-1]
    assert "blocked by hook" in result["content"]  # the model is told why
