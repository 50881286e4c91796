"""The staged checkpoint goes out as `staged_frame` makes it, with its message's blob on disk
first so the run can let go of the frame and make it again from there."""

from __future__ import annotations

import asyncio

from fakes.store_faults import full_disk

from cursor_byok.agent.client_blobs import ClientBlobs
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import encode_message
from cursor_byok.cursor.checkpoint import staged_frame
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_ids import blob_id
from cursor_byok.wire.blob_pieces import LARGE_BLOB

PENDING = {"role": "assistant", "content": [{"type": "text", "text": "answer é🙂\n" * 9000}]}


class Live:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes | None, object]] = []
        self.sizes: list[int] = []

    def emit_frame(self, frame: bytes | None, *, stored=None, size: int = 0) -> None:
        self.sent.append((frame, stored))
        self.sizes.append(size)


def _state(pending=PENDING) -> pb.ConversationStateStructure:
    transcript = Transcript(pb.ConversationStateStructure(agent_type="ide"), [], "r")
    transcript.user_message = pb.UserMessage(text="q")
    transcript.append({"role": "user", "content": "q"})
    transcript.append(pending)
    state, _ = transcript.checkpoint(pending=pending, inline=False)
    return state


def test_the_frame_is_staged_frames_and_made_again_from_the_blob(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    live = Live()
    blobs = ClientBlobs(live, store, set())  # type: ignore[arg-type]
    state = _state()
    asyncio.run(blobs.publish_staged(state, PENDING))  # type: ignore[arg-type]
    [(frame, stored)] = live.sent
    assert frame == staged_frame(state, PENDING)  # type: ignore[arg-type]
    ident = blob_id(encode_message(PENDING))  # type: ignore[arg-type]
    assert ident in store and stored is not None
    assert stored.load() == frame  # type: ignore[attr-defined]
    assert store.pinned() == {ident}


def test_a_failed_write_keeps_the_frame(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")

    full_disk(store)
    live = Live()
    blobs = ClientBlobs(live, store, set())  # type: ignore[arg-type]
    state = _state()
    asyncio.run(blobs.publish_staged(state, PENDING))  # type: ignore[arg-type]
    [(frame, stored)] = live.sent
    assert frame == staged_frame(state, PENDING) and stored is None  # type: ignore[arg-type]
    assert blobs.disk_error is not None


def test_a_long_message_is_written_in_pieces_and_its_frame_made_by_the_stream(tmp_path) -> None:
    """Past `LARGE_BLOB` the message's JSON is never made whole here: written to the data dir
    in pieces, and the frame left for the stream that takes it to read from there."""
    long = {"role": "assistant", "content": [{"type": "text", "text": "é🙂 " * LARGE_BLOB}]}
    store = BlobStore(tmp_path / "blobs")
    live = Live()
    blobs = ClientBlobs(live, store, set())  # type: ignore[arg-type]
    state = _state(long)
    asyncio.run(blobs.publish_staged(state, long))  # type: ignore[arg-type]
    [(frame, stored)] = live.sent
    expected = staged_frame(state, long)  # type: ignore[arg-type]
    assert frame is None and live.sizes == [len(expected)]
    assert stored.load() == expected  # type: ignore[union-attr]
