"""`cursor-byok usage`: the per-turn ledger summed per conversation."""

from __future__ import annotations

import stat

from cursor_byok.usage_log import append
from cursor_byok.usage_log import per_conversation


def test_usage_is_summed_per_conversation_and_printed(tmp_path, capsys) -> None:
    for i in range(3):
        append(
            tmp_path,
            {
                "time": f"2026-01-01 00:00:0{i}",
                "conversation": "c1",
                "model": "m",
                "input": 1000,
                "cached": 900,
                "output": 10,
                "used": 1010 + i,
                "max": 8000,
            },
        )
    append(
        tmp_path,
        {
            "time": "2026-01-01 00:00:09",
            "conversation": "c2",
            "model": "m",
            "input": 50,
            "cached": 0,
            "output": 5,
            "used": 55,
            "max": 8000,
        },
    )
    (tmp_path / "usage.jsonl").open("a").write("not json\n")
    assert stat.S_IMODE((tmp_path / "usage.jsonl").stat().st_mode) == 0o600
    rows = per_conversation(tmp_path)
    assert [r.conversation for r in rows] == ["c2", "c1"]
    c1 = rows[1]
    assert (c1.turns, c1.input, c1.cached, c1.output, c1.used) == (3, 3000, 2700, 30, 1012)
