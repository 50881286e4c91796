"""Usage and cost: one row per Agent turn in a small SQLite database under the data dir.

A BYOK user pays per token, so every turn's usage (model, input / cached / output / reasoning
tokens, duration, outcome, route) is kept locally in `<data_dir>/usage.sqlite3` (stdlib sqlite3,
WAL, private to the user). Costs are not stored: `cursor-byok usage` prices the rows with the
`prices` of each model in the current config, so prices added later apply to past turns too.
Recording must never break a turn, nor wait for the database: `record_row` hands the row (the
caller builds it: a turn its `TurnUsage`, `agent/turn.usage_row`) to
a writer thread (`UsageWriter`) and returns. The thread retries while another program holds the
database's lock (a DB browser, a backup), and keeps rows it could not write in a spool file
beside the database (`usage-spool.jsonl`, one JSON row a line, synced) that it, or the next
start, imports: a row is never lost.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prices:
    """What a model costs, in currency units per million tokens (the provider's price list).

    `cached_input` applies to cache reads and `cache_write` to cache writes; each defaults to
    `input` when not given.
    """

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """Cost of one call; `input_tokens` is the uncached input only."""
        cached = self.input if self.cached_input is None else self.cached_input
        write = self.input if self.cache_write is None else self.cache_write
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_read_tokens * cached
            + cache_write_tokens * write
        ) / 1_000_000


USAGE_FILE = "usage.sqlite3"
SPOOL_FILE = "usage-spool.jsonl"  # rows the database was too busy for, imported later
SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,          -- unix time the turn started
    duration REAL NOT NULL,         -- seconds
    conversation TEXT NOT NULL,
    request TEXT NOT NULL,
    model TEXT NOT NULL,            -- the configured model name (what Cursor's picker shows)
    input_tokens INTEGER NOT NULL,  -- the whole prompt, cached tokens included
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, -- reasoning tokens included
    reasoning_tokens INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    route TEXT NOT NULL,            -- how the turn's calls reached the proxy (mode, transport)
    context_used INTEGER NOT NULL DEFAULT 0,  -- the context meter at the end of the turn
    context_max INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS turns_started ON turns (started);
"""
# From one schema version to the next (a database of an older cursor-byok keeps its rows).
_MIGRATIONS = {
    1: """
ALTER TABLE turns ADD COLUMN context_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN context_max INTEGER NOT NULL DEFAULT 0;
""",
}
BY = ("day", "model", "conversation", "outcome", "kind")
TITLE = "title"  # the outcome of a chat title's model call (NameAgent answered here)
# The editor's features beyond the Agent, each a usage kind of its own; a row's outcome is the
# kind, or "<kind>: <what went wrong>" (`feature_outcome`).
CMD_K = "cmd_k"
TERMINAL = "terminal"
COMMIT_MESSAGE = "commit_message"
TAB = "tab"
TERMINAL_AUTOCOMPLETE = "terminal_autocomplete"  # its `[features]` key is `terminal`
FEATURE_KINDS = (CMD_K, TERMINAL, COMMIT_MESSAGE, TAB, TERMINAL_AUTOCOMPLETE)


def feature_outcome(kind: str, problem: str = "") -> str:
    """The outcome column of a feature call's row (what `--by kind` groups by)."""
    return f"{kind}: {problem}" if problem else kind


@dataclass(frozen=True)
class TurnUsage:
    """One row of the usage database (a turn's, or another model call's), built by its caller."""

    started: float
    duration: float
    conversation: str
    request: str
    model: str
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    outcome: str = "ok"
    route: str = ""
    context_used: int = 0
    context_max: int = 0


def turn_cost(prices: Prices | None, row: Any) -> float | None:
    """What one row (or a group's sums) cost; None without prices."""
    if prices is None:
        return None
    read, write = row["cache_read_tokens"], row["cache_write_tokens"]
    return prices.cost(
        input_tokens=max(row["input_tokens"] - read - write, 0),
        output_tokens=row["output_tokens"],
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


class UsageStore:
    """The usage database of one data dir (safe to share between threads; close it after).

    Opening it imports the spool of rows an earlier writer could not write (`UsageWriter`);
    `busy_timeout` is how long a statement waits for another program's lock before it raises
    `sqlite3.OperationalError` ("database is locked")."""

    def __init__(self, data_dir: Path, *, busy_timeout: float = 5.0) -> None:
        data_dir = Path(data_dir).expanduser()
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = data_dir / USAGE_FILE
        self.spool = data_dir / SPOOL_FILE
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_timeout)
        # 0600 before the first write: SQLite gives its -wal and -shm files the database's mode.
        # By name, never through a file descriptor of ours: POSIX locks belong to the process,
        # and closing *any* descriptor of the file drops every lock SQLite holds on it (the
        # writer's too); another process's `cursor-byok usage` then finds the database unused,
        # checkpoints and deletes the WAL the writer still appends to, and its rows are lost.
        self._db.row_factory = sqlite3.Row
        try:
            os.chmod(self.path, 0o600)
            self._prepare()
        except BaseException:
            self._db.close()
            raise

    def _prepare(self) -> None:
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                if version in _MIGRATIONS:
                    for step in range(version, SCHEMA_VERSION):
                        self._db.executescript(_MIGRATIONS[step])
                else:
                    self._db.executescript(_SCHEMA)
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                self._db.commit()
        self.import_spool()

    def import_spool(self) -> int:
        """Insert the spooled rows, once each (even after a crash mid-import); how many. Raises
        like `add` while the database is locked: the rows then stay where they are."""
        importing = self.spool.with_suffix(".importing")
        total = 0
        for _ in range(2):  # what an earlier import left, then what was spooled since
            if not importing.exists():
                if not self.spool.exists():
                    break
                os.replace(self.spool, importing)  # rows spooled from now on wait for the next
            total += self._import(importing)
        return total

    def _import(self, path: Path) -> int:
        rows = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rows.append(TurnUsage(**json.loads(line)))
            except (ValueError, TypeError):
                log.warning("usage spool %s: a line that is no row skipped", path)
        with self._lock:
            fresh = [
                r
                for r in rows
                if self._db.execute(
                    "SELECT 1 FROM turns WHERE request = ? AND started = ?", (r.request, r.started)
                ).fetchone()
                is None
            ]
            self._insert(fresh)
        path.unlink()
        return len(fresh)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add(self, usage: TurnUsage) -> None:
        self.add_many([usage])

    def add_many(self, rows: list[TurnUsage]) -> None:
        """Insert rows in one transaction (all or none)."""
        with self._lock:
            self._insert(rows)

    def _insert(self, rows: list[TurnUsage]) -> None:
        if not rows:
            return
        try:
            self._db.executemany(
                "INSERT INTO turns (started, duration, conversation, request, model, "
                "input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, "
                "reasoning_tokens, outcome, route, context_used, context_max) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [_values(usage) for usage in rows],
            )
            self._db.commit()
        except BaseException:
            self._db.rollback()
            raise

    def prune(self, retention_days: int, now: float | None = None) -> int:
        """Delete rows older than `retention_days`; returns how many went."""
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        with self._lock:
            deleted = self._db.execute("DELETE FROM turns WHERE started < ?", (cutoff,)).rowcount
            self._db.commit()
        return deleted

    def sums_by_model(self, since: float, conversation: str | None = None) -> list[sqlite3.Row]:
        """Token sums per model of the rows since `since` (of one conversation, if given): rows
        of every kind (turns, titles, and what other features record) count. Spending caps
        price these (config/spend.py); a sum prices like its rows."""
        where = "started >= ?" + (" AND conversation = ?" if conversation is not None else "")
        args: tuple = (since,) if conversation is None else (since, conversation)
        with self._lock:
            return self._db.execute(
                "SELECT model, COUNT(*) AS turns, SUM(input_tokens) AS input_tokens, "
                "SUM(cache_read_tokens) AS cache_read_tokens, "
                "SUM(cache_write_tokens) AS cache_write_tokens, "
                f"SUM(output_tokens) AS output_tokens FROM turns WHERE {where} GROUP BY model",
                args,
            ).fetchall()

    def rows(self, since: float = 0.0) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(
                "SELECT * FROM turns WHERE started >= ? ORDER BY started", (since,)
            ).fetchall()


def _values(usage: TurnUsage) -> tuple:
    return (
        usage.started,
        usage.duration,
        usage.conversation,
        usage.request,
        usage.model,
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        usage.outcome[:200],
        usage.route,
        usage.context_used,
        usage.context_max,
    )


_OPEN_STORES = 4  # replays use a fresh temp data dir each: keep only the last few open
_stores: OrderedDict[Path, UsageStore] = OrderedDict()
_stores_lock = threading.Lock()


def store_for(data_dir: Path) -> UsageStore:
    """The open store of a data dir, for the proxy: opening costs ~20 ms, an insert ~20 µs."""
    key = Path(data_dir).expanduser().absolute()
    with _stores_lock:
        store = _stores.get(key)
        if store is not None and store.path.exists():
            _stores.move_to_end(key)
            return store
        if store is not None:  # the file went away (a deleted temp dir): start again
            store.close()
        store = _stores[key] = UsageStore(key)
        while len(_stores) > _OPEN_STORES:
            _old_key, old = _stores.popitem(last=False)
            old.close()
        return store


_TRY = object()  # the writer's queue: no new row, try the spool again


class UsageWriter:
    """One data dir's usage rows, written by a thread of its own: `add` returns at once.

    While the database is locked by another program the rows go to the spool (synced) and the
    thread tries again every `retry` seconds, each statement waiting at most `busy_timeout` for
    the lock; once it gets through, the spool is imported first, so rows stay in order."""

    def __init__(self, data_dir: Path, *, retry: float = 1.0, busy_timeout: float = 0.25) -> None:
        self.data_dir = Path(data_dir).expanduser()
        self.spool = self.data_dir / SPOOL_FILE
        self.retry = retry
        self.busy_timeout = busy_timeout
        self.spooled = 0  # rows that went to the spool (for logs and tests)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._store: UsageStore | None = None
        self._waiting = False  # rows wait in the spool: try again every `retry`
        self._pending = 0  # rows handed over and not yet written or spooled
        self._idle = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="cursor-byok usage", daemon=True)
        self._thread.start()

    def add(self, row: TurnUsage) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(row)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every row handed over is written or spooled; whether that happened."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def written(self, timeout: float | None = None) -> bool:
        """Wait until nothing waits in the spool either (tests); whether that happened."""
        self._queue.put(_TRY)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            return self._idle.wait_for(
                lambda: self._pending == 0 and not self._waiting,
                None if deadline is None else max(0.0, deadline - time.monotonic()),
            )

    def close(self, timeout: float = 2.0) -> None:
        """Write what can be written (a last try of the spool), then stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        self._write([])  # open the database now: that imports rows an earlier run spooled
        while True:
            try:
                item = self._queue.get(timeout=self.retry if self._waiting else None)
            except queue.Empty:
                item = _TRY
            rows = [item] if isinstance(item, TurnUsage) else []
            self._write(rows)
            with self._idle:
                self._pending -= len(rows)
                self._idle.notify_all()
            if item is None:
                if self._store is not None:
                    self._store.close()
                return

    def _write(self, rows: list[TurnUsage]) -> None:
        try:
            if self._store is None:
                self._store = UsageStore(self.data_dir, busy_timeout=self.busy_timeout)
            elif self._waiting:
                self._store.import_spool()
            self._store.add_many(rows)
        except Exception as exc:  # sqlite3's, the file system's, a path it refuses (ValueError)
            if rows and not self._to_spool(rows, exc):
                return  # not even the spool took them (a full disk): said once, by _to_spool
            if not self._waiting:
                self._waiting = True
                log.warning(
                    "usage database %s: %s; rows wait in %s and are written when it is free "
                    "(is another program holding it open?)",
                    self.data_dir / USAGE_FILE,
                    exc,
                    self.spool.name,
                )
            return
        if self._waiting:
            self._waiting = False
            log.info("usage database %s is free again: the waiting rows are written", self.data_dir)

    def _to_spool(self, rows: list[TurnUsage], why: BaseException) -> bool:
        lines = "".join(json.dumps(asdict(row), separators=(",", ":")) + "\n" for row in rows)
        try:
            fd = os.open(self.spool, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, lines.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            self.spooled += len(rows)
            return True
        except (OSError, ValueError) as exc:
            log.warning("could not record the usage of a turn: %s (and %s)", why, exc)
            return False


_writers: dict[Path, UsageWriter] = {}


def writer_for(data_dir: Path) -> UsageWriter:
    """The writer of a data dir, started on first use (which imports its spool)."""
    key = Path(data_dir).expanduser().absolute()
    with _stores_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = UsageWriter(key)
        return writer


def close_writers(timeout: float = 2.0) -> None:
    """At shutdown: every writer writes what it can, the rest stays in its spool."""
    with _stores_lock:
        writers = list(_writers.values())
        _writers.clear()
    for writer in writers:
        writer.close(timeout)


def record_row(data_dir: Path, row: TurnUsage) -> None:
    """Hand one row (a turn's, or a model call's that is not a turn: a chat's title) to the
    writer; never raises, never waits (a turn must not fail, nor stall the event loop, because
    of accounting). The caller builds the row: this module knows no agent."""
    try:
        writer_for(data_dir).add(row)
    except Exception as exc:
        log.warning("could not record the usage of a call (%s): %s", row.outcome, exc)


# --- the report --------------------------------------------------------------------------------

_SINCE = re.compile(r"^(\d+)\s*([hdw])$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """`today`, `week` (since Monday), `7d`, `12h`, `2w`, `all` or an ISO date."""
    now = now or datetime.now().astimezone()
    text = text.strip().lower()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "today":
        return midnight
    if text == "week":
        return midnight - timedelta(days=midnight.weekday())
    if text == "all":
        return datetime.fromtimestamp(0).astimezone()
    match = _SINCE.match(text)
    if match:
        count, unit = int(match[1]), match[2]
        return now - {"h": timedelta(hours=count), "d": timedelta(days=count)}.get(
            unit, timedelta(weeks=count)
        )
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"cannot read --since {text!r} (use today, week, 7d, 12h, 2w, all or 2026-11-01)"
        ) from None
    return parsed if parsed.tzinfo else parsed.astimezone()


@dataclass
class Group:
    key: str
    turns: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    duration: float = 0.0
    cost: float = 0.0
    unpriced: int = 0  # turns whose model has no prices

    def add(self, row: Any, cost: float | None) -> None:
        self.turns += 1
        for name in (
            "input_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "output_tokens",
            "reasoning_tokens",
        ):
            setattr(self, name, getattr(self, name) + row[name])
        self.duration += row["duration"]
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost


def _key(row: Any, by: str) -> str:
    if by == "day":
        return datetime.fromtimestamp(row["started"]).astimezone().strftime("%Y-%m-%d %a")
    if by == "model":
        return row["model"] or "?"
    if by == "conversation":
        return row["conversation"] or "(none)"
    if by == "kind":
        head = row["outcome"].split(":", 1)[0]
        if head in FEATURE_KINDS:
            return head
        return "title" if row["outcome"] == TITLE else "turn"
    return row["outcome"].split(":")[0].split(" (")[0]


def summarise(
    rows: list[Any], by: str, prices_of: Callable[[str], Prices | None] | None = None
) -> tuple[list[Group], Group]:
    """Groups in order of first appearance (days ascending) and the total; `prices_of` names
    a model's prices (the current config's, so prices added later apply to past turns)."""
    if by not in BY:
        raise ValueError(f"--by must be one of {', '.join(BY)}")
    prices: dict[str, Prices | None] = {}
    groups: dict[str, Group] = {}
    total = Group("total")
    for row in rows:
        model = row["model"]
        if model not in prices:
            prices[model] = prices_of(model) if prices_of is not None and model else None
        cost = turn_cost(prices[model], row)
        key = _key(row, by)
        groups.setdefault(key, Group(key)).add(row, cost)
        total.add(row, cost)
    return list(groups.values()), total


def format_cost(group: Group, currency: str = "$") -> str:
    if group.unpriced == group.turns:
        return "—"
    text = f"{currency}{group.cost:,.4f}" if group.cost < 1 else f"{currency}{group.cost:,.2f}"
    return text + (" +?" if group.unpriced else "")


def usage_table(groups: list[Group], total: Group, by: str, title: str):
    from rich.console import JustifyMethod
    from rich.table import Table

    table = Table(title=title, show_footer=True)
    columns: list[tuple[str, str, JustifyMethod]] = [
        (by, total.key, "left"),
        ("turns", str(total.turns), "right"),
        ("input", f"{total.input_tokens:,}", "right"),
        ("cached", f"{total.cache_read_tokens:,}", "right"),
        ("output", f"{total.output_tokens:,}", "right"),
        ("reasoning", f"{total.reasoning_tokens:,}", "right"),
        ("time", f"{total.duration:,.0f}s", "right"),
        ("cost", format_cost(total), "right"),
    ]
    for header, footer, justify in columns:
        table.add_column(header, footer=footer, justify=justify, no_wrap=True)
    for g in groups:
        table.add_row(
            g.key if by != "conversation" else g.key[:36],
            str(g.turns),
            f"{g.input_tokens:,}",
            f"{g.cache_read_tokens:,}",
            f"{g.output_tokens:,}",
            f"{g.reasoning_tokens:,}",
            f"{g.duration:,.0f}s",
            format_cost(g),
        )
    return table
