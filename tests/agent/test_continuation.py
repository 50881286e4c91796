"""A turn whose run left a journal continues the partial answer (agent/continuation.py)."""

from __future__ import annotations

from pathlib import Path

from cursor_byok.agent import continuation
from cursor_byok.agent.turn import Turn
from cursor_byok.agent.turn import TurnOptions
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store import run_journal
from cursor_byok.store.blobs import BlobStore


class _Live:
    request_id = "req-2"

    def __init__(self) -> None:
        self.turn = None
        self.emitted: list[pb.AgentServerMessage] = []

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.emitted.append(message)


def _turn(tmp_path: Path, text: str = "q", *, resume: bool = False) -> tuple[Turn, _Live]:
    run = pb.AgentRunRequest(conversation_id="c", run_id="run-9")
    if resume:
        run.action.resume_action.SetInParent()
    else:
        run.action.user_message_action.user_message.text = text
    live = _Live()
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-2")
    blobs = BlobStore(tmp_path / "blobs")
    turn = Turn(live, run, blobs, transcript, set(), TurnOptions(journal=True))  # type: ignore[arg-type]
    return turn, live


def _start(turn: Turn) -> continuation.Carry | None:
    data_dir = turn.blobs.store.root.parent
    return continuation.start(turn.run_request, data_dir, turn.ui, turn.request_id)


def _dead_attempt(tmp_path: Path, *, checkpoint: bool = False) -> None:
    """A first attempt that streamed thinking and text, then its process died."""
    turn, _ = _turn(tmp_path)
    turn.carry = _start(turn)
    turn.thinking("Let me see. ")
    if checkpoint:
        turn.carry.checkpoint()  # type: ignore[union-attr]
    turn.text("The answer ")
    turn.text("is")
    turn.carry.close(keep=True)  # type: ignore[union-attr]


def test_the_retry_continues_the_partial_answer(tmp_path: Path) -> None:
    _dead_attempt(tmp_path)
    turn, live = _turn(tmp_path)
    carry = _start(turn)
    assert carry is not None and carry.partial == "The answer is"
    assert carry.thinking == "Let me see. "
    # the model gets the partial answer and the note; nothing was streamed again
    prompt = carry.prompt()
    assert prompt[0] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The answer is"}],
    }
    assert prompt[1]["content"][0]["text"] == continuation.CONTINUE_NOTE  # type: ignore[index]
    assert live.emitted == []
    turn.carry = carry
    turn.thinking("thinking again")  # the continuing call's thinking is not shown
    assert live.emitted == []
    message = {"role": "assistant", "content": [{"type": "reasoning", "text": "r"}]}
    message["content"].append({"type": "text", "text": " 42."})  # type: ignore[attr-defined]
    carry.merge(message)  # type: ignore[arg-type]
    assert message["content"][1] == {"type": "text", "text": "The answer is 42."}  # type: ignore[index]
    assert not carry.continuing and carry.prompt() == []
    # the checkpoint's steps hold what was shown: the partial thinking and text
    turn.text(" 42.")
    turn.ui.flush()
    shown = [s for s in turn.transcript.steps if isinstance(s, pb.ConversationStep)]
    assert [s.WhichOneof("message") for s in shown] == ["thinking_message", "assistant_message"]
    assert shown[1].assistant_message.text == "The answer is 42."
    # and the journal holds it all again, for a second crash
    left = run_journal.read(tmp_path, "run-9")
    assert left is not None and left.text == "The answer is 42."


def test_another_message_does_not_continue(tmp_path: Path) -> None:
    _dead_attempt(tmp_path)
    turn, _ = _turn(tmp_path, "another question")
    carry = _start(turn)
    assert carry is not None and not carry.continuing
    assert run_journal.read(tmp_path, "run-9").text == ""  # type: ignore[union-attr]


def test_after_a_checkpoint_only_a_resume_continues(tmp_path: Path) -> None:
    _dead_attempt(tmp_path, checkpoint=True)
    same, _ = _turn(tmp_path)
    assert not _start(same).continuing  # type: ignore[union-attr]
    _dead_attempt(tmp_path, checkpoint=True)
    resumed, _ = _turn(tmp_path, resume=True)
    carry = _start(resumed)
    assert carry is not None and carry.partial == "The answer is"
    assert carry.thinking == ""  # before the checkpoint: in it


def test_merge_without_text_puts_the_partial_before_the_tool_calls() -> None:
    carry = continuation.Carry(None, "Reading the file", "")
    message = {
        "role": "assistant",
        "content": [{"type": "tool-call", "toolCallId": "t", "toolName": "Read", "args": {}}],
    }
    carry.merge(message)  # type: ignore[arg-type]
    assert message["content"][0] == {"type": "text", "text": "Reading the file"}


def test_a_client_without_run_ids_is_keyed_by_its_conversation(tmp_path: Path) -> None:
    """@cursor/sdk 1.0.23 (cursor-sdk 0.1.9) sends no run_id: its retry is the same
    conversation with the same action."""
    turn, _ = _turn(tmp_path)
    turn.run_request.ClearField("run_id")
    assert continuation.journal_key(turn.run_request) == "conversation:c"
    turn.carry = _start(turn)
    turn.text("partial")
    turn.carry.close(keep=True)  # type: ignore[union-attr]
    again, _ = _turn(tmp_path)
    again.run_request.ClearField("run_id")
    carry = _start(again)
    assert carry is not None and carry.partial == "partial"
    bare = pb.AgentRunRequest()
    assert continuation.journal_key(bare) == ""
