"""The activity record: which Cursor calls reached the running proxy, for `cursor-byok doctor`.

The proxy and the doctor are different processes (the doctor often runs in a second terminal),
so the proxy keeps one small JSON file in its data directory and rewrites it when an Agent call
arrives. The write is a temp file plus a rename, so a reader never sees half a record; the file is
private to the user (0600). A rename costs up to a millisecond on ext4, so in the proxy a small
writer thread does it: `note` only updates the record and wakes the thread, which writes the
latest record. The thread writes at most once every WRITE_INTERVAL: the first call after a quiet
spell is on disk at once, the calls after it within the interval together in one write when it
has passed. (The doctor waits for a call for seconds; writing each of the ~7 calls of an Agent
turn cost the proxy ~5% of its CPU under load, in a thread that takes the GIL from the event
loop.) Calls to Cursor's other endpoints only matter for the diagnosis "Cursor talks to the proxy
but its Agent calls do not arrive", so they are written at most once a second.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cursor_byok.store.census import Census
from cursor_byok.store.files import write_private

log = logging.getLogger(__name__)

ACTIVITY_FILE = "activity.json"
AGENT, OTHER = "agent", "other"
TURN_TRANSPORTS = ("RunSSE", "Run (HTTP/2 stream)")  # the stream of each turn (one per attempt)
OTHER_WRITE_INTERVAL = 1.0
WRITE_INTERVAL = 0.5  # the writer thread's least time between two writes, seconds


class Activity:
    """Counts Cursor calls and keeps `<data_dir>/activity.json` current.

    `note("agent", transport, route)` on every Agent call (RunSSE, BidiAppend, Run...), and
    `note("other")` on Cursor's other calls. `transport` says how the call came (e.g. "RunSSE",
    "BidiAppend", "Run (HTTP/2)"), `route` which way it reached us (e.g. "regular proxy",
    "reverse"); both are shown by the doctor as given.
    """

    def __init__(
        self,
        data_dir: Path,
        clock=time.time,
        monotonic=time.monotonic,
        *,
        background: bool = True,
        census: Census | None = None,
    ) -> None:
        self.path = Path(data_dir).expanduser() / ACTIVITY_FILE
        self.census = census  # written with the record (`census` key) when present
        self._clock = clock
        self._monotonic = monotonic
        self._other_written = float("-inf")
        self._background = background
        self._changed = threading.Condition()
        self._version = 0  # bumped by each note that must be written
        self._written = 0
        self._hurry = 0  # flush() calls waiting: write now, whatever the interval
        self._idle = False  # the writer thread waits for a note (else it is busy or pausing)
        self._thread: threading.Thread | None = None
        self.record: dict[str, Any] = {
            "agent_calls": 0,
            "agent_turns": 0,
            "other_cursor_calls": 0,
            "pid": os.getpid(),
            "proxy_started_at": clock(),
        }

    def touch(self) -> None:
        """The census changed: write the record again (the writer thread gathers the changes of
        one WRITE_INTERVAL into one write, so a busy proxy writes twice a second at most)."""
        with self._changed:
            self._schedule()

    def note(self, kind: str, transport: str = "", route: str = "") -> None:
        """Count one call. Agent calls are written at once (in the background: at most once
        every WRITE_INTERVAL, with the latest record), others at most once a second."""
        now = self._clock()
        with self._changed:
            if kind == AGENT:
                self.record["agent_calls"] += 1
                if transport in TURN_TRANSPORTS:  # one stream per turn; uploads are many
                    self.record["agent_turns"] = self.record.get("agent_turns", 0) + 1
                self.record["last_agent_at"] = now
                stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
                self.record["last_agent_call"] = stamp
                self.record["last_transport"] = transport
                self.record["last_route"] = route
            elif kind == OTHER:
                self.record["other_cursor_calls"] += 1
                self.record["last_other_at"] = now
                tick = self._monotonic()
                if tick - self._other_written < OTHER_WRITE_INTERVAL:
                    return
                self._other_written = tick
            else:
                raise ValueError(f"unknown activity kind {kind!r}")
            self._schedule()

    def started(self, **facts: Any) -> None:
        """The proxy runs: where it listens (`listen_host`, `listen_port`), written at once so
        the doctor can tell this proxy's port from a stranger's before any call arrives."""
        with self._changed:
            self.record.update(facts)
            self._schedule()

    def _schedule(self) -> None:
        """Write the record (caller holds the lock): now without a writer thread, else soon."""
        if not self._background:
            self._write(self._serialise())
            return
        self._version += 1
        if self._idle:  # a pausing writer needs no wake-up: it writes the latest record
            self._changed.notify()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._writer, name="cursor-byok-activity", daemon=True
            )
            self._thread.start()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every note so far is on disk (tests, shutdown); False on timeout."""
        with self._changed:
            self._hurry += 1
            self._changed.notify_all()
            try:
                return self._changed.wait_for(lambda: self._written >= self._version, timeout)
            finally:
                self._hurry -= 1

    def _writer(self) -> None:
        last = float("-inf")
        while True:
            with self._changed:
                while self._version <= self._written:
                    self._idle = True
                    self._changed.wait()
                self._idle = False
                # Gather the calls that come within the interval into one write.
                due = last + WRITE_INTERVAL
                while not self._hurry and (wait := due - time.monotonic()) > 0:
                    self._changed.wait(wait)
                version = self._version
                data = self._serialise()
            self._write(data)
            last = time.monotonic()
            with self._changed:
                self._written = version
                self._changed.notify_all()

    def _serialise(self) -> bytes:
        record = self.record
        if self.census is not None:
            record = {**record, "census": self.census.snapshot()}
        return json.dumps(record).encode()

    def _write(self, data: bytes) -> None:
        try:
            write_private(self.path, data)
        except OSError as exc:  # the doctor then says so; never disturb a call
            log.debug("cannot write the activity file %s: %s", self.path, exc)


def route_label(modes: Sequence[str], http_version: str = "") -> str:
    """How calls reach the proxy, for the record: "regular proxy, HTTP/1.1", "reverse", ..."""
    names = []
    for mode in modes:
        kind = str(mode).split(":", 1)[0].split("@", 1)[0]
        names.append("regular proxy" if kind == "regular" else kind)
    label = ", ".join(dict.fromkeys(names)) or "regular proxy"
    return f"{label}, {http_version}" if http_version else label


def read_activity(data_dir: Path) -> tuple[dict[str, Any] | None, float]:
    """The record and the file's modification time (0 when there is none)."""
    path = Path(data_dir).expanduser() / ACTIVITY_FILE
    try:
        stamp = path.stat().st_mtime
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, 0.0
    return (record if isinstance(record, dict) else None), stamp
