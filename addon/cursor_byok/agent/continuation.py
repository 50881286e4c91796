"""A run retried after the proxy died continues its answer instead of starting it again.

The client keeps every delta a dead attempt showed it and appends the retry's to them (it keys
text on nothing: protocol.md §19.1). So a turn whose run left a journal (`store/run_journal.py`)
and whose action is the one that journal started from (or a `resume_action`, when a checkpoint
went out since) does not stream that text again: the first model call gets the conversation,
the partial answer as the assistant's and a short user note to continue exactly where it
stopped; its thinking is not shown (the client's view has the partial thinking, and a new
thinking step would split the answer in two steps there); and the partial text is put in front
of the answer's, so the history and the checkpoint hold one assistant message. The user note is
the same for every provider (an assistant prefill would be Anthropic's natural fit, but it is
refused with extended thinking and continues nothing on OpenAI's APIs).

`Carry` is the turn's side of the journal: every delta shown is written to it, a checkpoint
empties it, the turn's end deletes it.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from cursor_byok.agent.ui_steps import StepRecorder
from cursor_byok.conversation.history_format import AssistantHistoryMessage
from cursor_byok.conversation.history_format import HistoryMessage
from cursor_byok.cursor import actions
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.run_journal import Leftover
from cursor_byok.store.run_journal import RunJournal
from cursor_byok.store.run_journal import RunStart
from cursor_byok.store.run_journal import read

log = logging.getLogger(__name__)

CONTINUE_NOTE = (
    "(Your previous answer above was cut off by a connection failure; the user has already "
    "seen it exactly as it stands. Continue it exactly where it stopped, mid-word or "
    "mid-sentence if need be: do not repeat any of it, do not acknowledge this note.)"
)


def fingerprint(run_request: pb.AgentRunRequest) -> str:
    """The action a run started from, as a short hash (a retry re-sends the same one)."""
    action = run_request.action.SerializeToString(deterministic=True)
    return hashlib.sha256(action).hexdigest()[:32]


def journal_key(run_request: pb.AgentRunRequest) -> str:
    """What a retry of the run has in common with it: its `run_id` (@cursor/sdk 1.1.0 puts
    the first attempt's request id there), else, for a client that sends none (@cursor/sdk
    1.0.23, in `cursor-sdk` 0.1.9), its conversation (one run at a time runs in it)."""
    if run_request.run_id:
        return run_request.run_id
    if run_request.conversation_id:
        return f"conversation:{run_request.conversation_id}"
    return ""


class Carry:
    """The turn's journal, and the partial answer of a dead attempt it continues (if any)."""

    __slots__ = ("journal", "partial", "thinking")

    def __init__(self, journal: RunJournal | None, partial: str = "", thinking: str = "") -> None:
        self.journal = journal
        self.partial = partial  # text the client was shown, not yet in the history
        self.thinking = thinking  # thinking it was shown; only its step keeps it
        # (both "" once the first model call answered)

    @property
    def continuing(self) -> bool:
        """Whether the next model call continues a partial answer (its thinking not shown)."""
        return bool(self.partial or self.thinking)

    def text(self, text: str) -> None:
        if self.journal is not None:
            self.journal.text(text)

    def show_thinking(self, text: str) -> bool:
        """Journal thinking about to be shown; False while continuing (not shown then)."""
        if self.partial or self.thinking:
            return False
        if self.journal is not None:
            self.journal.thinking(text)
        return True

    def checkpoint(self) -> None:
        if self.journal is not None:
            self.journal.checkpoint()

    def pause(self) -> None:
        """The turn waits on the client: the journal holds no descriptor meanwhile."""
        if self.journal is not None:
            self.journal.pause()

    def close(self, *, keep: bool = False) -> None:
        if self.journal is not None:
            self.journal.close(keep=keep)

    def prompt(self) -> list[HistoryMessage]:
        """What the continuing call gets after the conversation (nothing without partial text:
        thinking alone is not given back, it has no provider signature)."""
        if not self.partial:
            return []
        return [
            {"role": "assistant", "content": [{"type": "text", "text": self.partial}]},
            {"role": "user", "content": [{"type": "text", "text": CONTINUE_NOTE}]},
        ]

    def merge(self, message: AssistantHistoryMessage) -> None:
        """The continuing call answered: its message starts with the partial text (one
        assistant message in the history); the call after it is an ordinary one."""
        partial, self.partial, self.thinking = self.partial, "", ""
        if not partial:
            return
        content = message["content"]
        for part in content:
            if part["type"] == "text":
                part["text"] = partial + part["text"]
                return
        at = next((i for i, p in enumerate(content) if p["type"] != "reasoning"), len(content))
        content.insert(at, {"type": "text", "text": partial})


def start(
    run_request: pb.AgentRunRequest, data_dir: Path, ui: StepRecorder, request_id: str
) -> Carry | None:
    """A turn's carry: a journal for its run (in `data_dir`), continuing the partial answer a
    dead attempt of the same run left when the run request matches it (what was shown goes
    into `ui`, the turn's steps); None for a run without an id."""
    run_id = journal_key(run_request)
    if not run_id:
        return None
    leftover = read(data_dir, run_id)
    fresh = RunStart(run_id, run_request.conversation_id, fingerprint(run_request))
    if leftover is None or not _matches(leftover, fresh, actions.resolve(run_request).kind):
        if leftover is not None:
            log.info("turn %s: run %s left a journal it does not match", request_id, run_id)
        return Carry(RunJournal.open(data_dir, fresh))
    journal = RunJournal.open(data_dir, leftover.start)
    carry = Carry(journal, leftover.text, leftover.thinking)
    if leftover.thinking:  # shown before: in the checkpoint's steps, and journaled again
        ui.thinking(leftover.thinking)
        if journal is not None:
            journal.thinking(leftover.thinking)
    if leftover.text:
        ui.text(leftover.text)
        if journal is not None:
            journal.text(leftover.text)
    log.info(
        "turn %s: run %s continues after a dead attempt (%d chars of text, %d of thinking "
        "already shown)",
        request_id,
        run_id,
        len(leftover.text),
        len(leftover.thinking),
    )
    return carry


def _matches(leftover: Leftover, fresh: RunStart, kind: str) -> bool:
    """Whether this run request is the client's retry of the journal's attempt."""
    start = leftover.start
    if start.conversation_id != fresh.conversation_id:
        return False
    if start.after_checkpoint:
        return kind == actions.RESUME
    return start.action == fresh.action
