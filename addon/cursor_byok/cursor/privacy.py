"""Where a call about a conversation names it: ids, prompt hashes, the message text. Sans-IO.

The calls Cursor makes around a conversation name it in different ways: by its conversation id,
by a run's request id, by the user's message itself (NameAgent carries no id), by the prompt's
unsalted SHA-256 (Cursor's SDK analytics), by the model's name. `Identifiers` remembers the ids
and hashes of every run the proxy routed, each pointing at its conversation, and `Messages` the
runs' message texts, so a call's strings can be attributed to a conversation (bounded, the oldest
forgotten first). Whether that conversation is private is its route's business
(`proxy/routing.py`): these classes only say whose a string is.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

MAX_IDENTIFIERS = 16384  # ids and hashes remembered (about five per run)
MAX_MESSAGES = 512  # message texts remembered (one per run)
MIN_PREFIX = 16  # characters a truncated message must keep to match its run's
MESSAGE_CHARS = 2000  # of each message kept (its start: what a title or a transcript quotes)
MIN_QUOTE = 12  # characters a run's message needs to be found inside a transcript
SCAN_LIMIT = 8 * 1024 * 1024  # bytes of a body searched for ids
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_HEX64 = r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])"
TOKENS = re.compile(f"{_UUID}|{_HEX64}")
# For bodies, what lets the regular-expression engine skip ahead: a UUID's middle starts with a
# literal "-" (~1 ms a MiB, where the plain pattern costs ~30), and hex runs are found by
# `bytes.find` on a map of which bytes are hex digits.
_UUID_TAIL = re.compile(rb"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_HEX_MAP = bytes(0x68 if i in _HEX_DIGITS else 0x2E for i in range(256))  # "h" or "."
_HEX_RUN = b"h" * 64


def prompt_hash(text: str) -> str:
    """The prompt's unsalted SHA-256, hex, as Cursor's SDK puts it in its analytics."""
    return hashlib.sha256(text.encode()).hexdigest()


def normalise(text: str) -> str:
    """Whitespace runs as one space, trimmed: how two copies of one message compare."""
    return " ".join(text.split())


class Identifiers:
    """Ids and hashes of routed runs → the conversation each belongs to.

    A value names a conversation when it is one of its ids, or carries one: a UUID or a 64-digit
    hex token inside it (`agent-<uuid>`, a URL, a JSON string), compared without case."""

    def __init__(self, max_entries: int = MAX_IDENTIFIERS) -> None:
        self.max_entries = max_entries
        self._owner: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._owner)

    def note(self, conversation_id: str, *idents: str) -> None:
        """Remember `idents` (and the conversation id itself) as the conversation's."""
        if not conversation_id:
            return
        for ident in (conversation_id, *idents):
            if not ident:
                continue
            for key in {ident.lower(), *(t.lower() for t in TOKENS.findall(ident))}:
                self._owner[key] = conversation_id
                self._owner.move_to_end(key)
        while len(self._owner) > self.max_entries:
            self._owner.popitem(last=False)

    def note_prompt(self, conversation_id: str, text: str) -> None:
        if text:
            self.note(conversation_id, prompt_hash(text))

    def owner(self, value: str) -> str | None:
        """The conversation `value` names, if any."""
        if not value:
            return None
        found = self._owner.get(value.lower())
        if found is not None:
            return found
        for token in TOKENS.findall(value):
            found = self._owner.get(token.lower())
            if found is not None:
                return found
        return None

    def owners(self, values: Iterable[str]) -> set[str]:
        return {owner for value in values if (owner := self.owner(value)) is not None}

    def owners_in(self, data: bytes, limit: int = SCAN_LIMIT) -> set[str]:
        """The conversations whose ids or hashes appear in raw bytes (a body on its way out)."""
        data = data[:limit]
        found = set()
        for token in _byte_tokens(data):
            owner = self._owner.get(token.decode().lower())
            if owner is not None:
                found.add(owner)
        return found


def _byte_tokens(data: bytes):
    """The UUIDs and 64-digit hex tokens in `data` (as `TOKENS` finds them in text)."""
    for match in _UUID_TAIL.finditer(data, 8):
        head = data[match.start() - 8 : match.start()]
        if all(byte in _HEX_DIGITS for byte in head):
            yield head + match.group()
    marks = data.translate(_HEX_MAP)
    at = marks.find(_HEX_RUN)
    while at != -1:
        end = marks.find(b".", at)
        end = len(marks) if end == -1 else end
        if end - at == 64:
            yield data[at:end]
        at = marks.find(_HEX_RUN, end)


@dataclass(frozen=True, slots=True)
class _Message:
    text: str  # normalised
    conversation_id: str
    at: float  # the caller's clock when the run was routed


class Messages:
    """The user messages of routed runs, newest last, for calls that carry a message but no id
    (NameAgent, quick actions) or a whole transcript (CreateTranscriptOverview)."""

    def __init__(self, max_entries: int = MAX_MESSAGES) -> None:
        self._messages: deque[_Message] = deque(maxlen=max_entries)

    def note(self, conversation_id: str, text: str, at: float) -> None:
        text = normalise(text)[:MESSAGE_CHARS]
        if conversation_id and text:
            self._messages.append(_Message(text, conversation_id, at))

    def matching(self, text: str, since: float = float("-inf")) -> list[str]:
        """Conversations (newest first) with a message routed at `since` or later that is `text`,
        or begins with it or it with them (a client may send a message cut short)."""
        text = normalise(text)
        if not text:
            return []
        out: list[str] = []
        for message in reversed(self._messages):
            if message.at < since or message.conversation_id in out:
                continue
            if message.text == text or _prefix(message.text, text):
                out.append(message.conversation_id)
        return out

    def within(self, transcript: str) -> list[str]:
        """Conversations (newest first) one of whose messages appears in `transcript`."""
        haystack = normalise(transcript[:SCAN_LIMIT])
        out: list[str] = []
        for message in reversed(self._messages):
            if message.conversation_id in out or len(message.text) < MIN_QUOTE:
                continue
            if message.text in haystack:
                out.append(message.conversation_id)
        return out


def _prefix(a: str, b: str) -> bool:
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= MIN_PREFIX and long.startswith(short)
