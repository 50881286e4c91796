"""The blob store survives a restart and never returns content that does not match its id."""

from __future__ import annotations

import hashlib

import pytest

from cursor_byok.store.blobs import BlobStore
from cursor_byok.wire.blob_ids import BlobMismatch


def test_put_get_and_restart(tmp_path) -> None:
    store = BlobStore(tmp_path)
    ident = store.put(b"hello")
    assert ident == hashlib.sha256(b"hello").digest()
    assert store.put(b"hello") == ident
    assert BlobStore(tmp_path).get(ident) == b"hello"  # a new process sees it
    assert ident in store
    assert store.get(hashlib.sha256(b"other").digest()) is None
    assert store.get(b"short") is None


def test_verified_put_rejects_mismatch(tmp_path) -> None:
    store = BlobStore(tmp_path)
    with pytest.raises(BlobMismatch):
        store.put_verified(hashlib.sha256(b"a").digest(), b"b")
    with pytest.raises(BlobMismatch):
        store.put_verified(b"\x00" * 5, b"b")
    store.put_verified(hashlib.sha256(b"a").digest(), b"a")


def test_corrupt_file_is_not_returned(tmp_path) -> None:
    store = BlobStore(tmp_path)
    ident = store.put(b"data")
    path = tmp_path / ident.hex()[:2] / ident.hex()
    path.write_bytes(b"tampered")
    assert store.get(ident) is None


def test_blobs_are_private_to_the_user(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    ident = store.put(b"secret conversation")
    path = tmp_path / "blobs" / ident.hex()[:2] / ident.hex()
    assert path.stat().st_mode & 0o077 == 0
    assert path.parent.stat().st_mode & 0o077 == 0


def test_data_dir_and_store_are_private(tmp_path) -> None:
    import stat

    from cursor_byok.store.blobs import BlobStore

    data = tmp_path / "new" / "data"
    BlobStore(data / "blobs").put(b"secret prompt")
    for path in (tmp_path / "new", data, data / "blobs"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_put_all_stores_under_the_given_ids_and_skips_known_ones(tmp_path, monkeypatch) -> None:
    """A turn stores each checkpoint's blobs, mostly stored already: those cost no disk call."""
    from pathlib import Path

    from cursor_byok.wire.blob_ids import blob_id

    store = BlobStore(tmp_path)
    blobs = {blob_id(d): d for d in (b"one", b"two")}
    store.put_all(blobs)
    assert all(BlobStore(tmp_path).get(i) == d for i, d in blobs.items())
    import os

    stats: list[Path] = []
    real_utime = os.utime

    def utime(path, *args, **kwargs) -> None:  # the one disk call for a blob maybe stored
        stats.append(Path(path))
        return real_utime(path, *args, **kwargs)

    monkeypatch.setattr(os, "utime", utime)
    store.put_all({**blobs, blob_id(b"three"): b"three"})
    store.put(b"one")
    assert [p.name for p in stats] == [blob_id(b"three").hex()]  # only the new one is looked up
    assert store.get(blob_id(b"three")) == b"three"
    # Another store on the same directory (another process) finds them on disk.
    other = BlobStore(tmp_path)
    stats.clear()
    other.put(b"two")
    other.put(b"two")
    assert len(stats) == 1


def test_a_removed_fan_out_directory_is_made_again(tmp_path) -> None:
    import shutil

    store = BlobStore(tmp_path / "blobs")
    ident = store.put(b"first")
    shutil.rmtree(tmp_path / "blobs")  # e.g. the user cleared the data dir under a running proxy
    again = store.put(b"second")
    assert store.get(again) == b"second"
    assert (tmp_path / "blobs" / again.hex()[:2]).stat().st_mode & 0o077 == 0
    assert store.get(ident) is None


def test_known_ids_are_bounded(tmp_path) -> None:
    store = BlobStore(tmp_path)
    store.MAX_KNOWN = 3
    for n in range(10):
        store.put(b"blob %d" % n)
    assert len(store._known) <= 3
    assert all(store.get(hashlib.sha256(b"blob %d" % n).digest()) for n in range(10))


def test_prune_keeps_the_cap_the_recent_and_what_a_live_checkpoint_names(tmp_path) -> None:
    """Issue 33 item 4: least recently stored or used first; never a protected blob, nor one
    stored after the oldest running turn began; a pruned blob stored again is written again."""
    import os

    from cursor_byok.store.blobs import BlobStore

    store = BlobStore(tmp_path / "blobs")
    ids = [store.put(bytes([n]) * 1000) for n in range(6)]
    for n, ident in enumerate(ids):  # stored at t = 100, 200, ... 600
        os.utime(store._path(ident), (100.0 * (n + 1), 100.0 * (n + 1)))
    assert store.written == 6000
    deleted, freed, left = store.prune(3000, protected={ids[0]}, newer_than=550.0)
    assert (deleted, freed, left) == (3, 3000, 3000) and store.written == 0
    kept = [ident in store for ident in ids]
    assert kept == [True, False, False, False, True, True]  # 0 named, 4 and 5 the newest
    store.put(bytes([1]) * 1000)  # remembered before the prune: written again
    assert ids[1] in store
    store.put(bytes([4]) * 1000)  # stored already: in use again, the last to go
    assert store._path(ids[4]).stat().st_mtime > 600
    assert store.prune(10_000) == (0, 0, 4000)  # under the cap: nothing goes


def test_a_long_blob_is_written_in_pieces_and_read_back_framed(tmp_path) -> None:
    """A `BlobPieces` is written piece by piece; `read_framed` reads head + blob + tail into
    one buffer (the blob's hash checked) and `reader` makes the blob again from its file."""
    from cursor_byok.wire.blob_pieces import BlobPieces

    data = bytes(range(256)) * 4096  # 1 MiB
    blob = BlobPieces.of(lambda: (data[i : i + 5000] for i in range(0, len(data), 5000)))
    store = BlobStore(tmp_path)
    store.put_all({blob.ident: blob})
    assert store.get(blob.ident) == data
    assert store.read_framed(blob.ident, b"head", b"tail") == b"head" + data + b"tail"
    assert b"".join(store.reader(blob.ident, chunk=3000)()) == data
    path = tmp_path / blob.ident.hex()[:2] / blob.ident.hex()
    path.write_bytes(data[:-1] + b"?")  # corrupt: never sent under its id
    assert store.read_framed(blob.ident, b"h", b"t") is None
    path.unlink()
    assert store.read_framed(blob.ident, b"h", b"t") is None
