"""A data dir that is full: every blob write fails as a full disk does (ENOSPC)."""

from __future__ import annotations

from cursor_byok.store.blobs import BlobStore


def full_disk(store: BlobStore) -> BlobStore:
    """`store` with writes failing: `put_all` raises ENOSPC."""

    def full(_blobs) -> None:
        raise OSError(28, "No space left on device")

    store.put_all = full  # type: ignore[method-assign]
    return store
