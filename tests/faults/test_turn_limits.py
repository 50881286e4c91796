"""Issue 27 item 2 through a real mitmdump: every turn ends. A provider that sends one event and
then only keep-alive comments meets the idle limit (comments reset the read timeout, not it);
one that streams for ever meets the turn's time or output limit. Each ends the turn with a
Connect error naming the limit and how to raise it."""

from __future__ import annotations

import json
import time

import pytest
from fakes.fake_provider import FakeProvider
from hardening import one_turn
from hardening import start_proxy
from hardening import write_config

pytestmark = pytest.mark.timeout(90)


async def test_comments_after_one_event_meet_the_idle_limit(tmp_path, workspace) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.trickle(text="hello", every=0.05)  # then `: keep-alive` every 50 ms
        config = write_config(tmp_path, fp.base_url, provider="idle_timeout = 1")
        proxy = start_proxy(tmp_path, config)
        started = time.monotonic()
        try:
            result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
    took = time.monotonic() - started
    error = result.end.error
    assert error is not None and error.code == "deadline_exceeded", error
    assert "no event from the provider for 1 s" in error.message
    assert "keep-alive comments do not count" in error.message
    assert "idle_timeout in [providers.flaky]" in error.message
    assert result.text == "hello"  # what came before the silence was shown
    assert took < 20, f"the turn took {took:.1f} s"
    assert "Traceback" not in proxy.log()


async def test_a_provider_streaming_for_ever_meets_the_turn_time_limit(tmp_path, workspace) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.endless(text="more ", every=0.01)
        proxy = start_proxy(
            tmp_path,
            write_config(tmp_path, fp.base_url),
            "--set",
            "cursor_byok_turn_timeout_ms=1500",
        )
        try:
            result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
    error = result.end.error
    assert error is not None and error.code == "deadline_exceeded", error
    assert "ran for 1.5 s, the time limit of a turn" in error.message
    assert "--set cursor_byok_turn_timeout_ms=" in error.message
    assert result.text.startswith("more")
    assert "Traceback" not in proxy.log()


def _deltas(total: int, size: int = 1024) -> list[bytes]:
    """`total` bytes of `size`-character text deltas (OpenAI Chat) and no end: only a limit
    ends this turn."""
    event = {"choices": [{"index": 0, "delta": {"content": "y" * size}, "finish_reason": None}]}
    line = b"data: " + json.dumps(event).encode() + b"\n\n"
    return [line * 64] * (total // (64 * size))


async def test_a_provider_streaming_for_ever_meets_the_turn_output_limit(
    tmp_path, workspace
) -> None:
    async with FakeProvider(check_on_exit=False) as fp:
        fp.script.raw(_deltas(16 * 1024 * 1024)).delay = 0
        proxy = start_proxy(
            tmp_path,
            write_config(tmp_path, fp.base_url),
            "--set",
            "cursor_byok_max_turn_output_mb=1",
        )
        try:
            result = await one_turn(proxy, workspace)
        finally:
            proxy.stop()
    error = result.end.error
    assert error is not None and error.code == "resource_exhausted", error
    assert "output passed 1 MiB, the output limit of a turn" in error.message
    assert "--set cursor_byok_max_turn_output_mb=" in error.message
    assert 1 <= len(result.text) / (1024 * 1024) < 4  # ended soon after the limit
    assert "Traceback" not in proxy.log()
