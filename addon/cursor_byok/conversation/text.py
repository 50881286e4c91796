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
