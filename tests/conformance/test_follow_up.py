"""The SDK's forced follow-up (`send(text, {"local": {"force": True}})`, Cursor's "send now")
while a turn runs: the old run ends at once as superseded, the new one runs, nothing is reopened."""

from __future__ import annotations

import pytest
from harness import MODEL

pytestmark = pytest.mark.timeout(180)


def test_forced_follow_up_supersedes_the_running_turn(stack, sdk, workspace) -> None:
    fp = stack.provider
    first = len(fp.requests)
    opened = stack.run_calls()
    fp.script.hang(text="Counting: one, two, ")  # the running turn: streams, then waits
    fp.script.text("Stopped counting; hello.")
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(
        agent, "Count to a million.", force_on="assistant", force_text="Stop, just say hello."
    )
    follow = turn.follow_up
    assert follow is not None
    assert follow.status == "finished", follow.result
    assert follow.text == "Stopped counting; hello."
    # the old run ended as superseded (the SDK had expired it: it reports the end as the run's
    # error), its provider call was aborted, and its stream was not reopened: before the fix the
    # SDK retried a plain `canceled` end four more times, and the follow-up waited for it
    assert turn.status in ("error", "cancelled", "expired"), turn.result
    assert turn.status != "error" or "superseded" in turn.error_message, turn.result
    assert fp.requests[first].disconnected
    assert stack.run_calls() - opened == 2
    # nothing left behind: the next turn is an ordinary one, and still nothing was reopened
    fp.script.text("Next answer.")
    after = sdk.send(agent, "And now?")
    assert after.status == "finished" and after.text == "Next answer.", after.result
    assert stack.run_calls() - opened == 3
    assert len(fp.requests) == first + 3
    assert "Stop, just say hello." in str(fp.requests[first + 2].json["messages"])
