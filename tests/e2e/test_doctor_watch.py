"""`doctor --watch` against a real proxy: it returns once a new Agent call arrives.

(Stale records from earlier sessions are covered in tests/test_activity.py with a fake clock.)
"""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
from cursor_client import CursorLikeClient
from mitm import start_mitmdump

from cursor_byok.cli.doctor import check_activity

pytestmark = pytest.mark.timeout(120)


async def test_watch_sees_the_next_turn_through_the_proxy(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path)
    client = CursorLikeClient.through(proxy, workspace)
    waiting = threading.Event()

    def sleep(seconds: float) -> None:
        waiting.set()  # the doctor has taken its baseline and is polling
        threading.Event().wait(seconds)

    try:
        watch = asyncio.create_task(asyncio.to_thread(check_activity, proxy.data_dir, 60, sleep))
        await asyncio.to_thread(waiting.wait, 30)
        assert not watch.done()
        result = await client.turn(
            client.run_request("notes.txt", conversation_id=str(uuid.uuid4()))
        )
        check = await asyncio.wait_for(watch, 30)
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok
    assert check.status == "ok", check
    assert check.title == "a new Agent call arrived"
