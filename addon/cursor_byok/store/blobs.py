"""Content-addressed blob store on disk: blob id = SHA-256 of the bytes (protocol.md §9).

Blobs are conversation state (history messages, user messages, steps, context parts). Keeping them
as files under the data directory means a proxy restart loses nothing: the next turn's checkpoint
refers to them by id. Writes are atomic (temp file + rename), so a crash never leaves a blob whose
content does not match its name; reads verify the hash anyway.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Mapping
from pathlib import Path

from cursor_byok.store.files import private_dir
from cursor_byok.wire.blob_ids import BLOB_ID_SIZE
from cursor_byok.wire.blob_ids import blob_id
from cursor_byok.wire.blob_ids import verify
from cursor_byok.wire.blob_pieces import BlobPieces

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
        self.written = 0  # bytes written since the last `prune` (when to look again)
        self._prune_lock = threading.Lock()
        # blobs something in memory relies on reading again (a run's stowed SET frames): kept
        # from `prune` for as long as that holder lives
        self._pins: weakref.WeakKeyDictionary[object, bytes] = weakref.WeakKeyDictionary()

    def pin(self, holder: object, ident: bytes) -> None:
        """Keep `ident` from being pruned while `holder` lives."""
        self._pins[holder] = ident

    def pinned(self) -> set[bytes]:
        """The ids pinned now (on the event loop's thread: `prune` gets them as `protected`)."""
        return set(self._pins.values())

    def _path(self, ident: bytes) -> Path:
        name = ident.hex()
        return self.root / name[:2] / name

    def put(self, data: bytes) -> bytes:
        """Store bytes; return their id. Storing the same bytes twice is a no-op."""
        ident = blob_id(data)
        self._store(ident, data)
        return ident

    def put_all(self, blobs: Mapping[bytes, bytes | BlobPieces]) -> None:
        """Store blobs keyed by their ids, as `blob_id` computed them (not hashed again); a
        `BlobPieces` is written piece by piece, never whole in memory."""
        for ident, data in blobs.items():
            self._store(ident, data)

    def _store(self, ident: bytes, data: bytes | BlobPieces) -> None:
        if ident in self._known:
            return
        path = self._path(ident)
        try:  # stored already: it is in use again, the last to be pruned
            os.utime(path)
        except FileNotFoundError:
            self.written += data.size if isinstance(data, BlobPieces) else len(data)
            try:
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            except FileNotFoundError:  # the first blob of this fan-out directory
                private_dir(path.parent)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    if isinstance(data, BlobPieces):
                        handle.writelines(data.pieces())
                    else:
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

    def reader(self, ident: bytes, chunk: int = 256 * 1024) -> Callable[[], Iterator[bytes]]:
        """What makes a stored blob's bytes again from its file, `chunk` bytes at a time
        (`BlobPieces.rebase`: the turn then holds no copy of a long blob it wrote)."""
        path = self._path(ident)

        def make() -> Iterator[bytes]:
            with open(path, "rb") as handle:
                while piece := handle.read(chunk):
                    yield piece

        return make

    def read_framed(self, ident: bytes, head: bytes, tail: bytes) -> bytes | None:
        """`head + blob + tail` read into one buffer, the blob's hash checked (None when it is
        gone or corrupt). A bytearray, typed as the bytes it stands for: it is only written
        out, sliced or hashed, never changed."""
        try:
            with open(self._path(ident), "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                frame = bytearray(len(head) + size + len(tail))
                frame[: len(head)] = head
                view = memoryview(frame)
                read = handle.readinto(view[len(head) : len(head) + size])
        except FileNotFoundError:
            return None
        blob = view[len(head) : len(head) + size]
        if read != size or hashlib.sha256(blob).digest() != ident:
            log.warning("blob %s is corrupt on disk; ignoring it", ident.hex())
            return None
        blob.release()
        view.release()
        frame[len(head) + size :] = tail
        return frame  # type: ignore[return-value]

    def __contains__(self, ident: bytes) -> bool:
        return len(ident) == BLOB_ID_SIZE and self._path(ident).exists()

    # --- the size cap -----------------------------------------------------------------------

    def files(self) -> list[tuple[Path, os.stat_result]]:
        """Every blob file with its stat (temp files of writes in progress left out)."""
        out: list[tuple[Path, os.stat_result]] = []
        try:
            fans = list(os.scandir(self.root))
        except FileNotFoundError:
            return out
        for fan in fans:
            if not fan.is_dir(follow_symlinks=False):
                continue
            try:
                entries = list(os.scandir(fan.path))
            except FileNotFoundError:
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    out.append((Path(entry.path), entry.stat(follow_symlinks=False)))
                except FileNotFoundError:
                    continue
        return out

    def prune(
        self, limit: int, protected: Collection[bytes] = (), newer_than: float = float("inf")
    ) -> tuple[int, int, int]:
        """Delete the least recently stored or used blobs until the store holds at most `limit`
        bytes, never one in `protected` (what a live checkpoint names) nor one stored after
        `newer_than` (unix time: the oldest running turn's start); (blobs deleted, bytes
        deleted, bytes left). A deleted blob the client holds comes back by KV GET."""
        newer_than = min(newer_than, time.time())  # stored or used while this runs: kept
        with self._prune_lock:
            self.written = 0
            files = self.files()
            used = sum(stat.st_size for _path, stat in files)
            deleted = freed = 0
            if used <= limit:
                return 0, 0, used
            keep = {ident.hex() for ident in protected}
            for path, stat in sorted(files, key=lambda item: item[1].st_mtime):
                if used - freed <= limit:
                    break
                if path.name in keep or stat.st_mtime >= newer_than:
                    continue
                try:  # used again since the listing?
                    if path.stat().st_mtime >= newer_than:
                        continue
                except FileNotFoundError:
                    continue
                path.unlink(missing_ok=True)
                deleted += 1
                freed += stat.st_size
            self._known.clear()  # a deleted blob stored again must be written again
            return deleted, freed, used - freed


class BlobFrame:
    """A frame made of a blob of `store` between fixed bytes (a blob SET; a staged checkpoint
    around a history message's JSON), made again byte for byte when a replay needs it
    (`core.outbox.StoredFrame`: `get` checks the blob's hash, so the bytes are the same). The
    blob is pinned against pruning while this lives."""

    __slots__ = ("__weakref__", "blob_id", "head", "store", "tail")

    def __init__(self, head: bytes, blob_id: bytes, tail: bytes, store: BlobStore) -> None:
        self.head = head
        self.blob_id = blob_id
        self.tail = tail
        self.store = store
        store.pin(self, blob_id)

    def load(self) -> bytes | None:
        """The frame, read into one buffer (a long blob is not read, then copied into its
        frame: that was two copies of it at once). Reads the disk on the event loop: only when
        a stream takes the frame, once, or a replay does."""
        frame = self.store.read_framed(self.blob_id, self.head, self.tail)
        if frame is None:
            log.warning("blob %s of a run's backlog is gone from the data dir", self.blob_id.hex())
        return frame
