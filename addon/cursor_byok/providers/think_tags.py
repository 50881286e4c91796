"""Split a leading `<think>…</think>` block out of streamed content (sans-IO).

Some local servers put reasoning inline in `content`. Only a block at the very start of the
answer (after optional whitespace) counts, so an answer that merely mentions the tag is left
alone. Tags may be split across deltas: a possible tag prefix is held back until the next
delta decides it. The reasoning is shown as thinking and never sent back (providers.md §3).
"""

from __future__ import annotations

from typing import Literal

OPEN = "<think>"
CLOSE = "</think>"

Piece = tuple[Literal["text", "reasoning"], str]


class ThinkTagSplitter:
    def __init__(self) -> None:
        self._state: Literal["start", "think", "after", "text"] = "start"
        self._buf = ""
        # leading whitespace before anything else, in pieces: a stream of 100k blank deltas
        # must not strip a growing buffer 100k times
        self._lead: list[str] = []

    @property
    def settled(self) -> bool:
        """Past any leading block: from now on `feed` returns its input as text, unchanged."""
        return self._state == "text"

    def feed(self, text: str) -> list[Piece]:
        if self._state == "text":
            return [("text", text)] if text else []
        out: list[Piece] = []
        if self._state == "start":
            if not self._buf:  # only whitespace so far: kept apart, never stripped again
                stripped = text.lstrip()
                self._lead.append(text[: len(text) - len(stripped)])
                text = stripped
            self._buf += text  # a tag prefix (under len(OPEN) chars) and the new text
            stripped = self._buf
            if len(stripped) < len(OPEN) and OPEN.startswith(stripped):
                return out  # only whitespace or a tag prefix so far: undecided
            if not stripped.startswith(OPEN):
                self._state = "text"
                buf, self._buf = "".join(self._lead) + self._buf, ""
                self._lead.clear()
                return [("text", buf)]
            self._state = "think"
            self._lead.clear()
            self._buf = stripped[len(OPEN) :]
        else:
            self._buf += text
        if self._state == "think":
            end = self._buf.find(CLOSE)
            if end < 0:
                keep = _partial_suffix(self._buf, CLOSE)
                emit, self._buf = (
                    self._buf[: len(self._buf) - keep],
                    self._buf[len(self._buf) - keep :],
                )
                if emit:
                    out.append(("reasoning", emit))
                return out
            if end:
                out.append(("reasoning", self._buf[:end]))
            self._state = "after"
            self._buf = self._buf[end + len(CLOSE) :]
        # after the closing tag: drop the whitespace that separates reasoning from the answer
        rest = self._buf.lstrip()
        self._buf = ""
        if rest:
            self._state = "text"
            out.append(("text", rest))
        return out

    def flush(self) -> list[Piece]:
        """End of content: release anything held back."""
        buf, self._buf = self._buf, ""
        if self._state == "start":
            buf = "".join(self._lead) + buf
            self._lead.clear()
        if not buf:
            return []
        if self._state == "think":
            return [("reasoning", buf)]  # unclosed block: it was reasoning all along
        if self._state == "start":
            return [("text", buf)]
        return []


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0
