"""`ClientBlobs.put` of a long blob: written in pieces, then made from its file from then on,
so the steps holding it let go of the text they were made of (issue 38)."""

from __future__ import annotations

import asyncio

from fakes.store_faults import full_disk

from cursor_byok.agent.client_blobs import ClientBlobs
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_pieces import BlobPieces


class Live:
    """The run's side: every SET is acknowledged at once."""

    def __init__(self) -> None:
        self.sets: list[tuple[bytes, object, object]] = []

    def clock(self) -> float:
        return 0.0

    @property
    def client_last_seen(self) -> float:
        return 0.0

    def open_set_blob(self, blob_id: bytes, data, *, stored=None):
        self.sets.append((blob_id, data, stored))

        async def answer():
            return pb.KvClientMessage(set_blob_result=pb.SetBlobResult())

        return ("kv", len(self.sets)), answer()

    def describe_pending(self, keys) -> str:
        return str(keys)


def test_a_long_blob_is_rebased_on_its_file(tmp_path) -> None:
    parts = [b"piece %d;" % i * 1000 for i in range(100)]
    whole = b"".join(parts)
    blob = BlobPieces.of(lambda: iter(parts))
    store = BlobStore(tmp_path / "blobs")
    live = Live()
    blobs = ClientBlobs(live, store, set())  # type: ignore[arg-type]
    asyncio.run(blobs.put({blob.ident: blob}))
    [(ident, sent, stored)] = live.sets
    assert ident == blob.ident and sent is blob and stored is store  # no bytes made for it
    parts.clear()  # what it was made of is gone: it reads its file now
    assert blob.join() == whole
    assert blob.ident in blobs.settled and blob.ident in blobs.held


def test_a_failed_write_keeps_it_made_of_its_pieces(tmp_path) -> None:
    parts = [b"x" * 1000] * 10
    blob = BlobPieces.of(lambda: iter(parts))
    store = BlobStore(tmp_path / "blobs")

    full_disk(store)
    live = Live()
    blobs = ClientBlobs(live, store, set())  # type: ignore[arg-type]
    asyncio.run(blobs.put({blob.ident: blob}))
    [(_, sent, stored)] = live.sets
    assert sent is blob and stored is None  # the edge makes its frame of the pieces
    assert blobs.disk_error is not None and blob.join() == b"x" * 10_000


def test_a_put_with_nothing_to_store_takes_no_thread_hop(tmp_path, monkeypatch) -> None:
    """Most checkpoints of a turn's close add no blob: their put neither writes nor waits on
    a worker thread (two hops a turn, each a thread pool round trip on the event loop)."""
    hops: list[object] = []

    async def counted(function, *args):
        hops.append(function)
        return function(*args)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    live = Live()
    blobs = ClientBlobs(live, BlobStore(tmp_path / "blobs"), set())  # type: ignore[arg-type]
    asyncio.run(blobs.put({}))
    assert hops == [] and live.sets == []
    asyncio.run(blobs.put({b"\x01" * 32: b"data"}))
    assert len(hops) == 1 and len(live.sets) == 1  # a blob to store still goes the whole way
