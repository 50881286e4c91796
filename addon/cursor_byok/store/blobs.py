"""Content-addressed blob store on disk: blob id = SHA-256 of the bytes (protocol.md §9).

Blobs are conversation state (history messages, user messages, steps, context parts). Keeping them
as files under the data directory means a proxy restart loses nothing: the next turn's checkpoint
refers to them by id. Writes are atomic (temp file + rename), so a crash never leaves a blob whose
content does not match its name; reads verify the hash anyway.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from cursor_byok.protocol.blob_ids import BLOB_ID_SIZE
from cursor_byok.protocol.blob_ids import blob_id
from cursor_byok.protocol.blob_ids import verify
from cursor_byok.store.files import private_dir

log = logging.getLogger(__name__)


class BlobStore:
    """Blobs as files `<root>/<first 2 hex digits>/<id in hex>`.

    A turn stores the blobs of each checkpoint it publishes, most of them stored already by the
    previous one: ids this store wrote or found on disk are remembered (up to MAX_KNOWN), so
    storing them again costs no `stat`.
    """

    MAX_KNOWN = 65536  # remembered ids (~100 bytes each); forgotten all at once beyond this

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # Conversations are private: directories 0700, files 0600 (mkstemp's default).
        private_dir(self.root.parent)
        private_dir(self.root)
        self._known: set[bytes] = set()

    def _path(self, ident: bytes) -> Path:
        name = ident.hex()
        return self.root / name[:2] / name

    def put(self, data: bytes) -> bytes:
        """Store bytes; return their id. Storing the same bytes twice is a no-op."""
        ident = blob_id(data)
        self._store(ident, data)
        return ident

    def put_all(self, blobs: Mapping[bytes, bytes]) -> None:
        """Store blobs keyed by their ids, as `blob_id` computed them (not hashed again)."""
        for ident, data in blobs.items():
            self._store(ident, data)

    def _store(self, ident: bytes, data: bytes) -> None:
        if ident in self._known:
            return
        path = self._path(ident)
        if not path.exists():
            try:
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            except FileNotFoundError:  # the first blob of this fan-out directory
                private_dir(path.parent)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        if len(self._known) >= self.MAX_KNOWN:
            self._known.clear()
        self._known.add(ident)

    def put_verified(self, ident: bytes, data: bytes) -> None:
        """Store bytes that arrived under a claimed id (KV GET result, pre-fetched blob)."""
        verify(ident, data)
        self.put(data)

    def get(self, ident: bytes) -> bytes | None:
        if len(ident) != BLOB_ID_SIZE:
            return None
        try:
            data = self._path(ident).read_bytes()
        except FileNotFoundError:
            return None
        if blob_id(data) != ident:
            log.warning("blob %s is corrupt on disk; ignoring it", ident.hex())
            return None
        return data

    def __contains__(self, ident: bytes) -> bool:
        return len(ident) == BLOB_ID_SIZE and self._path(ident).exists()
