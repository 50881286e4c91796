"""Attached media of BYOK conversations, kept here instead of in Cursor's storage.

`AgentService/GetSignedUrlForAttachedMedia` asks where to upload a file the user attached; the
answer is URLs (a POST with form fields, or a PUT, and a GET to read it back), so for a BYOK
conversation the proxy hands out URLs of its own (`proxy/privacy_answers.py`) and keeps what is
uploaded there: one private file per upload under `<data_dir>/media`, its content type beside it.

Media has an owner, like runs: the URL names the owner (a keyed hash of the client's credential,
the key kept in `<data_dir>/media/.key`, 0600, so URLs outlive a restart) and carries a MAC over
owner and key. Only an address this store made is read or written, and another client asking for
the same key gets an address (and a file) of its own: no one else reads or overwrites it.

Bounded: `MAX_MEDIA` bytes per upload (decoded), `total` bytes for the whole store, made room for
by dropping the oldest uploads first; and an upload that would leave the disk with less than
`min_free` bytes free is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.store.files import MiB
from cursor_byok.store.files import private_dir
from cursor_byok.store.files import short_of_space
from cursor_byok.store.files import write_private

MAX_MEDIA = 64 * MiB  # bytes of one attached file
MAX_TOTAL = 1024 * MiB  # bytes of all of them (cursor_byok_media_max_mb)
DEFAULT_TYPE = "application/octet-stream"
KEY_FILE = ".key"
TYPE_SUFFIX = ".type"
_MAC = 32  # hex digits of an owner id and of an address's MAC


class MediaRefused(ByokError):
    """An upload the store will not keep (over a bound, the disk too full); the message says
    which bound and how to change it."""

    code = Code.RESOURCE_EXHAUSTED


class MediaStore:
    """One data dir's media; safe to share between threads (uploads are written off the event
    loop)."""

    def __init__(
        self, root: Path, *, total: int = MAX_TOTAL, per_file: int = MAX_MEDIA, min_free: int = 0
    ) -> None:
        self.root = Path(root)
        self.total = total
        self.per_file = per_file
        self.min_free = min_free
        self._lock = threading.Lock()
        self._secret: bytes | None = None

    # --- owners and addresses ---------------------------------------------------------------

    def _key(self) -> bytes:
        if self._secret is None:
            private_dir(self.root)
            path = self.root / KEY_FILE
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                self._secret = path.read_bytes()
            else:
                secret = secrets.token_bytes(32)
                with os.fdopen(fd, "wb") as file:
                    file.write(secret)
                self._secret = secret
        return self._secret

    def _mac(self, *parts: str) -> str:
        message = "\0".join(parts).encode("utf-8", "surrogatepass")
        return hmac.new(self._key(), message, hashlib.sha256).hexdigest()[:_MAC]

    def owner(self, credential: str) -> str:
        """The owner id of a client credential (its Authorization header; never stored)."""
        return self._mac("owner", credential)

    def address(self, owner: str, key: str) -> str:
        """Where `owner` uploads and reads `key`: `owner/mac/key` (the path of its URLs)."""
        return f"{owner}/{self._mac('media', owner, key)}/{key}"

    def _file(self, address: str) -> Path | None:
        """The file of an address this store made, else None (a guessed or altered URL)."""
        owner, _slash, rest = address.partition("/")
        mac, _slash, key = rest.partition("/")
        if len(owner) != _MAC or not key:
            return None
        if not hmac.compare_digest(mac, self._mac("media", owner, key)):
            return None
        name = hashlib.sha256(f"{owner}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()
        return self.root / name

    # --- uploads ----------------------------------------------------------------------------

    def put(self, address: str, data: bytes, content_type: str = "") -> int:
        """Keep an upload; how many older uploads were dropped to make room. Raises
        `KeyError` for an address this store did not make, `MediaRefused` over a bound."""
        path = self._file(address)
        if path is None:
            raise KeyError(address)
        if len(data) > self.per_file:
            raise MediaRefused(
                f"{len(data)} bytes is over the {self.per_file // MiB} MiB bound of one file"
            )
        with self._lock:
            private_dir(self.root)
            free = short_of_space(self.root, self.min_free, len(data))
            if free is not None:
                raise MediaRefused(
                    f"only {free / MiB:.1f} MiB free in {self.root}: cursor-byok keeps "
                    f"{self.min_free // MiB} MiB free there (cursor_byok_min_free_mb)"
                )
            dropped = self._make_room(len(data), keep=path)
            write_private(path, data)
            suffix = path.with_suffix(TYPE_SUFFIX)
            write_private(suffix, (content_type or DEFAULT_TYPE).encode()[:200])
        return dropped

    def _make_room(self, size: int, keep: Path) -> int:
        """Drop the oldest uploads until `size` more bytes fit under `total`."""
        if size > self.total:
            raise MediaRefused(
                f"{size} bytes is over the {self.total // MiB} MiB of all attached media "
                "(cursor_byok_media_max_mb)"
            )
        files = self.files()
        used = sum(stat.st_size for _path, stat in files if _path != keep)
        dropped = 0
        for path, stat in sorted(files, key=lambda item: item[1].st_mtime):
            if used + size <= self.total:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)
            path.with_suffix(TYPE_SUFFIX).unlink(missing_ok=True)
            used -= stat.st_size
            dropped += 1
        return dropped

    def files(self) -> list[tuple[Path, os.stat_result]]:
        """Every upload kept (not its type file, not the key), with its stat."""
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return []
        out = []
        for entry in entries:
            if entry.name.startswith(".") or entry.name.endswith(TYPE_SUFFIX):
                continue
            try:
                out.append((Path(entry.path), entry.stat(follow_symlinks=False)))
            except FileNotFoundError:
                continue
        return out

    def size(self) -> int:
        """Bytes of every upload kept."""
        return sum(stat.st_size for _path, stat in self.files())

    def get(self, address: str) -> tuple[bytes, str] | None:
        """The file uploaded at `address` and its content type, or None."""
        path = self._file(address)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            content_type = path.with_suffix(TYPE_SUFFIX).read_text().strip() or DEFAULT_TYPE
        except OSError:
            content_type = DEFAULT_TYPE
        return data, content_type
