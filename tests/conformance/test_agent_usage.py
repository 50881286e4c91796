"""`agent.get_usage()` of a BYOK agent: answered from the proxy's usage store (Cursor has none)."""

from __future__ import annotations

import pytest
from harness import MODEL

pytestmark = pytest.mark.timeout(180)


def test_agent_usage_comes_from_our_usage_store(stack, sdk, workspace) -> None:
    fp = stack.provider
    agent = sdk.agent(MODEL, cwd=workspace)
    for n in range(2):
        fp.script.text(f"Answer {n}.", usage=(1000 + n, 50, 200))  # prompt, output, cached
        turn = sdk.send(agent, f"Question {n}?")
        assert turn.status == "finished", turn.result
    usage = sdk.usage(agent)
    assert len(usage["runs"]) == 2, usage
    total = usage["usage"]
    assert total["output_tokens"] == 100
    assert total["cache_read_tokens"] == 400
    assert total["input_tokens"] + total["cache_read_tokens"] == 2001  # the prompts, whole
    assert "agent usage of" in stack.proxy.log()
