"""The editor features' calls as the live status counts them (store/feature_calls.py)."""

from __future__ import annotations

from cursor_byok.store.feature_calls import FeatureCalls


def test_calls_are_counted_per_kind_and_model_newest_first() -> None:
    ticks = iter(range(100))
    calls = FeatureCalls(clock=lambda: next(ticks))
    calls.started("cmd_k", "m")
    assert [(r.kind, r.running, r.calls) for r in calls.rows()] == [("cmd_k", 1, 0)]
    calls.ended("cmd_k", "m", usage={"input_tokens": 100, "output_tokens": 7}, duration=0.8,
                first_text=0.3)  # fmt: skip
    calls.started("terminal", "m")
    calls.ended("terminal", "m", usage={}, duration=1.5, first_text=None, problem="unavailable")
    calls.started("cmd_k", "m")
    calls.ended("cmd_k", "m", usage={"input_tokens": 50, "output_tokens": 3}, duration=0.5,
                first_text=0.2)  # fmt: skip
    cmd_k, terminal = calls.rows()
    assert (cmd_k.kind, cmd_k.calls, cmd_k.running) == ("cmd_k", 2, 0)
    assert cmd_k.tokens["input_tokens"] == 150 and cmd_k.tokens["output_tokens"] == 10
    assert (cmd_k.last_duration, cmd_k.last_first_text) == (0.5, 0.2)
    assert (terminal.calls, terminal.last_problem, terminal.last_first_text) == (
        1,
        "unavailable",
        None,
    )


def test_a_call_that_never_started_is_counted_without_a_running_one() -> None:
    calls = FeatureCalls()
    calls.ended("commit_message", "m", usage={}, duration=0.0, first_text=None, problem="x",
                was_running=False)  # fmt: skip
    (row,) = calls.rows()
    assert (row.calls, row.running) == (1, 0)
