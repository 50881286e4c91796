"""Tab's bookkeeping (proxy/tab.py): one call per editor, the newest wins, nothing kept after a
call; the counts the live status and the doctor show (store/census.py)."""

from __future__ import annotations

import asyncio

from cursor_byok.proxy.tab import Slots
from cursor_byok.proxy.tab import TabStats
from cursor_byok.store.census import Census
from cursor_byok.store.census import census_lines
from cursor_byok.store.census import since


async def test_a_newer_call_cancels_the_older_and_nothing_is_kept():
    slots = Slots()
    hang = asyncio.Event()
    first = asyncio.create_task(hang.wait())
    call1, older = slots.start("editor", "conn1", first)
    assert older is None
    second = asyncio.create_task(hang.wait())
    call2, older = slots.start("editor", "conn1", second)
    assert older is first
    await asyncio.wait([first])
    assert first.cancelled() and not second.done()
    slots.end("editor", call1)  # the older one ending leaves the newer in place
    assert len(slots) == 1
    assert slots.client_gone("conn1") == 1  # the connection closed: the newer is cancelled
    await asyncio.wait([second])
    assert second.cancelled()
    slots.end("editor", call2)
    assert len(slots) == 0 and not slots.by_client


def test_tab_counts_in_the_census_and_the_status_line():
    census = Census()
    before = census.snapshot()
    census.tab(requests=3, suggestions=1, cancelled=2, input_tokens=40, output_tokens=5)
    census.rpc("/aiserver.v1.AiService/StreamCpp", "served")
    new = since(census.snapshot(), before)
    assert new["tab"] == {
        "requests": 3,
        "suggestions": 1,
        "cancelled": 2,
        "input_tokens": 40,
        "output_tokens": 5,
    }
    lines = census_lines(new)
    assert any(
        line.startswith("Tab on your model: 3 request(s), 1 suggestion(s)") for line in lines
    )
    stats = TabStats(model="Qwen FIM", requests=3, suggestions=1, cancelled=2)
    assert stats.line().startswith("Tab on Qwen FIM: 3 request(s), 1 suggestion(s), 2 cancelled")
    assert TabStats().line() == ""


def test_tab_to_cursor_is_said_plainly():
    census = Census()
    census.rpc("/aiserver.v1.AiService/StreamCpp", "passed")
    assert any(
        line.startswith("Tab to Cursor: 1 request(s)") for line in census_lines(census.snapshot())
    )
