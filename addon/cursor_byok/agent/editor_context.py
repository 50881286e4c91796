"""What Cmd-K and terminal Cmd-K send as context, made ready for a prompt: pure, no I/O.

The client sends each context item either in full or, when it believes the server has seen it,
only as a `context_item_hash`. A hash we do not know is answered with `missing_context_items`
and the client sends the item again in full (docs/protocol.md "Cmd-K"). How the client computes
the hash is not known [inf], so what it sends in full is learnt against the hashes it named:
the request that answers a `missing_context_items` carries the same items in the same places,
now whole (`ContextCache.learn`). Kept items are bounded in number and bytes.

Also here: the character budget a model's window allows, and the cut that keeps the lines
nearest the edit when the client sends more (up to 5 MB) than that.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from cursor_byok.pb import aiserver_features_pb2 as fpb

MAX_ITEMS = 2048  # context items kept by hash
MAX_BYTES = 32 * 1024 * 1024  # their serialized bytes together
MAX_SESSIONS = 256  # requests waiting for the items they were told are missing
CHARS_PER_TOKEN = 3  # conservative for code: a prompt cut by this fits the window
MIN_BUDGET = 4_000  # characters, whatever the window says


class ContextCache:
    """Context items by the client's hash, bounded (oldest out first)."""

    def __init__(self, max_items: int = MAX_ITEMS, max_bytes: int = MAX_BYTES) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        # session id -> the request's entries (a hash, or "" for an item sent whole)
        self._asked: OrderedDict[str, list[str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, item_hash: str) -> fpb.ContextItem | None:
        data = self._items.get(item_hash)
        if data is None:
            return None
        self._items.move_to_end(item_hash)
        return fpb.ContextItem.FromString(data)

    def put(self, item_hash: str, item: fpb.ContextItem) -> None:
        data = item.SerializeToString()
        if not item_hash or len(data) > self.max_bytes:
            return
        old = self._items.pop(item_hash, None)
        if old is not None:
            self._bytes -= len(old)
        self._items[item_hash] = data
        self._bytes += len(data)
        while len(self._items) > self.max_items or self._bytes > self.max_bytes:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= len(dropped)

    def asked(self, session: str, entries: list[str]) -> None:
        """Remember that `session`'s request (its entries in order) was told items are missing."""
        self._asked[session] = entries
        while len(self._asked) > MAX_SESSIONS:
            self._asked.popitem(last=False)

    def learn(self, session: str, items: Sequence[fpb.PotentiallyCachedContextItem]) -> int:
        """Keep, under the hashes the earlier request named, the items this one sends whole in
        the same places; how many were learnt."""
        entries = self._asked.pop(session, None)
        if entries is None or len(entries) != len(items):
            return 0
        learnt = 0
        for item_hash, item in zip(entries, items, strict=True):
            if item_hash and item.WhichOneof("item") == "context_item":
                self.put(item_hash, item.context_item)
                learnt += 1
        return learnt


@dataclass
class Resolved:
    """A request's context: the items we have, and the hashes we lack (ask for them)."""

    items: list[fpb.ContextItem] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def resolve(
    items: Sequence[fpb.PotentiallyCachedContextItem], cache: ContextCache, session: str
) -> Resolved:
    """The request's context items, whole ones as sent and hashed ones from `cache`."""
    if session:
        cache.learn(session, items)
    out = Resolved()
    entries: list[str] = []
    for entry in items:
        kind = entry.WhichOneof("item")
        if kind == "context_item":
            out.items.append(entry.context_item)
            entries.append("")
        elif kind == "context_item_hash":
            entries.append(entry.context_item_hash)
            found = cache.get(entry.context_item_hash)
            if found is None:
                out.missing.append(entry.context_item_hash)
            else:
                out.items.append(found)
    if out.missing and session:
        cache.asked(session, entries)
    return out


def budget_chars(context_window: int, max_output_tokens: int | None) -> int:
    """Characters of prompt a model's window takes with room left for the answer."""
    reserve = max_output_tokens or min(8192, context_window // 4)
    return max(MIN_BUDGET, (context_window - reserve) * CHARS_PER_TOKEN)


def nearest_lines(
    lines: Sequence[tuple[int, str]], first: int, last: int, budget: int
) -> list[tuple[int, str]]:
    """The numbered lines nearest the range first..last (inclusive) that fit `budget`
    characters, in file order: the edit's surroundings matter most, far lines least."""

    def distance(numbered: tuple[int, str]) -> int:
        number = numbered[0]
        return 0 if first <= number <= last else min(abs(number - first), abs(number - last))

    kept: list[tuple[int, str]] = []
    used = 0
    for numbered in sorted(lines, key=distance):
        cost = len(numbered[1]) + 8
        if used + cost > budget:
            break
        kept.append(numbered)
        used += cost
    return sorted(kept)


def clip(text: str, limit: int, note: str = "[… cut to fit the model's window]") -> str:
    """`text` within `limit` characters, saying so when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(note) - 1)] + "\n" + note


class FenceStripper:
    """Drops the Markdown fence a model may wrap code in, while the code streams: a first line
    that opens a fence and a last line that closes it. Holds back only what may still turn out
    to be a fence (the first line until it ends; a trailing partial line that starts a fence)."""

    def __init__(self) -> None:
        self._head = True  # still deciding whether the first line is a fence
        self._buffer = ""
        self._fenced = False

    def feed(self, text: str) -> str:
        self._buffer += text
        if self._head:
            stripped = self._buffer.lstrip()
            if len(stripped) < 3 and "```".startswith(stripped):
                return ""
            if stripped.startswith("```"):
                if "\n" not in stripped:
                    return ""
                self._fenced = True
                self._buffer = stripped.split("\n", 1)[1]
            self._head = False
        if self._fenced:  # the last non-blank line may be the closing fence: held
            lines = self._buffer.split("\n")
            last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
            if last is not None and "```".startswith(lines[last].lstrip()[:3]):
                self._buffer = "\n".join(lines[last:])
                return "".join(line + "\n" for line in lines[:last])
        out, self._buffer = self._buffer, ""
        return out

    def finish(self) -> str:
        rest, self._buffer = self._buffer, ""
        if self._head:
            return "" if rest.strip().startswith("```") else rest
        if self._fenced and rest.strip().startswith("```"):
            return ""
        return rest


class Continuation:
    """Terminal autocomplete's text from a model's streamed answer: what comes after the command
    typed so far, one line. Drops a fence, a leading `$ ` and an echo of the command itself (a
    model may repeat it before its continuation); `done` once the line has ended, and nothing
    after it is shown. Holds back only what may still turn out to be an echo."""

    def __init__(self, current: str) -> None:
        self.current = current
        self.done = False
        self._fences = FenceStripper()
        self._pending = ""  # the answer's start while it may still be an echo
        self._deciding = True
        self._started = False

    def feed(self, text: str) -> str:
        if self.done:
            return ""
        return self._line(self._fences.feed(text))

    def finish(self) -> str:
        """What was held back, once the answer ended."""
        out = "" if self.done else self._line(self._fences.finish())
        if self._deciding:
            out += self._decide("", final=True)
        return out

    def _line(self, text: str) -> str:
        if not self._started:  # a model's leading blank line is not its (empty) answer
            text = text.lstrip("\n")
            self._started = bool(text)
        head, newline, _ = text.partition("\n")
        self.done = bool(newline)
        return self._decide(head, final=self.done)

    def _decide(self, text: str, *, final: bool) -> str:
        if not self._deciding:
            return text
        self._pending += text
        seen = self._pending
        if not self.current.startswith("$") and seen.startswith("$ "):
            seen = seen[2:]
        elif not self.current.startswith("$") and seen == "$" and not final:
            return ""
        current = self.current
        if current and seen.startswith(current):
            return self._decided(seen[len(current) :])
        if current.startswith(seen) and seen:  # maybe the echo's start: held
            return "" if not final else self._decided("")  # half an echo is no suggestion
        if not seen and not final:
            return ""
        return self._decided(seen)

    def _decided(self, text: str) -> str:
        self._deciding = False
        self._pending = ""
        return text
