"""The live status shows cached input tokens and the context meter (used/max)."""

from __future__ import annotations

import time
from types import SimpleNamespace

from rich.console import Console

from cursor_byok.agent.turn import UsageTally
from cursor_byok.agent.turn_status import TurnStatus
from cursor_byok.proxy.status import status_table


def test_status_shows_cached_tokens_and_context_use() -> None:
    usage = UsageTally()
    usage.add(input_tokens=5000, output_tokens=100, cache_read_tokens=4600)
    turn = SimpleNamespace(
        usage=usage,
        run_request=SimpleNamespace(conversation_id="conv"),
        transcript=SimpleNamespace(used_tokens=5100, context_window=64000),
        status=TurnStatus(started=time.monotonic() - 1, outcome=None, model="m", current_tool=None),
    )
    live = SimpleNamespace(turn=turn, request_id="req-1", state="running")
    console = Console(width=220, record=True)
    console.print(status_table([live]))
    text = console.export_text()
    assert "4600" in text
    assert "5100/64000 (7%)" in text


def test_status_names_the_model_a_fallback_served_for() -> None:
    turn = SimpleNamespace(
        usage=UsageTally(),
        run_request=SimpleNamespace(conversation_id="conv"),
        transcript=SimpleNamespace(used_tokens=0, context_window=64000),
        status=TurnStatus(
            started=time.monotonic() - 1,
            outcome=None,
            model="Claude Backup",
            fallback_from="OpenAI Primary",
            current_tool=None,
        ),
    )
    live = SimpleNamespace(turn=turn, request_id="req-1", state="running")
    console = Console(width=220, record=True)
    console.print(status_table([live]))
    assert "Claude Backup ← OpenAI Primary" in console.export_text()


def test_the_rate_is_live_while_a_call_streams() -> None:
    """Issue 33 item 12: most providers report output tokens at the end of a call; until then
    the rate counts what streamed (~4 characters a token), then the reported tokens."""
    from types import SimpleNamespace

    from cursor_byok.agent.turn import UsageTally
    from cursor_byok.proxy.status import _rate

    usage = UsageTally()
    turn = SimpleNamespace(usage=usage, status=TurnStatus(started=0.0))
    assert _rate(turn, 10.0) == "0.0"
    usage.streaming_chars += 400  # 100 tokens streamed, none reported yet
    assert _rate(turn, 10.0) == "10.0"
    usage.add(output_tokens=90)  # the call's report replaces the estimate
    assert usage.streaming_chars == 0 and _rate(turn, 10.0) == "9.0"
