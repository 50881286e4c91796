"""What Cursor's SDK sends to Cursor's backend during a BYOK turn, held to the list in
docs/protocol.md §13.1: a call not listed, a count outside its range, or conversation content in
any body fails the test (the privacy work relies on that list)."""

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


def test_backend_calls_of_a_byok_turn_are_the_documented_ones(stack, sdk, workspace) -> None:
    fp = stack.provider
    account = stack.account
    (workspace / "secret-notes.txt").write_text(FILE_TEXT + "\n")
    mark = account.mark()
    fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "secret-notes.txt")})])
    fp.script.text(ANSWER)
    agent = sdk.agent(MODEL, cwd=workspace)
    turn = sdk.send(agent, PROMPT)
    assert turn.status == "finished", turn.result
    assert turn.text == ANSWER
    assert FILE_TEXT in str(fp.requests[-1].json)  # the content went to the provider...
    sdk.close_agent(agent)
    account.wait_for("POST", "/aiserver.v1.AnalyticsService/TrackEvents", since=mark)
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
    # analytics carry the prompt's unsalted sha256 and the model name, as documented
    events = b"".join(
        c.body for c in calls if c.path == "/aiserver.v1.AnalyticsService/TrackEvents"
    )
    assert hashlib.sha256(PROMPT.encode()).hexdigest().encode() in events
    assert MODEL.encode() in events
