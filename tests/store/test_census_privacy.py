"""Privacy's proof in the census (issue 26): per BYOK conversation, calls answered here, events
dropped and bytes sent to Cursor; what doctor --watch and the live status make of it."""

from __future__ import annotations

from rich.console import Console

from cursor_byok.cli.doctor import check_census
from cursor_byok.proxy.status import status_table
from cursor_byok.store.activity import Activity
from cursor_byok.store.census import MAX_KEYS
from cursor_byok.store.census import OTHER
from cursor_byok.store.census import UNATTRIBUTED
from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import leaked
from cursor_byok.store.census import since

CONVERSATION = "0b6f6a55-8f4e-4b8e-9d0e-2b6c2f8f1d11"


def test_counts_per_conversation_since_and_lines() -> None:
    census = Census()
    census.privacy_mode = "local"
    census.private(CONVERSATION, answered=2)
    before = census.snapshot()
    census.private(CONVERSATION, answered=1, dropped=3)
    census.private("", answered=1)
    now = census.snapshot()
    assert now["privacy"]["conversations"][CONVERSATION] == {
        "answered": 3,
        "dropped": 3,
        "sent_bytes": 0,
        "sent_calls": 0,
    }
    new = since(now, before)["privacy"]["conversations"]
    assert new == {CONVERSATION: {"answered": 1, "dropped": 3}, UNATTRIBUTED: {"answered": 1}}
    text = "\n".join(census_lines(now))
    assert (
        'Privacy (privacy = "local"): 2 BYOK conversation(s): 4 call(s) answered here, '
        "3 analytics event(s) dropped, 0 B sent to Cursor"
    ) in text
    assert f"{CONVERSATION}: 3 answered here, 3 event(s) dropped, 0 B to Cursor" in text
    assert leaked(now) == 0


def test_bytes_sent_to_cursor_are_a_leak_only_with_privacy_local() -> None:
    census = Census()
    census.privacy_mode = "local"
    census.private(CONVERSATION, sent_bytes=120, sent_calls=1)
    assert leaked(census.snapshot()) == 120
    assert "120 B to Cursor in 1 call(s)" in "\n".join(census_lines(census.snapshot()))
    census.privacy_mode = "cursor"
    assert leaked(census.snapshot()) == 0  # what the user chose to send


def test_privacy_counts_are_bounded() -> None:
    census = Census()
    for index in range(MAX_KEYS + 5):
        census.private(f"conversation-{index}", answered=1)
    conversations = census.snapshot()["privacy"]["conversations"]
    assert len(conversations) == MAX_KEYS + 1 and conversations[OTHER]["answered"] == 5


def test_the_doctor_warns_when_a_byok_conversation_reached_cursor(tmp_path) -> None:
    census = Census()
    activity = Activity(tmp_path, background=False, census=census)
    census.on_change = activity.touch
    census.privacy_mode = "local"
    census.private(CONVERSATION, answered=4)
    quiet = check_census(tmp_path, before={})
    assert quiet is not None and quiet.status == "ok" and "4 call(s) answered here" in quiet.detail
    census.private(CONVERSATION, sent_bytes=99, sent_calls=1)
    warned = check_census(tmp_path, before={})
    assert warned is not None and warned.status == "warn"
    assert "99 bytes of BYOK conversations went to Cursor" in warned.fix


def test_the_live_status_caption_shows_privacy() -> None:
    census = Census()
    census.privacy_mode = "local"
    census.private(CONVERSATION, answered=2, dropped=1)
    console = Console(record=True, width=160)
    console.print(status_table([], census=census.snapshot()))
    text = console.export_text()
    assert "2 call(s) answered here" in text and "0 B sent to Cursor" in text
    assert CONVERSATION in text
