"""What the UI was shown during a turn, folded into the ConversationSteps of its checkpoint.

Cursor rebuilds a finished turn from its steps (thinking, assistant text, completed tool calls),
so the turn keeps the same record of what it streamed: `StepRecorder` gathers the deltas and
closes them into steps, which it hands to the transcript (`add_step`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from cursor_byok.conversation.text import TextParts
from cursor_byok.cursor.checkpoint import timeless
from cursor_byok.pb import agent_v1_pb2 as pb


class StepRecorder:
    """Folds UI updates into steps; `add_step` puts a finished step into the transcript."""

    def __init__(self, add_step: Callable[[pb.ConversationStep | bytes], None]) -> None:
        self._add_to_transcript = add_step
        self._text = TextParts()
        self._thinking = TextParts()
        self._shapes: dict[bytes, pb.ConversationStep | bytes] = {}  # digest: see `_add`

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

    def text(self, text: str) -> None:
        """Assistant text shown (the caller's string: the history holds it too, not a copy)."""
        self._flush_thinking()
        self._text.append(text)

    def thinking(self, text: str) -> None:
        self._thinking.append(text)

    def _flush_thinking(self, duration_ms: int = 0) -> None:
        if self._thinking:
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
        if self._text:
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

    def settled(self, settled: dict[int, bytes]) -> None:
        """The transcript let go of these steps (id(step) -> blob id): so does this record."""
        if settled:
            shapes = self._shapes
            for shape, step in shapes.items():
                if not isinstance(step, bytes) and id(step) in settled:
                    shapes[shape] = settled[id(step)]

    def clear(self) -> None:
        self._shapes.clear()
