"""Conversation routes that outlive the proxy: which conversations are BYOK (served here).

The calls Cursor makes around a conversation (titles, transcripts, analytics) follow its route
(`proxy/privacy.py`). Kept only in memory, a restart forgot every route, so an analytics event
naming a BYOK conversation after the restart went to Cursor (issue 33 item 8). So each route
decided is appended to `routes.log` in the data dir, one `<route> <conversation id>` line, and
read back at start (the last line of a conversation wins).

Bounded: the newest `max_entries` conversations are kept; the file is rewritten with only them
once it holds twice as many lines. A line that is not a route (a torn write) is skipped.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "routes.log"
MAX_ENTRIES = 4096
ROUTES = ("local", "cursor")
MAX_ID = 200  # characters of a conversation id kept (Cursor's are UUIDs)


class RouteLog:
    """Appends routes as they are decided; `load` gives them back, oldest first."""

    def __init__(self, data_dir: Path, max_entries: int = MAX_ENTRIES) -> None:
        self.path = data_dir / FILE_NAME
        self.max_entries = max_entries
        self._lines = 0  # lines in the file now (known after `load`)

    def load(self) -> OrderedDict[str, str]:
        """The routes kept, oldest first; the file compacted when it has grown too long."""
        routes: OrderedDict[str, str] = OrderedDict()
        try:
            text = self.path.read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return routes
        except OSError as exc:
            log.warning("conversation routes not read from %s: %s", self.path, exc)
            return routes
        lines = text.splitlines()
        for line in lines:
            route, _, conversation = line.partition(" ")
            if route in ROUTES and conversation and len(conversation) <= MAX_ID:
                routes[conversation] = route
                routes.move_to_end(conversation)
        while len(routes) > self.max_entries:
            routes.popitem(last=False)
        self._lines = len(lines)
        if self._lines > 2 * self.max_entries:
            self._rewrite(routes)
        return routes

    def append(self, conversation: str, route: str, routes: OrderedDict[str, str]) -> None:
        """Record one decision; `routes` (the caller's, already bounded) is what a compaction
        keeps. A failure is logged once per call and never raised: a turn must not fail on it."""
        if route not in ROUTES or not conversation or len(conversation) > MAX_ID:
            return
        if any(c.isspace() for c in conversation):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, f"{route} {conversation}\n".encode())
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning("conversation route not kept in %s: %s", self.path, exc)
            return
        self._lines += 1
        if self._lines > 2 * self.max_entries:
            self._rewrite(routes)

    def _rewrite(self, routes: OrderedDict[str, str]) -> None:
        temp = self.path.with_name(self.path.name + ".tmp")
        try:
            temp.write_text("".join(f"{r} {c}\n" for c, r in routes.items()), "utf-8")
            temp.chmod(0o600)
            temp.replace(self.path)
        except OSError as exc:
            log.warning("conversation routes not compacted in %s: %s", self.path, exc)
            return
        self._lines = len(routes)
