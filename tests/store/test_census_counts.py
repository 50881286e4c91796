"""The RPC census (store/census.py): bounded counts, what came since a snapshot, readable lines,
the doctor's census check and the live status caption that show them."""

from __future__ import annotations

import json

from rich.console import Console

from cursor_byok.cli.doctor import check_census
from cursor_byok.proxy.status import status_table
from cursor_byok.store.activity import Activity
from cursor_byok.store.census import MAX_KEYS
from cursor_byok.store.census import OTHER
from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import since


def test_counts_are_bounded_and_first_sightings_said_once() -> None:
    census = Census()
    for index in range(MAX_KEYS + 10):
        census.rpc(f"/svc/Method{index}?x=1", "passed")
    snapshot = census.snapshot()
    assert len(snapshot["paths"]) == MAX_KEYS + 1 and snapshot["paths"][OTHER]["passed"] == 10
    assert "/svc/Method0" in snapshot["paths"]  # the query string is dropped
    assert census.unmodelled("AgentRunRequest.26", "AgentRunRequest field 26")
    assert not census.unmodelled("AgentRunRequest.26", "AgentRunRequest field 26")
    assert census.snapshot()["unmodelled"]["AgentRunRequest.26"]["count"] == 2


def test_since_and_lines_say_what_is_new() -> None:
    census = Census()
    census.rpc("/agent.v1.AgentService/RunSSE", "served")
    census.transport("RunSSE")
    before = census.snapshot()
    census.rpc("/agent.v1.AgentService/RunPoll", "served")
    census.rpc("/agent.v1.AgentService/RunSSE", "relayed")
    census.transport("RunPoll")
    census.unmodelled("ConversationAction.40", "ConversationAction field 40")
    census.unresolved("blob id")
    new = since(census.snapshot(), before)
    assert new["paths"] == {
        "/agent.v1.AgentService/RunPoll": {"served": 1},
        "/agent.v1.AgentService/RunSSE": {"relayed": 1},
    }
    assert new["transports"] == {"RunPoll": 1}
    text = "\n".join(census_lines(new))
    assert "Cursor RPCs: 2 path(s); 1 served, 0 passed, 1 relayed" in text
    assert "Agent calls by transport: RunPoll ×1" in text
    assert "ConversationAction.40 ×1: ConversationAction field 40" in text
    assert "Unresolved: 1 blob id(s)" in text
    assert census_lines(since(census.snapshot(), census.snapshot())) == []


def test_the_record_carries_the_census_and_the_doctor_reads_it(tmp_path) -> None:
    census = Census()
    activity = Activity(tmp_path, background=False, census=census)
    census.on_change = activity.touch
    census.rpc("/aiserver.v1.BidiService/BidiAppend", "served")
    assert json.loads((tmp_path / "activity.json").read_text())["census"]["paths"]
    check = check_census(tmp_path, before=None)
    assert check is not None and check.status == "ok" and "BidiAppend" in check.detail
    census.unmodelled("AgentClientMessage.12", "AgentClientMessage field 12 (a new kind)")
    warned = check_census(tmp_path, before={})
    assert warned is not None and warned.status == "warn"
    assert "AgentClientMessage.12" in warned.detail and "doctor" in warned.fix
    assert check_census(tmp_path / "none", before=None) is None


def test_the_live_status_shows_the_census_as_its_caption() -> None:
    census = Census()
    census.rpc("/agent.v1.AgentService/Run", "served")
    census.unmodelled("AgentRunRequest.27", "AgentRunRequest field 27")
    console = Console(record=True, width=140)
    console.print(status_table([], census=census.snapshot()))
    text = console.export_text()
    assert "Cursor RPCs: 1 path(s); 1 served" in text and "AgentRunRequest.27" in text


def test_editor_features_are_counted_and_shown() -> None:
    """Cmd-K and the others (issue 34): calls answered here, and what went to Cursor because
    `[features]` leaves a feature to it, per feature; `since` and the lines show them."""
    census = Census()
    census.feature("cmd_k", answered=1)
    before = census.snapshot()
    census.feature("cmd_k", answered=2)
    census.feature("commit_message", sent_bytes=5120, sent_calls=1)
    new = since(census.snapshot(), before)
    assert new["features"] == {
        "cmd_k": {"answered": 2},
        "commit_message": {"sent_bytes": 5120, "sent_calls": 1},
    }
    text = "\n".join(census_lines(census.snapshot()))
    assert "Editor features: cmd_k 3 answered here; commit_message 0 answered here, 1 sent to " \
        "Cursor (5120 B)" in text  # fmt: skip
    assert census_lines(since(census.snapshot(), census.snapshot())) == []
