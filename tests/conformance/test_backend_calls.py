"""What Cursor's SDK sends to Cursor's backend during a BYOK turn, held to the list in
docs/protocol.md §13.1: a call not listed, a count outside its range, or conversation content in
any body fails the test. With privacy = "local" (the default, issue 26) that includes the SDK's
analytics about the run: no event naming the BYOK model or the prompt's hash reaches Cursor."""

from __future__ import annotations

import hashlib
import re

import pytest
from harness import MODEL
from harness import REPO

pytestmark = pytest.mark.timeout(180)
PROMPT = "Please read secret-notes.txt; the codeword is PROMPT-MARKER-7f3a."
FILE_TEXT = "FILE-MARKER-91c2: the quarterly numbers"
ANSWER = "ANSWER-MARKER-5d0e: it lists the quarterly numbers."
_ROW = re.compile(r"^\| `(GET|POST) ([^`]+)` \| [^|]* \| (\d+)-(\d+) \|")
_DROPPED = re.compile(r"TrackEvents: (\d+) of \d+ event\(s\) about BYOK conversations dropped")


def dropped_events(lines: list[str]) -> int:
    """Analytics events the proxy took out of TrackEvents batches, from its log lines."""
    return sum(int(m.group(1)) for line in lines if (m := _DROPPED.search(line)))


def documented_calls() -> dict[tuple[str, str], tuple[int, int]]:
    text = (REPO / "docs" / "protocol.md").read_text()
    begin = text.index("<!-- sdk-backend-calls:begin -->")
    end = text.index("<!-- sdk-backend-calls:end -->")
    calls = {}
    for line in text[begin:end].splitlines():
        match = _ROW.match(line)
        if match:
            method, path, low, high = match.groups()
            calls[(method, path)] = (int(low), int(high))
    assert len(calls) >= 8, "the documented list did not parse"
    return calls


@pytest.mark.every_sdk
def test_backend_calls_of_a_byok_turn_are_the_documented_ones(stack, sdk, workspace) -> None:
    fp = stack.provider
    account = stack.account
    (workspace / "secret-notes.txt").write_text(FILE_TEXT + "\n")
    mark = account.mark()
    dropped = dropped_events(stack.proxy.log_lines)
    fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "secret-notes.txt")})])
    fp.script.text(ANSWER)
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, PROMPT)
    assert turn.status == "finished", turn.result
    assert turn.text == ANSWER
    assert FILE_TEXT in str(fp.requests[-1].json)  # the content went to the provider...
    sdk.close_agent(agent)
    # sdk.run.created and sdk.run.completed (the run's ids, the model, the prompt's hash) are
    # taken out of the SDK's batches here; what else a batch holds goes on
    stack.proxy.wait_for_log(lambda lines: dropped_events(lines) >= dropped + 2, timeout=30)
    calls = account.since(mark)

    documented = documented_calls()
    seen: dict[tuple[str, str], int] = {}
    for call in calls:
        seen[(call.method, call.path)] = seen.get((call.method, call.path), 0) + 1
    new = sorted(set(seen) - set(documented))
    assert not new, f"calls to Cursor not in docs/protocol.md §13.1: {new}"
    for key, count in seen.items():
        low, high = documented[key]
        assert low <= count <= high, f"{key}: {count} per turn, documented {low}-{high}"
    # ...and none of it to Cursor: not the prompt, the file, the answer, the tool result
    for call in calls:
        for marker in ("PROMPT-MARKER", "FILE-MARKER", "ANSWER-MARKER", "quarterly"):
            assert marker.encode() not in call.body, (call.method, call.path, marker)
    # no event naming the BYOK model or carrying the prompt's unsalted sha256 reached Cursor
    digest = hashlib.sha256(PROMPT.encode()).hexdigest().encode()
    for call in calls:
        assert digest not in call.body.lower(), (call.method, call.path)
        assert MODEL.encode() not in call.body, (call.method, call.path)
