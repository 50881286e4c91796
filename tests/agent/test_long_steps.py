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


def test_the_shown_text_is_not_a_second_copy_of_the_answer() -> None:
    """A model's 20-character deltas, through the adapter into the UI's record: one copy of
    the answer in memory while it streams (the UI's record is ranges of the message part the
    history keeps), where there were two (issue 38)."""
    import json
    import tracemalloc

    from cursor_byok.providers import TextDelta
    from cursor_byok.providers.openai_chat import ChatStreamState
    from cursor_byok.providers.sse import SseParser

    size = 1 << 20
    delta = "0123456789abcdefghi "
    body = {"choices": [{"index": 0, "delta": {"content": delta}}]}
    event = b"data: " + json.dumps(body).encode()
    chunk = (event + b"\n\n") * 400  # 8 KiB of text a read
    state, parser = ChatStreamState(provider="p", model="m"), SseParser()
    ui, steps = _recorder()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(size // (400 * len(delta))):
            for sse in parser.feed(chunk):
                for shown in state.on_event(sse):
                    assert isinstance(shown, TextDelta)
                    ui.text(shown.text, shown.source, shown.end)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 1.3 * size  # two records of the text: ~2.1 MiB
    ui.flush()
    [step] = steps
    assert isinstance(step, BlobPieces)
    assert (
        step.join()
        == pb.ConversationStep(
            assistant_message=pb.AssistantMessage(text=delta * (size // len(delta) // 400 * 400))
        ).SerializeToString()
    )
