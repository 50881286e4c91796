"""Whose a string is: the ids, prompt hashes and messages of routed runs (cursor/privacy.py)."""

from __future__ import annotations

import hashlib
import uuid

from cursor_byok.cursor.privacy import Identifiers
from cursor_byok.cursor.privacy import Messages
from cursor_byok.cursor.privacy import prompt_hash


def test_prompt_hash_is_the_sdks_unsalted_sha256_hex() -> None:
    # the SDK's "Say hello." -> c8e2c143... (docs/protocol.md §13.1)
    assert prompt_hash("Say hello.").startswith("c8e2c143")
    assert prompt_hash("x") == hashlib.sha256(b"x").hexdigest()


def test_an_id_names_its_conversation_alone_inside_a_value_and_in_any_case() -> None:
    known = Identifiers()
    conversation, request = f"agent-{uuid.uuid4()}", str(uuid.uuid4())
    known.note(conversation, request, "")
    known.note_prompt(conversation, "Say hello.")
    inner = conversation.removeprefix("agent-")
    assert known.owner(conversation) == conversation
    assert known.owner(request.upper()) == conversation
    assert known.owner(f"https://x/{inner}/y") == conversation  # the UUID inside it
    assert known.owner(prompt_hash("Say hello.")) == conversation
    assert known.owner(str(uuid.uuid4())) is None
    assert known.owner("") is None and known.owner("Say hello.") is None
    body = b"\x0a\x24" + request.encode() + b"\x12\x40" + prompt_hash("Say hello.").encode()
    assert known.owners_in(body) == {conversation}
    assert known.owners_in(b"\x00" * 100) == set()


def test_identifiers_are_bounded_oldest_first() -> None:
    known = Identifiers(max_entries=4)
    first, second, third = (str(uuid.uuid4()) for _ in range(3))
    known.note(first)
    known.note(second)
    known.note(third)
    assert len(known) == 3  # a conversation id is its own
    known.note(second, str(uuid.uuid4()), str(uuid.uuid4()))
    assert len(known) == 4
    assert known.owner(first) is None and known.owner(second) == second


def test_a_message_matches_its_run_whole_or_cut_short_but_not_a_short_piece() -> None:
    messages = Messages()
    messages.note("c1", "Please fix the   login bug in auth.py\nthanks", at=10.0)
    messages.note("c2", "hi", at=20.0)
    assert messages.matching("Please fix the login bug in auth.py thanks") == ["c1"]
    assert messages.matching("Please fix the login bug") == ["c1"]  # cut short, 16+ characters
    assert messages.matching("Please fix") == []  # too short a prefix to tell
    assert messages.matching("hi") == ["c2"]  # short messages match only whole
    assert messages.matching("hi", since=30.0) == []  # not recent enough
    assert messages.matching("") == []


def test_a_long_message_is_kept_by_its_start_and_still_matches() -> None:
    messages = Messages()
    long = "word " * 2000
    messages.note("c", long, at=0.0)
    assert messages.matching(long) == ["c"]  # the whole message: ours begins it
    assert messages.matching(long[:500]) == ["c"]  # cut short by the client
    assert messages.within("User: " + long) == ["c"]


def test_a_transcript_names_the_conversations_whose_messages_it_quotes_newest_first() -> None:
    messages = Messages()
    messages.note("old", "explain the build system to me", at=1.0)
    messages.note("new", "now add a test for the parser", at=2.0)
    messages.note("tiny", "ok", at=3.0)  # too short to find in a transcript
    transcript = (
        "User: explain the build system\nto me\nAssistant: ...\n"
        "User: now add a test for the parser\nUser: ok"
    )
    assert messages.within(transcript) == ["new", "old"]
    assert messages.within("nothing of theirs") == []
