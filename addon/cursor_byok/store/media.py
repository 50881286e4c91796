"""Attached media of BYOK conversations, kept here instead of in Cursor's storage.

`AgentService/GetSignedUrlForAttachedMedia` asks where to upload a file the user attached; the
answer is URLs (a POST with form fields, or a PUT, and a GET to read it back), so for a BYOK
conversation the proxy hands out URLs of its own (`proxy/privacy.py`) and keeps what is uploaded
there: one private file per key under `<data_dir>/media`, named by the SHA-256 of the key, with
its content type beside it. Bounded per file (`MAX_MEDIA`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from cursor_byok.store.files import private_dir
from cursor_byok.store.files import write_private

MAX_MEDIA = 64 * 1024 * 1024  # bytes of one attached file
DEFAULT_TYPE = "application/octet-stream"


class MediaStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / hashlib.sha256(key.encode()).hexdigest()

    def put(self, key: str, data: bytes, content_type: str = "") -> None:
        if len(data) > MAX_MEDIA:
            raise ValueError(f"{len(data)} bytes is over the {MAX_MEDIA}-byte bound of one file")
        private_dir(self.root)
        path = self._path(key)
        write_private(path, data)
        write_private(path.with_suffix(".type"), (content_type or DEFAULT_TYPE).encode()[:200])

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The file uploaded under `key` and its content type, or None."""
        path = self._path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            content_type = path.with_suffix(".type").read_text().strip() or DEFAULT_TYPE
        except OSError:
            content_type = DEFAULT_TYPE
        return data, content_type
