"""The turn's frames do not depend on the clock: steps equal but for timings are one blob."""

from __future__ import annotations

from cursor_byok.agent.turn import Turn
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import clear_volatile
from cursor_byok.cursor.checkpoint import has_volatile
from cursor_byok.cursor.checkpoint import timeless
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore


class _Live:
    """Just enough of a RunChannel for Turn's UI updates."""

    request_id = "req-1"

    def __init__(self) -> None:
        self.turn = None
        self.emitted: list[pb.AgentServerMessage] = []

    def emit(self, message: pb.AgentServerMessage) -> None:
        self.emitted.append(message)


def _close_blobs(tmp_path, durations: list[int]) -> tuple[list[bytes], pb.ConversationStep]:
    """Two model calls thinking the same text for `durations` ms, then the turn's blobs."""
    run = pb.AgentRunRequest(conversation_id="c")
    run.action.user_message_action.user_message.text = "q"
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    turn = Turn(_Live(), run, BlobStore(tmp_path / "blobs"), transcript, set())  # type: ignore[arg-type]
    turn.transcript.user_message = turn.instruction.user_message
    for ms in durations:
        turn.thinking("Look first.")
        turn.update(thinking_completed=pb.ThinkingCompletedUpdate(thinking_duration_ms=ms))
        turn.text("ok")
        turn.ui.flush()
    _state, blobs = turn.checkpoint()
    return list(blobs), transcript.steps[-2]


def test_equal_steps_are_one_blob_whatever_their_durations(tmp_path) -> None:
    measured, thinking = _close_blobs(tmp_path / "a", [43, 28])  # a recording
    fast, _ = _close_blobs(tmp_path / "b", [1, 1])  # a replay: everything takes 1 ms
    assert len(measured) == len(fast)  # as many blob SETs, hence the same KV ids after them
    assert thinking.thinking_message.duration_ms == 43  # the first measurement is kept


def test_timeless_ignores_only_clock_fields() -> None:
    a = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text="x", duration_ms=5))
    b = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text="x", duration_ms=9))
    c = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text="y", duration_ms=5))
    assert timeless(a) == timeless(b) != timeless(c)
    assert a.thinking_message.duration_ms == 5  # the argument is left as it was


def test_has_volatile_sees_clock_fields_anywhere_in_the_tree() -> None:
    """`timeless` skips its copy when `has_volatile` says nothing would change: so it must see
    every clock field a copy would clear, nested, repeated or in a map."""
    shell = pb.ConversationStep()
    shell.tool_call.shell_tool_call.result.success.execution_time = 12
    todos = pb.ConversationStep()
    todos.tool_call.update_todos_tool_call.args.todos.add(content="a", created_at=3)
    todo_free = pb.ConversationStep()
    todo_free.tool_call.update_todos_tool_call.args.todos.add(content="a")
    plain = pb.ConversationStep(assistant_message=pb.AssistantMessage(text="x" * 1000))
    state = pb.ConversationStateStructure()
    state.subagent_runs_by_parent_tool_call_id["c"].SetInParent()
    for message in (shell, todos, todo_free, plain, state):
        copy = type(message)()
        copy.CopyFrom(message)
        clear_volatile(copy)
        changed = copy.SerializeToString(deterministic=True) != message.SerializeToString(
            deterministic=True
        )
        assert has_volatile(message) == changed, message
    assert timeless(plain) == plain.SerializeToString(deterministic=True)


async def test_blob_files_are_written_off_the_event_loop(tmp_path) -> None:
    """Issue 27 item 4: a blob the turn stores (here one the client sent) is written by a
    worker thread, so a slow disk never stalls the proxy's event loop."""
    import threading

    from cursor_byok.wire.blob_ids import blob_id

    threads: list[int] = []

    class Recorded(BlobStore):
        def _store(self, ident: bytes, data: bytes) -> None:
            threads.append(threading.get_ident())
            super()._store(ident, data)

    run = pb.AgentRunRequest(conversation_id="c")
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    store = Recorded(tmp_path / "blobs")
    turn = Turn(_Live(), run, store, transcript, set())  # type: ignore[arg-type]
    data = b"a blob the client sent"
    assert await turn.blobs._accept(blob_id(data), data) == data
    assert threads and threading.get_ident() not in threads
    assert store.get(blob_id(data)) == data


def test_text_and_thinking_deltas_are_the_messages_they_always_were(tmp_path) -> None:
    """`Turn.text`/`thinking` make their message in place (no copies), other updates copy
    their variant once: the same bytes as the message built from its parts, with or without
    a mirror (a subagent's parent card)."""
    run = pb.AgentRunRequest(conversation_id="c")
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    live = _Live()
    turn = Turn(live, run, BlobStore(tmp_path / "blobs"), transcript, set())  # type: ignore[arg-type]
    mirrored: list[pb.InteractionUpdate] = []
    for mirror in (None, mirrored.append):
        turn.mirror_to(mirror)
        turn.thinking("hmm")
        turn.text("hello")
        turn.update(step_started=pb.StepStartedUpdate())  # empty: still present
    thinking = pb.ThinkingDeltaUpdate(text="hmm", thinking_style=pb.THINKING_STYLE_DEFAULT)
    expected = [
        pb.AgentServerMessage(interaction_update=pb.InteractionUpdate(thinking_delta=thinking)),
        pb.AgentServerMessage(
            interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text="hello"))
        ),
        pb.AgentServerMessage(
            interaction_update=pb.InteractionUpdate(step_started=pb.StepStartedUpdate())
        ),
    ] * 2
    assert [m.SerializeToString() for m in live.emitted] == [
        m.SerializeToString() for m in expected
    ]
    kinds = ["thinking_delta", "text_delta", "step_started"]
    assert [u.WhichOneof("message") for u in mirrored] == kinds
