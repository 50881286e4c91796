"""`cursor-byok replay --update`: make a capture expect the frames the server sends today.

Only on request, after the report has shown the first divergence: the recorded client messages
and provider lines stay exactly as they were; the server lines (frames and the end of stream)
are replaced by the replayed ones. Each client line keeps its place in the stream (`after_frames`)
where the new stream allows it, and never comes before the request it answers.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from cursor_byok.capture.format import server_kind
from cursor_byok.capture.recorder import FILE_MODE
from cursor_byok.replay.engine import Result
from cursor_byok.replay.frames import answers
from cursor_byok.replay.frames import parse_frame
from cursor_byok.replay.frames import requests_in


def updated_lines(lines: list[str], frames: list[bytes], end: dict[str, Any] | None) -> list[str]:
    """The capture's lines with `frames` and `end` as its server lines."""
    asked: dict[tuple[str, int], int] = {}  # request → how many frames are in once it is
    for index, raw in enumerate(frames):
        request = requests_in(parse_frame(raw))
        if request is not None:
            asked.setdefault(request, index + 1)
    out: list[str] = []
    written = 0

    def frames_until(count: int, t: int) -> None:
        nonlocal written
        while written < min(count, len(frames)):
            raw = frames[written]
            line = {"t": t, "type": "server", "kind": server_kind(raw), "raw": _b64(raw)}
            out.append(_dump(line))
            written += 1

    for text in lines:
        if not text.strip():
            continue
        line = json.loads(text)
        kind = line.get("type")
        if kind in ("server", "end"):
            continue
        if kind == "client":
            request = answers(base64.b64decode(line["raw"]))
            position = min(int(line["after_frames"]), len(frames))
            if request is not None and request in asked:
                position = max(position, asked[request])
            frames_until(position, int(line.get("t", 0)))
            line["after_frames"] = written
            out.append(_dump(line))
            continue
        out.append(text)
    frames_until(len(frames), _last_t(out))
    if end is not None:
        out.append(_dump({"t": _last_t(out), "type": "end", "end": end}))
    return out


def update_capture(result: Result) -> Path:
    """Rewrite the replayed capture's file in place (atomically, 0600); returns its path."""
    path = result.capture.path
    if path is None:
        raise ValueError("the capture was not read from a file")
    lines = path.read_text(encoding="utf-8").splitlines()
    text = "\n".join(updated_lines(lines, result.frames, result.end)) + "\n"
    temporary = path.with_name(path.name + ".update")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
    return path


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _dump(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def _last_t(lines: list[str]) -> int:
    for text in reversed(lines):
        try:
            return int(json.loads(text).get("t", 0))
        except (ValueError, AttributeError):
            continue
    return 0
