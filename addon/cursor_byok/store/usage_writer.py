"""Usage rows written by a thread of their own, so the event loop never waits for SQLite.

Another process may hold the database's lock for as long as it likes (a DB browser with an open
transaction, a backup): an insert on the loop then froze every stream for SQLite's busy timeout.
Here `add` only queues the row. One writer thread per data dir inserts it, SQLite's busy handler
retrying while the lock is held (`BUSY_TIMEOUT`); a row that still cannot be written goes to a
spool file beside the database (`usage-spool.jsonl`, 0600), imported before the next row that
can be written and by the next start, so no row is lost. When even the spool cannot be written
(the disk is full), rows stay in memory (at most `MAX_PENDING`) and are tried again with the
next row, and on shutdown.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore

log = logging.getLogger(__name__)

SPOOL_FILE = "usage-spool.jsonl"
BUSY_TIMEOUT = 5.0  # seconds SQLite retries a locked database before a row goes to the spool
MAX_PENDING = 10_000  # rows kept in memory while nothing can be written (~200 bytes each)
CLOSE_TIMEOUT = 2 * BUSY_TIMEOUT + 1.0  # how long shutdown waits for queued rows
_STOP = object()


def spooled_rows(data_dir: Path) -> list[TurnUsage]:
    """The rows waiting in a data dir's spool (the report shows them too)."""
    path = Path(data_dir) / SPOOL_FILE
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        try:
            rows.append(TurnUsage(**json.loads(line)))
        except (ValueError, TypeError):
            continue  # a line cut short by a full disk: the rest still counts
    return rows


class UsageWriter:
    """The writer thread of one data dir."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._pending: list[TurnUsage] = []  # neither in the database nor in the spool yet
        self._store: UsageStore | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(
            target=self._run, name=f"usage-writer {self.data_dir}", daemon=True
        )
        self._thread.start()
        self._queue.put(None)  # import what an earlier run left in the spool

    def add(self, row: TurnUsage) -> None:
        """Queue a row; returns at once."""
        self._idle.clear()
        self._queue.put(row)

    def flush(self, timeout: float) -> bool:
        """Wait until every queued row was handled (written, spooled or kept); for tests."""
        self._idle.clear()
        self._queue.put(None)
        return self._idle.wait(timeout)

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout)

    # --- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                self._write_out()
                if self._store is not None:
                    self._store.close()
                return
            if isinstance(item, TurnUsage):
                self._pending.append(item)
                del self._pending[:-MAX_PENDING]
            self._write_out()
            if self._queue.empty():
                self._idle.set()

    def _write_out(self) -> None:
        """Write the spool, then the pending rows, into the database; what cannot be written
        goes to the spool, else stays pending."""
        try:
            store = self._open()
            self._import_spool(store)
            while self._pending:
                store.add(self._pending[0])
                self._pending.pop(0)
        except (sqlite3.Error, OSError) as exc:
            self._spool(exc)

    def _open(self) -> UsageStore:
        if self._store is None or not self._store.path.exists():
            self._store = UsageStore(self.data_dir, timeout=BUSY_TIMEOUT)
        return self._store

    def _import_spool(self, store: UsageStore) -> None:
        path = self.data_dir / SPOOL_FILE
        if not path.exists():
            return
        rows = spooled_rows(self.data_dir)
        store.add_all(rows)  # one transaction: all of them or none
        path.unlink()
        log.info("usage: %d row(s) from the spool written to the database", len(rows))

    def _spool(self, why: BaseException) -> None:
        if not self._pending:
            return
        path = self.data_dir / SPOOL_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a") as spool:
                for row in self._pending:
                    spool.write(json.dumps(dataclasses.asdict(row)) + "\n")
        except OSError as exc:
            log.warning(
                "usage: %d row(s) kept in memory: neither the database nor %s can be written "
                "(%s; %s)",
                len(self._pending),
                path,
                why,
                exc.strerror or exc,
            )
            return
        log.warning("usage: %d row(s) went to %s for now: %s", len(self._pending), path, why)
        self._pending.clear()


_writers: dict[Path, UsageWriter] = {}
_writers_lock = threading.Lock()


def writer_for(data_dir: Path) -> UsageWriter:
    key = Path(data_dir).expanduser().absolute()
    with _writers_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = UsageWriter(key)
        return writer


@atexit.register
def close_writers() -> None:
    """Write what is queued before the process ends (the proxy's shutdown calls it too)."""
    with _writers_lock:
        writers = list(_writers.values())
        _writers.clear()
    for writer in writers:
        writer.close()


def record_turn(data_dir: Path, turn: Any, *, outcome: str, duration: float) -> None:
    """Append one turn's usage; never raises (a turn must not fail because of accounting).

    `turn` is a `cursor_byok.agent.turn.Turn`; its live session may carry a `route`
    attribute (how the turn's calls reached the proxy), recorded when present.
    """
    try:
        usage = turn.usage
        row = TurnUsage(
            started=time.time() - duration,
            duration=duration,
            conversation=turn.run_request.conversation_id or "",
            request=turn.request_id,
            model=turn.model or "",
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            outcome=outcome,
            route=str(getattr(turn.live, "route", "") or ""),
            context_used=turn.transcript.used_tokens,
            context_max=turn.transcript.context_window,
        )
        writer_for(data_dir).add(row)
    except Exception as exc:
        log.warning("could not record the usage of a turn: %s", exc)


def record_row(data_dir: Path, row: TurnUsage) -> None:
    """Append one row for a model call that is not a turn (a chat's title); never raises."""
    try:
        writer_for(data_dir).add(row)
    except Exception as exc:
        log.warning("could not record the usage of a %s call: %s", row.outcome, exc)
