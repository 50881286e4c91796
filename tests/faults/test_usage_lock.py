"""Issue 27 item 4 through a real mitmdump: another process holding the usage database's lock
(a DB browser, a backup) neither stalls the proxy nor loses a row. Before, the insert ran on the
event loop with a 5 s busy timeout: every stream froze behind it (a 0.1 s bystander turn took
7.5 s) and the row was lost."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from hardening import MODEL
from hardening import start_proxy
from hardening import write_config

pytestmark = pytest.mark.timeout(120)
HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
"""


class LockHolder:
    """Another process with the database's write lock, until `release()`."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "held"

    def release(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def requests_recorded(path: Path) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)
    try:
        return [r[0] for r in db.execute("SELECT request FROM turns ORDER BY id")]
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


async def rows_for(path: Path, request_ids: list[str], timeout: float = 15) -> list[str]:
    """Wait (at most `timeout`) until every one of `request_ids` has its row."""
    deadline = time.monotonic() + timeout
    while not set(request_ids) <= set(found := requests_recorded(path)):
        if time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)
    return found


WAITING = "rows wait in usage-spool.jsonl"


async def said(proxy, line: str, times: int, timeout: float = 15) -> None:
    """Wait until the proxy's log has `line` `times` times (woken by each line it writes)."""
    await asyncio.to_thread(
        proxy.wait_for_log, lambda lines: "".join(lines).count(line) >= times, timeout
    )


async def turn(proxy, workspace, text: str) -> tuple[str, float, bool]:
    client = CursorLikeClient.through(proxy, workspace, transport="run")
    request_id = str(uuid.uuid4())
    started = time.monotonic()
    try:
        result = await client.turn(
            client.run_request(text, conversation_id=str(uuid.uuid4()), model=MODEL),
            request_id=request_id,
        )
    finally:
        await client.aclose()
    return request_id, time.monotonic() - started, result.end.ok


async def test_a_held_database_lock_stalls_nothing_and_loses_no_row(tmp_path, workspace) -> None:
    database = tmp_path / "proxy" / "data" / "usage.sqlite3"
    async with FakeProvider() as fp:
        for text in ("warm", "first", "bystander", "last"):
            fp.script.text(text)
        config = write_config(tmp_path, fp.base_url)
        proxy = start_proxy(tmp_path, config)
        try:
            warm, _, ok = await turn(proxy, workspace, "warm")
            assert ok and await rows_for(database, [warm])
            holder = LockHolder(database)
            first, _, ok1 = await turn(proxy, workspace, "first")  # its row meets the lock
            bystander, took, ok2 = await turn(proxy, workspace, "bystander")
            await said(proxy, WAITING, 1)  # the lock outlasted the writer's wait: spooled
            holder.release()
            found = await rows_for(database, [warm, first, bystander])
            # held again, and the proxy stops before it is free: the spool keeps the row
            holder = LockHolder(database)
            last, _, ok3 = await turn(proxy, workspace, "last")
            await said(proxy, WAITING, 2)
        finally:
            proxy.stop()
        log = proxy.log()
        holder.release()
        spooled = "".join(  # the spool, or the part a last try at shutdown began to import
            p.read_text() for p in database.parent.glob("usage-spool.*")
        )
        assert last in spooled
        again = start_proxy(tmp_path / "again", config, data_dir=database.parent)
        try:
            after_restart = await rows_for(database, [last])
        finally:
            again.stop()
    assert ok1 and ok2 and ok3
    print(f"bystander turn with the lock held: {took:.2f} s")
    assert took < 2.0, f"the bystander turn took {took:.1f} s"
    assert found == [warm, first, bystander], found
    assert after_restart == [warm, first, bystander, last], after_restart
    assert log.count(WAITING) == 2  # once per locked spell
    assert "is free again: the waiting rows are written" in log
    assert "Traceback" not in log
