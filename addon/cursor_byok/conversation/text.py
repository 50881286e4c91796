"""Text that grows by small pieces (a model's deltas), kept in few large strings.

A Python string costs about 50 bytes besides its characters, so a list of 20-character deltas
holds about 4 bytes per character of text; every `BLOCK` characters the pieces gathered are
joined into one string and appended to the current large string, so the text costs about what
its characters do, whatever the delta sizes (issue 27 item 1). The large string grows in place
(`+=` on a string nothing else holds: CPython reallocs it, and glibc moves no bytes to grow a
block it mapped) up to `LARGE` characters, then a new one begins: glibc gives a block of 1 MiB or
more pages of its own and takes them back when it is freed (`proxy/memory.py`), while small
blocks come from the heap, which keeps what is freed. Joining 8 KiB blocks into a large string
all at once held both for a moment (1 MiB more per MiB, for each of the turn's two records of
the text at the same delta: issue 38).
"""

from __future__ import annotations

BLOCK = 8192  # characters gathered before the pieces are joined into one string
LARGE = 1024 * 1024 + 4096  # characters of a large string (over glibc's mmap bound)


class TextParts:
    """Append pieces, take the whole once: `"".join(pieces)` with a bounded overhead."""

    __slots__ = ("_current", "_large", "_pending", "_pieces", "chars")

    def __init__(self) -> None:
        self._large: list[str] = []  # strings of at least LARGE characters
        self._current = ""  # the large string being grown, block by block
        self._pieces: list[str] = []
        self._pending = 0  # characters in `_pieces`
        self.chars = 0

    def __bool__(self) -> bool:
        return self.chars > 0

    def append(self, text: str) -> None:
        if not text:
            return
        self._pieces.append(text)
        self._pending += len(text)
        self.chars += len(text)
        if self._pending >= BLOCK:
            block = "".join(self._pieces)
            self._pieces = []
            self._pending = 0
            current, self._current = self._current, ""
            current += block  # in place: this local is its only holder
            del block
            if len(current) >= LARGE:
                self._large.append(current)
            else:
                self._current = current

    def truncate(self, chars: int) -> None:
        """Keep the first `chars` characters only (what came after them is forgotten)."""
        if chars < self.chars:
            kept = self.take()[:chars]
            self.append(kept)

    def take(self) -> str:
        """The text so far, joined; the parts are empty after.

        Joined by `+=` on a string nothing else holds, which CPython grows in place (a large
        one by `realloc`, which moves no bytes), each block let go once appended: at most one
        block more than the text at any time, where `"".join` holds the blocks and the whole
        at once (two copies of a long answer for a moment)."""
        blocks = self.take_parts()
        if not blocks:
            return ""
        blocks.reverse()
        text = blocks.pop()
        while blocks:
            text += blocks.pop()
        return text

    def seal(self) -> str:
        """The whole text, joined in place (as `take`), which stays the content: a record that
        shows ranges of this one (`TextView`) then reads the same string, not a copy. Nothing
        is appended after."""
        text = self.take()
        if text:
            self._large = [text]
            self.chars = len(text)
        return text

    def view(self, start: int, end: int) -> list[str]:
        """Characters `start` to `end` as the strings they are kept in, without taking them:
        a string wholly inside the range is itself, not a copy (only the range's two ends are
        sliced)."""
        out: list[str] = []
        if end <= start:
            return out
        at = 0
        for stored in (*self._large, self._current, *self._pieces):
            size = len(stored)
            if at + size > start and size:
                lo, hi = max(start - at, 0), min(end - at, size)
                out.append(stored if lo == 0 and hi == size else stored[lo:hi])
            at += size
            if at >= end:
                break
        return out

    def take_parts(self) -> list[str]:
        """The text so far as the strings it is kept in, not joined (for whoever can use it in
        pieces: a long step's blob); the parts are empty after."""
        blocks, self._large = self._large, []
        if self._current:
            blocks.append(self._current)
        blocks.extend(self._pieces)
        self._current = ""
        self._pieces = []
        self._pending = self.chars = 0
        return blocks


class TextView:
    """Text made of ranges of other records (`TextParts`), not a copy of them.

    The turn keeps two records of what the model wrote: the provider's message for the history,
    and what the UI was shown, for the checkpoint's steps. They are nearly always the same
    characters, so the UI's record is ranges of the provider's (each delta says where it is
    there: `append(text, source, end)`), and text with no such record (a note the proxy adds,
    a delta relayed from elsewhere) is kept in a `TextParts` of its own. Issue 38: for small
    deltas the second record was a whole second copy of the answer while it streamed.
    """

    __slots__ = ("_spans", "chars")

    def __init__(self) -> None:
        self._spans: list[_Span] = []
        self.chars = 0

    def __bool__(self) -> bool:
        return self.chars > 0

    def append(self, text: str, source: TextParts | None = None, end: int = 0) -> None:
        """Add `text`; with `source`, it is `source`'s characters up to `end` (kept as that
        range); without, it is kept here."""
        if not text:
            return
        spans = self._spans
        last = spans[-1] if spans else None
        if source is None:
            if last is None or not last.own:
                last = _Span(TextParts(), 0, 0, own=True)
                spans.append(last)
            last.source.append(text)
            last.end += len(text)
        else:
            start = end - len(text)
            if last is not None and last.source is source and last.end == start:
                last.end = end
            else:
                spans.append(_Span(source, start, end))
        self.chars += len(text)

    def truncate(self, chars: int) -> None:
        """Keep the first `chars` characters only (what came after them is forgotten)."""
        if chars >= self.chars:
            return
        spans = self._spans
        total = self.chars
        while spans and total - (spans[-1].end - spans[-1].start) >= chars:
            total -= spans[-1].end - spans[-1].start
            spans.pop()
        if spans and total > chars:
            last = spans[-1]
            last.end -= total - chars
            if last.own:  # what is appended here next follows the kept characters
                last.source.truncate(last.end)
        self.chars = chars

    def take(self) -> str:
        """The text so far, joined (a single range is its source's own string); empty after."""
        parts = self.take_parts()
        return parts[0] if len(parts) == 1 else "".join(parts)

    def take_parts(self) -> list[str]:
        """The text so far as strings of its sources (for a long step's blob); empty after."""
        parts: list[str] = []
        for span in self._spans:
            parts += span.source.view(span.start, span.end)
        self._spans = []
        self.chars = 0
        return parts


class _Span:
    """Characters `start` to `end` of `source` (`own`: a record only the view holds)."""

    __slots__ = ("end", "own", "source", "start")

    def __init__(self, source: TextParts, start: int, end: int, *, own: bool = False) -> None:
        self.source = source
        self.start = start
        self.end = end
        self.own = own
