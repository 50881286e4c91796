"""Checkpoints name blobs the client already holds without making their bytes again."""

from __future__ import annotations

from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import encode_message
from cursor_byok.cursor.checkpoint import message_id
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_ids import blob_id
from cursor_byok.wire.blob_pieces import LARGE_BLOB


def test_message_id_is_the_blob_id_of_the_encoded_message() -> None:
    long = 'é"\\\n\u2028x' * 40_000  # escapes and multi-byte text in one piece past a slice
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": long}], "n": 1.5},
        {"role": "user", "content": "ünïcødé 🙂", "empty": [], "none": None, "map": {}},
        {"role": "tool", "content": [{"ok": True, "n": -3, "f": 1e300, "t": ("a", 2)}]},
        {"role": "tool", "content": {1: "int key", "x": ["\x00\x1f" * 70_000, False]}},
    ]
    for message in messages:
        assert message_id(message) == blob_id(encode_message(message))  # type: ignore[arg-type]


def _transcript() -> Transcript:
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    transcript.user_message = pb.UserMessage(text="q")
    transcript.append({"role": "user", "content": "q"})
    transcript.append({"role": "assistant", "content": "a" * 100_000})
    step = pb.ConversationStep()
    step.assistant_message.text = "a" * 100_000
    transcript.add_step(step)
    return transcript


def test_held_blobs_are_named_but_not_returned() -> None:
    transcript = _transcript()
    first, blobs = transcript.checkpoint()
    first = pb.ConversationStateStructure.FromString(first.SerializeToString())
    again, rest = transcript.checkpoint(have=set(blobs))
    assert again == first  # the same checkpoint, to the byte
    assert rest == {}  # but no blob made again
    held = set(first.root_prompt_messages_json)  # the client lacks only the step and turn
    third, missing = transcript.checkpoint(have=held)
    assert third == first
    assert set(missing) == set(blobs) - held
    assert all(blob_id(data) == ident for ident, data in missing.items())


def test_settled_steps_keep_only_their_ids() -> None:
    transcript = _transcript()
    first, blobs = transcript.checkpoint()
    expected = first.SerializeToString()
    assert transcript.settle_steps(set()) == {}  # nothing held: the step stays
    settled = transcript.settle_steps(set(blobs))
    assert list(settled.values()) == [transcript.steps[0]]
    assert isinstance(transcript.steps[0], bytes)  # the text is let go
    again, rest = transcript.checkpoint(have=set(blobs))
    assert again.SerializeToString() == expected and rest == {}
    # a new step (maybe at the freed step's address) is serialised afresh, never a stale id
    step = pb.ConversationStep()
    step.assistant_message.text = "b"
    transcript.add_step(step)
    _, new = transcript.checkpoint(have=set(blobs))
    assert step.SerializeToString() in new.values()


def test_long_blobs_come_in_pieces_with_the_same_ids_and_bytes() -> None:
    """A message or step as long as `LARGE_BLOB` is a `BlobPieces`, never made whole: same id,
    same bytes as before, and a checkpoint naming the same ids (issue 38)."""
    from cursor_byok.cursor.checkpoint import json_size
    from cursor_byok.wire.blob_pieces import LARGE_BLOB
    from cursor_byok.wire.blob_pieces import BlobPieces

    long = "é🙂 long answer\n" * (LARGE_BLOB // 8)
    message = {"role": "assistant", "content": [{"type": "text", "text": long}]}
    transcript = Transcript(pb.ConversationStateStructure(), [], "req-1")
    transcript.user_message = pb.UserMessage(text="q")
    transcript.append({"role": "user", "content": "q"})
    transcript.append(message)  # type: ignore[arg-type]
    step = pb.ConversationStep(assistant_message=pb.AssistantMessage(text=long))
    whole = step.SerializeToString()
    transcript.add_step(BlobPieces.of(lambda: [whole[:10], whole[10:]]))
    state, blobs = transcript.checkpoint()
    encoded = encode_message(message)  # type: ignore[arg-type]
    assert blobs[blob_id(encoded)].join() == encoded  # type: ignore[union-attr]
    assert blobs[blob_id(whole)].join() == whole  # type: ignore[union-attr]
    assert blob_id(encoded) in state.root_prompt_messages_json
    assert json_size(message) == len(encoded)
    assert all(isinstance(blobs[i], BlobPieces) for i in (blob_id(encoded), blob_id(whole)))
    small = [d for d in blobs.values() if not isinstance(d, BlobPieces)]
    assert small and all(len(d) < LARGE_BLOB for d in small)  # type: ignore[arg-type]
    # settled by id as any step is
    transcript.settle_steps(set(blobs))
    assert transcript.steps == [blob_id(whole)]


def test_small_messages_are_encoded_whole_large_ones_in_pieces(monkeypatch) -> None:
    """A checkpoint encodes every message of the turn so far: a small one by `json.dumps` at
    once, whether or not the client holds some blobs; a large one goes piece by piece (its
    JSON never made whole), whether its size is in a text part or elsewhere (a long tool-call
    argument: a file the model writes). The ids and the blobs are the same either way."""
    from cursor_byok.cursor import checkpoint

    transcript = _transcript()  # a small user message, a 100,000-character answer
    transcript.append({"role": "tool", "content": "t" * LARGE_BLOB})
    write = {
        "id": "c1",
        "type": "function",
        "function": {"name": "Write", "arguments": "w" * 40_000},
    }
    transcript.append({"role": "assistant", "content": "", "tool_calls": [write]})
    transcript.append({"role": "tool", "content": "ok"})
    expected_state, expected_blobs = transcript.checkpoint()
    in_pieces: list[object] = []
    whole = checkpoint.message_blob

    def counted(message):
        in_pieces.append(message)
        return whole(message)

    monkeypatch.setattr(checkpoint, "message_blob", counted)
    state, blobs = transcript.checkpoint(have={b"\x00" * 32})  # holds something, not these
    assert state == expected_state and blobs.keys() == expected_blobs.keys()
    assert [m["role"] for m in in_pieces] == ["assistant", "tool", "assistant"]  # type: ignore[index]


def test_a_long_tool_call_argument_is_a_blob_in_pieces() -> None:
    """The staged answer (`message_data`) follows the same rule as the checkpoint: a file the
    model writes, past LARGE_BLOB, is never one whole JSON copy."""
    from cursor_byok.cursor.checkpoint import message_data
    from cursor_byok.wire.blob_pieces import BlobPieces

    write = {
        "id": "c",
        "type": "function",
        "function": {"name": "Write", "arguments": "w" * LARGE_BLOB},
    }
    message = {"role": "assistant", "content": "", "tool_calls": [write]}
    ident, data = message_data(message)  # type: ignore[arg-type]
    assert isinstance(data, BlobPieces)
    assert ident == blob_id(encode_message(message)) == data.ident  # type: ignore[arg-type]
    small = {"role": "assistant", "content": "ok"}
    assert message_data(small) == (blob_id(encode_message(small)), encode_message(small))  # type: ignore[arg-type]
