"""A long step's blob made in pieces of its text's strings: the very bytes upb makes of the
step, its id and size from one pass, and made again from elsewhere once `rebase`d."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.blob_pieces import BlobPieces
from cursor_byok.wire.blob_pieces import message_field
from cursor_byok.wire.blob_pieces import string_field
from cursor_byok.wire.blob_pieces import utf8_pieces
from cursor_byok.wire.varint import varint

PARTS = ["plain ascii " * 5000, "é🙂 wide text " * 7000, "", "tail"]


def _step(number: int, parts: list[str], duration: int = 0) -> BlobPieces:
    size, text = string_field(1, parts)
    extra = varint(2 << 3) + varint(duration) if duration else b""

    def body() -> Iterator[bytes]:
        yield from text()
        yield extra

    return BlobPieces.of(message_field(number, size + len(extra), body)[1])


def test_text_and_thinking_steps_are_upb_bytes() -> None:
    whole = "".join(PARTS)
    text = pb.ConversationStep(assistant_message=pb.AssistantMessage(text=whole))
    blob = _step(1, PARTS)
    assert blob.join() == text.SerializeToString()
    assert blob.size == len(text.SerializeToString())
    assert blob.ident == hashlib.sha256(text.SerializeToString()).digest()
    thinking = pb.ConversationStep(
        thinking_message=pb.ThinkingMessage(text=whole, duration_ms=1234)
    )
    assert _step(3, PARTS, 1234).join() == thinking.SerializeToString()


def test_an_empty_text_is_left_out_as_proto3_does() -> None:
    empty = pb.ConversationStep(assistant_message=pb.AssistantMessage())
    assert _step(1, ["", ""]).join() == empty.SerializeToString() == b"\x0a\x00"


def test_utf8_slices_never_split_a_character() -> None:
    parts = ["🙂" * 100_000]
    assert b"".join(utf8_pieces(parts, 7)) == parts[0].encode()


def test_rebase_makes_the_same_bytes_from_elsewhere() -> None:
    parts = list(PARTS)
    blob = _step(1, parts)
    ident, size = blob.ident, blob.size
    saved = blob.join()
    parts.clear()  # the strings it was made of are gone: it must not read them again
    blob.rebase(lambda: iter([saved[:100], saved[100:]]))
    assert (blob.ident, blob.size) == (ident, size)
    assert blob.join() == saved
