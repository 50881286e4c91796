"""Blob ids: the SHA-256 of a blob's bytes (protocol.md §9).

Checkpoints, KV GET/SET and uploads all name blobs this way, so the check that bytes match
their id belongs to the protocol, not to any one store.
"""

from __future__ import annotations

import hashlib

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code

BLOB_ID_SIZE = 32


class BlobMismatch(ByokError, ValueError):
    """Bytes offered under an id they do not hash to."""

    code = Code.INVALID_ARGUMENT


def blob_id(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def verify(expected_id: bytes, data: bytes) -> None:
    if len(expected_id) != BLOB_ID_SIZE:
        raise BlobMismatch(f"blob id must be {BLOB_ID_SIZE} bytes, got {len(expected_id)}")
    actual = blob_id(data)
    if actual != expected_id:
        raise BlobMismatch(f"blob {expected_id.hex()} has content hashing to {actual.hex()}")
