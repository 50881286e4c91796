"""The SDK's agent usage answer built from usage-store rows."""

from __future__ import annotations

from cursor_byok.proxy.agent_usage import usage_answer


def _row(request: str, prompt: int, cached: int, output: int) -> dict:
    return {
        "request": request,
        "input_tokens": prompt,
        "cache_read_tokens": cached,
        "cache_write_tokens": 0,
        "output_tokens": output,
        "reasoning_tokens": 0,
    }


def test_totals_and_one_entry_per_turn() -> None:
    answer = usage_answer([_row("r1", 1000, 400, 20), _row("r2", 500, 0, 10)])
    assert answer["totalUsage"] == {
        "inputTokens": 1100,  # without the cached part
        "outputTokens": 30,
        "cacheReadTokens": 400,
        "cacheWriteTokens": 0,
        "totalTokens": 1530,
        "reasoningTokens": 0,
    }
    assert [r["id"] for r in answer["runs"]] == ["r1", "r2"]
    assert answer["runs"][1]["usage"]["inputTokens"] == 500


def test_run_id_selects_one_turn() -> None:
    answer = usage_answer([_row("r1", 10, 0, 1), _row("r2", 20, 0, 2)], "r2")
    assert [r["id"] for r in answer["runs"]] == ["r2"]
    assert answer["totalUsage"]["inputTokens"] == 20
