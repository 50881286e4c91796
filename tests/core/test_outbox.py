"""A run's outbox on its own: merged deltas are made from strings, final entries are bytes."""

from __future__ import annotations

import dataclasses

from google.protobuf.message import Message

from cursor_byok.core.outbox import Entry
from cursor_byok.core.outbox import Outbox
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

WINDOW = 0.015


def text(t: str, *, notice: bool = False) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=t, is_server_notice=notice))
    return pb.AgentServerMessage(interaction_update=update)


def thinking(t: str, style: int | None = None) -> pb.AgentServerMessage:
    delta = pb.ThinkingDeltaUpdate(text=t)
    if style is not None:
        delta.thinking_style = style
    return pb.AgentServerMessage(interaction_update=pb.InteractionUpdate(thinking_delta=delta))


def tokens(n: int) -> pb.AgentServerMessage:
    update = pb.InteractionUpdate(token_delta=pb.TokenDeltaUpdate(tokens=n))
    return pb.AgentServerMessage(interaction_update=update)


def messages_in(value: object) -> list[Message]:
    """Every protobuf message an entry holds, however deep in its fields."""
    if isinstance(value, Message):
        return [value]
    if dataclasses.is_dataclass(value):
        return [m for f in dataclasses.fields(value) for m in messages_in(getattr(value, f.name))]
    if isinstance(value, list | tuple):
        return [m for item in value for m in messages_in(item)]
    return []


def frames(outbox: Outbox) -> list[pb.AgentServerMessage]:
    """Every entry made final, as the client would parse it."""
    out = []
    for entry in outbox.entries:
        frame = entry.frame if entry.frame is not None else outbox.close(entry)
        out.append(pb.AgentServerMessage.FromString(frame[connect.HEADER_SIZE :]))
    return out


def test_many_merged_deltas_are_strings_until_final_then_bytes_only() -> None:
    outbox = Outbox()
    outbox.add(text("first"), now=0.0, window=WINDOW)  # out at once, and taken
    outbox.close(outbox.entries[0])
    parts = [f"{i:04d}" + "x" * 1020 for i in range(1000)]  # 1,000 deltas of 1 KB
    for i, part in enumerate(parts):
        outbox.add(text(part), now=0.001 + i * 1e-5, window=WINDOW)
    [_, merged] = outbox.entries
    assert merged.delta is not None and merged.frame is None
    assert messages_in(merged) == []  # no protobuf message held: the parts are strings
    assert merged.delta.parts == parts
    frame = outbox.close(merged)
    assert messages_in(merged) == [] and merged.delta is None and merged.frame is frame
    assert [f.WhichOneof("message") for f in frames(outbox)] == ["interaction_update"] * 2
    assert frames(outbox)[1] == text("".join(parts))


def test_a_merged_frame_is_the_message_a_merge_in_place_made() -> None:
    """Byte for byte what merging into the first message made, for each kind of delta."""
    cases = [
        [text("a"), text("b"), text("c")],
        [text("a", notice=True), text("b", notice=True)],
        [thinking("a", pb.THINKING_STYLE_DEFAULT), thinking("b", pb.THINKING_STYLE_DEFAULT)],
        [thinking("a"), thinking("b", 0)],  # unset and 0 are one style; the first's presence
        [tokens(3), tokens(4), tokens(5)],
    ]
    for deltas in cases:
        expected = pb.AgentServerMessage()
        expected.CopyFrom(deltas[0])
        kind = deltas[0].interaction_update.WhichOneof("message")
        held = getattr(expected.interaction_update, kind)
        for d in deltas[1:]:
            new = getattr(d.interaction_update, kind)
            if kind == "token_delta":
                held.tokens += new.tokens
            else:
                held.text += new.text
        outbox = Outbox()
        outbox.last_release = 0.0  # within the window: held, and joined
        for d in deltas:
            outbox.add(d, now=0.001, window=WINDOW)
        [entry] = outbox.entries
        assert outbox.close(entry) == connect.encode_frame_raw(0, expected.SerializeToString())


def test_deltas_that_differ_are_not_merged() -> None:
    outbox = Outbox()
    outbox.last_release = 0.0
    for message in [
        text("a"),
        text("notice", notice=True),  # a notice is its own frame
        thinking("t", pb.THINKING_STYLE_DEFAULT),
        thinking("u", pb.THINKING_STYLE_CODEX),  # another style
        tokens(1),
    ]:
        outbox.add(message, now=0.001, window=WINDOW)
    with_telemetry = text("late")
    with_telemetry.ttft_breakdown.server_first_token_ms = 1.0  # never merged, so never lost
    outbox.add(with_telemetry, now=0.001, window=WINDOW)
    outbox.add(text("after"), now=0.001, window=WINDOW)
    assert frames(outbox)[:5] == [
        text("a"),
        text("notice", notice=True),
        thinking("t", pb.THINKING_STYLE_DEFAULT),
        thinking("u", pb.THINKING_STYLE_CODEX),
        tokens(1),
    ]
    assert frames(outbox)[5] == with_telemetry and frames(outbox)[6] == text("after")


def test_a_final_frame_is_what_every_later_entry_keeps() -> None:
    """An entry followed by another is final at once, and bytes only."""
    outbox = Outbox()
    outbox.add(text("a"), now=0.0, window=WINDOW)
    outbox.add(
        pb.AgentServerMessage(exec_server_message=pb.ExecServerMessage(id=1)),
        now=0.0,
        window=WINDOW,
    )
    assert all(isinstance(e, Entry) and e.frame is not None for e in outbox.entries)
    assert all(messages_in(e) == [] for e in outbox.entries)
    assert outbox.final() == 2
