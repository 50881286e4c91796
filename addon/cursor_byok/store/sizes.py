"""How much the data dir holds, by kind: what `cursor-byok usage` and `doctor` show, so a user
sees the store's size before it fills a disk."""

from __future__ import annotations

import os
from pathlib import Path

from cursor_byok.store.files import MiB

KINDS = ("blobs", "media", "usage", "other")


def sizes(data_dir: Path) -> dict[str, tuple[int, int]]:
    """(bytes, files) per kind: `blobs/`, `media/`, the usage database and its spool, the rest."""
    out = dict.fromkeys(KINDS, (0, 0))
    for top, _dirs, names in os.walk(data_dir):
        relative = Path(top).relative_to(data_dir).parts
        for name in names:
            try:
                size = os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
            if relative and relative[0] in ("blobs", "media"):
                kind = relative[0]
                if kind == "media" and (name.startswith(".") or name.endswith(".type")):
                    kind = "other"  # the key and the content types: not uploads
            elif not relative and name.startswith("usage"):
                kind = "usage"
            else:
                kind = "other"
            total, count = out[kind]
            out[kind] = (total + size, count + 1)
    return out


def human(size: int) -> str:
    if size >= 1024 * MiB:
        return f"{size / (1024 * MiB):.1f} GiB"
    if size >= MiB:
        return f"{size / MiB:.1f} MiB"
    return f"{size / 1024:.0f} KiB"


def sizes_line(data_dir: Path) -> str:
    """`1.2 GiB: blobs 1.0 GiB (12,345), media 200 MiB (5 uploads), usage 1.0 MiB, other 8 KiB`"""
    found = sizes(data_dir)
    total = sum(size for size, _count in found.values())
    blobs, media = found["blobs"], found["media"]
    return (
        f"{human(total)}: blobs {human(blobs[0])} ({blobs[1]:,}), media {human(media[0])} "
        f"({media[1]:,} upload{'s' if media[1] != 1 else ''}), usage {human(found['usage'][0])}, "
        f"other {human(found['other'][0])}"
    )
