"""Per-turn token usage, kept in the data dir so `cursor-byok usage` can sum it per conversation.

One JSON line per turn in `usage.jsonl` (0600: conversation ids are private): input tokens with
the cached share, output tokens, and the context meter at the end of the turn. Counts only, no
content. Writing is best effort: a full disk must not fail a turn.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

USAGE_FILE = "usage.jsonl"
MAX_BYTES = 16 * 1024 * 1024  # rotated to usage.jsonl.1 beyond this


def append(data_dir: Path, record: dict) -> None:
    path = data_dir / USAGE_FILE
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    try:
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(USAGE_FILE + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as exc:
        log.debug("cannot append to %s: %s", path, exc)


def turn_record(turn) -> dict:
    """The usage line of a finished turn (`turn.Turn`)."""
    usage, transcript = turn.usage, turn.transcript
    return {
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "conversation": turn.run_request.conversation_id,
        "request": turn.request_id,
        "model": turn.model,
        "input": usage.input_tokens,
        "cached": usage.cache_read_tokens,
        "cache_write": usage.cache_write_tokens,
        "output": usage.output_tokens,
        "used": transcript.used_tokens,
        "max": transcript.context_window,
    }


@dataclass
class ConversationUsage:
    conversation: str
    model: str = ""
    turns: int = 0
    input: int = 0
    cached: int = 0
    output: int = 0
    used: int = 0
    max: int = 0
    last: str = ""

    @property
    def cached_share(self) -> float:
        return self.cached / self.input if self.input else 0.0


def per_conversation(data_dir: Path) -> list[ConversationUsage]:
    """Usage summed per conversation, most recent first."""
    rows: dict[str, ConversationUsage] = {}
    for name in (USAGE_FILE + ".1", USAGE_FILE):
        path = data_dir / name
        if not path.exists():
            continue
        for line in path.read_text(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not isinstance(r, dict):
                continue
            key = str(r.get("conversation") or "?")
            row = rows.setdefault(key, ConversationUsage(key))
            row.turns += 1
            row.model = str(r.get("model") or row.model)
            for field in ("input", "cached", "output"):
                value = r.get(field)
                if isinstance(value, int):
                    setattr(row, field, getattr(row, field) + value)
            row.used = int(r.get("used") or 0)
            row.max = int(r.get("max") or 0)
            row.last = str(r.get("time") or row.last)
    return sorted(rows.values(), key=lambda r: r.last, reverse=True)


def format_table(rows: list[ConversationUsage]) -> str:
    if not rows:
        return "no usage recorded yet"
    head = f"{'conversation':<38} {'model':<20} {'turns':>5} {'input':>10} {'cached':>7} " + (
        f"{'output':>9} {'context':>17}  last turn"
    )
    lines = [head]
    for r in rows:
        context = f"{r.used}/{r.max}" if r.max else "-"
        lines.append(
            f"{r.conversation[:38]:<38} {r.model[:20]:<20} {r.turns:>5} {r.input:>10} "
            f"{100 * r.cached_share:>6.1f}% {r.output:>9} {context:>17}  {r.last}"
        )
    return "\n".join(lines)
