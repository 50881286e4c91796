"""A frame the backlog let go of is made again from the blob store byte for byte (a blob SET; a
staged checkpoint around its message's JSON), and the store keeps that blob from pruning for as
long as the frame may be read."""

from __future__ import annotations

import gc
import os

from cursor_byok.core.outbox import set_blob_frame
from cursor_byok.core.outbox import set_blob_head
from cursor_byok.store.blobs import BlobFrame
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_ids import blob_id


def StoredBlobFrame(kv_id: int, ident: bytes, store: BlobStore) -> BlobFrame:
    """A blob SET's frame, as proxy/live_run.py makes it."""
    size = len(store.get(ident) or b"")
    return BlobFrame(set_blob_head(kv_id, ident, size), ident, b"", store)


def test_the_frame_is_made_again_byte_for_byte(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = os.urandom(70_000)
    ident = store.put(data)
    frame = StoredBlobFrame(7, ident, store)
    assert frame.load() == set_blob_frame(7, ident, data)


def test_a_blob_gone_or_corrupt_gives_none(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    ident = store.put(b"gone")
    path = store.root / ident.hex()[:2] / ident.hex()
    frame = StoredBlobFrame(1, ident, store)
    path.write_bytes(b"other")
    assert frame.load() is None
    path.unlink()
    assert frame.load() is None


def test_a_stowed_frames_blob_is_pinned_against_pruning_while_it_lives(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    kept = store.put(b"k" * 1000)
    other = store.put(b"o" * 1000)
    frame = StoredBlobFrame(1, kept, store)
    assert store.pinned() == {kept}
    deleted, _, _ = store.prune(0, store.pinned())
    assert deleted == 1 and kept in store and other not in store
    del frame
    gc.collect()
    assert store.pinned() == set()
    assert store.prune(0, store.pinned())[0] == 1 and kept not in store
    assert blob_id(b"k" * 1000) == kept


def test_housekeeping_never_prunes_a_pinned_blob(tmp_path) -> None:
    import asyncio

    from cursor_byok.proxy.housekeeping import Housekeeping

    store = BlobStore(tmp_path / "blobs")
    kept = store.put(b"k" * 1000)
    other = store.put(b"o" * 1000)
    frame = StoredBlobFrame(1, kept, store)
    keeper = Housekeeping()
    keeper.limit = 0
    asyncio.run(keeper._prune(store))
    assert kept in store and other not in store
    assert frame.blob_id == kept
