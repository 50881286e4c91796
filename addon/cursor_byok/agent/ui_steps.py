"""What the UI was shown during a turn, folded into the ConversationSteps of its checkpoint.

Cursor rebuilds a finished turn from its steps (thinking, assistant text, completed tool calls),
so the turn keeps the same record of what it streamed: `StepRecorder` gathers the deltas and
closes them into steps, which it hands to the transcript (`add_step`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from collections.abc import Iterator

from cursor_byok.conversation.text import TextParts
from cursor_byok.conversation.text import TextView
from cursor_byok.cursor.checkpoint import timeless
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_pieces import LARGE_BLOB
from cursor_byok.wire.blob_pieces import BlobPieces
from cursor_byok.wire.blob_pieces import message_field
from cursor_byok.wire.blob_pieces import string_field
from cursor_byok.wire.varint import varint

Step = pb.ConversationStep | bytes | BlobPieces  # a message, a stored step's id, a long one


class StepRecorder:
    """Folds UI updates into steps; `add_step` puts a finished step into the transcript."""

    def __init__(self, add_step: Callable[[Step], None]) -> None:
        self._add_to_transcript = add_step
        # ranges of the provider's message parts where they hold the same text (`TextView`)
        self._text = TextView()
        self._thinking = TextView()
        self._shapes: dict[bytes, Step] = {}  # digest: see `_add`

    def record(self, variant: dict) -> None:
        """Fold one UI update into the steps: thinking, assistant text, completed tools."""
        if "thinking_delta" in variant:
            self._thinking.append(variant["thinking_delta"].text)
        elif "thinking_completed" in variant:
            self._flush_thinking(variant["thinking_completed"].thinking_duration_ms)
        elif "text_delta" in variant:
            self._flush_thinking()
            self._text.append(variant["text_delta"].text)
        elif "tool_call_completed" in variant:
            self.flush()
            self._add(pb.ConversationStep(tool_call=variant["tool_call_completed"].tool_call))

    def text(self, text: str, source: TextParts | None = None, end: int = 0) -> None:
        """Assistant text shown; with `source`, kept as a range of that record (the provider's
        message part, which the history keeps), not a copy."""
        self._flush_thinking()
        self._text.append(text, source, end)

    def thinking(self, text: str, source: TextParts | None = None, end: int = 0) -> None:
        self._thinking.append(text, source, end)

    def _flush_thinking(self, duration_ms: int = 0) -> None:
        if self._thinking.chars >= LARGE_BLOB:
            self._add_long(3, self._thinking.take_parts(), max(duration_ms, 0))
        elif self._thinking:
            step = pb.ConversationStep()  # filled in place: a message passed in is copied
            step.thinking_message.text = self._thinking.take()
            step.thinking_message.duration_ms = max(duration_ms, 0)
            self._add(step)

    def mark(self) -> tuple[int, int]:
        """Where the thinking and text gathered for the next steps stand now (`rewind`)."""
        return self._thinking.chars, self._text.chars

    def rewind(self, mark: tuple[int, int]) -> None:
        """Forget the thinking and text shown since `mark`: an abandoned model call's, which
        the conversation (history and checkpoint steps) must not keep."""
        self._thinking.truncate(mark[0])
        self._text.truncate(mark[1])

    def flush(self) -> None:
        """Close the thinking and text gathered so far into steps (before a checkpoint)."""
        self._flush_thinking()
        if self._text.chars >= LARGE_BLOB:
            self._add_long(1, self._text.take_parts())
        elif self._text:
            step = pb.ConversationStep()
            step.assistant_message.text = self._text.take()
            self._add(step)

    def _add(self, step: pb.ConversationStep) -> None:
        """Add a step; one that differs from an earlier step of this turn only in timings
        (`checkpoint.timeless`) reuses that step's bytes.

        Steps are content-addressed blobs, so equal bytes are SET once. Without this, whether two
        such steps (the same thinking text in two model calls) are one blob or two would depend on
        whether their measured durations happen to be equal, and the turn's frames (how many
        blob SETs, hence every later KV id) on the clock: replay could not reproduce them.
        """
        shape = hashlib.sha256(timeless(step)).digest()  # not the bytes: a copy of the text
        self._add_to_transcript(self._shapes.setdefault(shape, step))

    def _add_long(self, number: int, parts: list[str], duration_ms: int = 0) -> None:
        """A step of a long text (`assistant_message` 1 or `thinking_message` 3) made as its
        blob in pieces of the text's own strings: no protobuf message holds a copy of the
        text, and no serialised one (`BlobPieces`; the same bytes upb would make)."""
        text_size, text = string_field(1, parts)
        duration = varint(2 << 3) + varint(duration_ms) if duration_ms else b""

        def body() -> Iterator[bytes]:
            yield from text()
            if duration:
                yield duration

        step = BlobPieces.of(message_field(number, text_size + len(duration), body)[1])
        shape = step.ident
        if duration:  # `timeless`: the same step without its measured duration
            shape = BlobPieces.of(message_field(number, text_size, text)[1]).ident
        self._add_to_transcript(self._shapes.setdefault(shape, step))

    def settled(self, settled: dict[int, bytes]) -> None:
        """The transcript let go of these steps (id(step) -> blob id): so does this record."""
        if settled:
            shapes = self._shapes
            for shape, step in shapes.items():
                if not isinstance(step, bytes) and id(step) in settled:
                    shapes[shape] = settled[id(step)]

    def clear(self) -> None:
        self._shapes.clear()
