"""A long assistant text or thinking is recorded as its step's blob in pieces (no protobuf
message holds a copy of it): the same bytes as the message would make, and the same dedupe
of steps that differ only in their measured duration."""

from __future__ import annotations

from cursor_byok.agent.ui_steps import StepRecorder
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_pieces import LARGE_BLOB
from cursor_byok.wire.blob_pieces import BlobPieces

LONG = "a long answer é🙂, " * (LARGE_BLOB // 10)


def _recorder() -> tuple[StepRecorder, list]:
    steps: list = []
    return StepRecorder(steps.append), steps


def test_a_long_text_is_its_blob_in_pieces() -> None:
    ui, steps = _recorder()
    for start in range(0, len(LONG), 1000):
        ui.text(LONG[start : start + 1000])
    ui.flush()
    [step] = steps
    assert isinstance(step, BlobPieces)
    expected = pb.ConversationStep(assistant_message=pb.AssistantMessage(text=LONG))
    assert step.join() == expected.SerializeToString()


def test_a_short_text_stays_a_message() -> None:
    ui, steps = _recorder()
    ui.text("short")
    ui.flush()
    [step] = steps
    assert isinstance(step, pb.ConversationStep) and step.assistant_message.text == "short"


def test_long_thinking_keeps_its_duration_and_dedupes_by_text() -> None:
    ui, steps = _recorder()
    for duration in (1200, 3400):  # the same thinking twice, timed differently
        ui.thinking(LONG)
        ui.record({"thinking_completed": pb.ThinkingCompletedUpdate(thinking_duration_ms=duration)})
    first, second = steps
    assert second is first  # one blob: the frames must not depend on the clock
    expected = pb.ConversationStep(thinking_message=pb.ThinkingMessage(text=LONG, duration_ms=1200))
    assert first.join() == expected.SerializeToString()
