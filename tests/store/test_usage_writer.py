"""Usage rows are written by a thread (issue 27 item 4): a database another process holds locked
never stops the caller, and no row is lost (spool, then the database once it is free)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cursor_byok.store import usage_writer
from cursor_byok.store.usage import USAGE_FILE
from cursor_byok.store.usage import TurnUsage
from cursor_byok.store.usage import UsageStore
from cursor_byok.store.usage_writer import SPOOL_FILE
from cursor_byok.store.usage_writer import UsageWriter
from cursor_byok.store.usage_writer import spooled_rows

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


class LockHolder:
    """Another process (a DB browser, a backup) holding the usage database's write lock."""

    def __init__(self, data_dir: Path) -> None:
        UsageStore(data_dir).close()  # the file and its schema exist
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(data_dir / USAGE_FILE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdout.readline() == "locked\n"

    def release(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        self.process.wait(10)


def _row(n: int) -> TurnUsage:
    return TurnUsage(started=1000.0 + n, duration=1.0, conversation="c", request=f"r{n}", model="m")


def _requests(data_dir: Path) -> list[str]:
    store = UsageStore(data_dir)
    try:
        return [row["request"] for row in store.rows()]
    finally:
        store.close()


@pytest.fixture
def short_busy(monkeypatch):
    monkeypatch.setattr(usage_writer, "BUSY_TIMEOUT", 0.2)


def test_a_row_is_written_off_the_callers_thread(tmp_path) -> None:
    writer = UsageWriter(tmp_path)
    writer.add(_row(1))
    assert writer.flush(10)
    writer.close()
    assert _requests(tmp_path) == ["r1"]


def test_a_locked_database_spools_the_row_and_writes_it_once_free(tmp_path, short_busy) -> None:
    holder = LockHolder(tmp_path)
    writer = UsageWriter(tmp_path)
    try:
        writer.add(_row(1))  # returns at once, lock or not
        assert writer.flush(10)
        assert [row.request for row in spooled_rows(tmp_path)] == ["r1"]
        assert (tmp_path / SPOOL_FILE).stat().st_mode & 0o077 == 0  # private, like the database
    finally:
        holder.release()
    writer.add(_row(2))
    assert writer.flush(10)
    writer.close()
    assert _requests(tmp_path) == ["r1", "r2"]  # the spooled row first, none lost
    assert not (tmp_path / SPOOL_FILE).exists()


def test_the_next_start_imports_the_spool(tmp_path) -> None:
    rows = [_row(1), _row(2)]
    (tmp_path / SPOOL_FILE).write_text(
        "".join(json.dumps(row.__dict__) + "\n" for row in rows) + '{"started": 1'  # cut short
    )
    writer = UsageWriter(tmp_path)
    assert writer.flush(10)
    writer.close()
    assert _requests(tmp_path) == ["r1", "r2"]
    assert not (tmp_path / SPOOL_FILE).exists()


def test_rows_stay_in_memory_while_nothing_can_be_written(tmp_path, caplog) -> None:
    data_dir = tmp_path / "gone"
    data_dir.write_text("")  # not a directory: neither database nor spool can be written
    writer = UsageWriter(data_dir)
    writer.add(_row(1))
    assert writer.flush(10)
    assert "1 row(s) kept in memory" in caplog.text
    data_dir.unlink()
    data_dir.mkdir()  # space again
    writer.add(_row(2))
    assert writer.flush(10)
    writer.close()
    assert _requests(data_dir) == ["r1", "r2"]
