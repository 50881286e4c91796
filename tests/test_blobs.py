"""The blob store survives a restart and never returns content that does not match its id."""

from __future__ import annotations

import hashlib

import pytest

from cursor_byok.blobs import BlobMismatch
from cursor_byok.blobs import BlobStore


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

    from cursor_byok.blobs import BlobStore

    data = tmp_path / "new" / "data"
    BlobStore(data / "blobs").put(b"secret prompt")
    for path in (tmp_path / "new", data, data / "blobs"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
