"""The data dir's size by kind (issue 33 item 4: `usage` and `doctor` show it)."""

from __future__ import annotations

from cursor_byok.store.sizes import sizes
from cursor_byok.store.sizes import sizes_line


def test_sizes_by_kind(tmp_path) -> None:
    (tmp_path / "blobs" / "ab").mkdir(parents=True)
    (tmp_path / "blobs" / "ab" / "ab01").write_bytes(b"x" * 3000)
    (tmp_path / "media").mkdir()
    (tmp_path / "media" / "f00d").write_bytes(b"y" * 2048)
    (tmp_path / "media" / "f00d.type").write_bytes(b"image/png")
    (tmp_path / "media" / ".key").write_bytes(b"k" * 32)
    (tmp_path / "usage.sqlite3").write_bytes(b"u" * 4096)
    (tmp_path / "activity.json").write_bytes(b"{}")
    found = sizes(tmp_path)
    assert found["blobs"] == (3000, 1) and found["media"] == (2048, 1)
    assert found["usage"] == (4096, 1) and found["other"] == (9 + 32 + 2, 3)
    line = sizes_line(tmp_path)
    assert line.startswith("9 KiB: blobs 3 KiB (1), media 2 KiB (1 upload), usage 4 KiB")
